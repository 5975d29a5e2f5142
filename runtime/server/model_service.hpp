// One served model: loaded in the background, then fed by its request queue — a thread
// per model takes the batches the queue forms (runtime/batching/request_queue.hpp) and
// runs each as one engine call, with the engine's own packing and thread split (the ones
// `attend embed` and `attend translate` use), then hands every request its results on
// an HTTP thread.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "batching/request_queue.hpp"
#include "server/http_exchange.hpp"
#include "server/metrics.hpp"

namespace attend::server {

// Runs a task on an HTTP thread (HttpListener::post).
using Post = std::function<void(std::function<void()>)>;

// Where a request's time went, for its log line and its metrics.
struct JobTiming {
  double queue_seconds = 0, inference_seconds = 0;
  std::int64_t batch_sequences = 0, batch_requests = 0;
};

// A request's work in a model's queue. Its client may go (exchange abandoned): the queue
// then drops it and on_dropped tells the route.
struct Job : runtime::QueuedRequest {
  std::shared_ptr<Exchange> exchange;
  std::function<void()> on_dropped;
  bool abandoned() const override { return exchange && exchange->abandoned(); }
};

class ModelService {
 public:
  ModelService(std::string name, std::string directory, const runtime::RequestBatchLimits& limits);
  virtual ~ModelService();
  ModelService(const ModelService&) = delete;
  ModelService& operator=(const ModelService&) = delete;

  const std::string& name() const { return name_; }
  const std::string& directory() const { return directory_; }
  // "embedding", "classifier", "reranker" or "translation" (known once loaded).
  virtual std::string kind() const = 0;
  bool ready() const { return ready_.load(); }

  // Loads the model (on the caller's thread), then starts taking batches. Throws the
  // load error.
  void load_and_start(Post post, Metrics* metrics);
  // Lets the queued work finish (close, then join); new jobs are refused.
  void stop();

  // Queues a job; false if the model is stopping. The route announced it first
  // (queue().announce()) when it began reading the request.
  bool submit(std::shared_ptr<Job> job);
  runtime::RequestQueue& queue() { return queue_; }

 protected:
  virtual void load() = 0;
  // Runs one batch (jobs of one group) and hands each job its outcome through post().
  virtual void run_batch(const std::vector<std::shared_ptr<Job>>& jobs) = 0;
  void post(std::function<void()> task) const { post_(std::move(task)); }
  // Timing of each job of a batch that started at `started` and took `seconds`.
  static std::vector<JobTiming> timings(const std::vector<std::shared_ptr<Job>>& jobs, std::chrono::steady_clock::time_point started,
                                        double seconds, std::int64_t sequences);
  Metrics* metrics() const { return metrics_; }

 private:
  void take_batches();

  std::string name_, directory_;
  runtime::RequestQueue queue_;
  std::atomic<bool> ready_{false};
  Post post_;
  Metrics* metrics_ = nullptr;
  std::thread batcher_;
};

}  // namespace attend::server
