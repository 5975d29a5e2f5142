// The server's Prometheus metrics (GET /metrics, text exposition format 0.0.4):
//   attend_requests_total{route,status}             counter
//   attend_request_duration_seconds{route}          histogram (arrival to answer)
//   attend_queue_duration_seconds{model}            histogram (queued to batched)
//   attend_inference_duration_seconds{model}        histogram (one batch's engine call)
//   attend_batch_size{model}                        histogram (sequences per batch)
//   attend_batch_tokens{model}                      histogram (tokens per batch)
//   attend_sequences_total{model}, attend_tokens_total{model}   counters (rate(): tokens/s)
//   attend_dropped_requests_total{model}            counter (clients gone before their batch)
//   attend_tokens_per_second{model}                 gauge (the last batch's engine speed)
//   attend_queue_depth{model}, attend_model_ready{model}, attend_requests_in_flight,
//   attend_connections                              gauges (read when scraped)
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace attend::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double value);
  // Appends the _bucket/_sum/_count lines of `name` with `labels` ("model=\"x\"").
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // one per bound, then +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

struct BatchRecord {
  std::int64_t sequences = 0, tokens = 0, dropped = 0;
  double inference_seconds = 0;
  std::vector<double> queue_seconds;  // one per request of the batch
};

class Metrics {
 public:
  void request(const std::string& route, int status, double seconds);
  void batch(const std::string& model, const BatchRecord& record);
  void dropped(const std::string& model, std::int64_t requests);

  // Gauges read at scrape time: name → (labels → value).
  using Gauges = std::vector<std::pair<std::string, std::vector<std::pair<std::string, double>>>>;
  std::string render(const Gauges& gauges) const;

 private:
  struct ModelFigures {
    Histogram queue{{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}};
    Histogram inference{{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}};
    Histogram sizes{{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}};
    Histogram tokens{{16, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768}};
    std::uint64_t sequences = 0, token_total = 0, dropped = 0;
    double tokens_per_second = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::map<std::string, Histogram> durations_;
  std::map<std::string, ModelFigures> models_;
};

// Escapes a label value for the exposition format.
std::string label_value(const std::string& value);

}  // namespace attend::server
