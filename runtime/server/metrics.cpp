#include "server/metrics.hpp"

#include <charconv>

namespace attend::server {
namespace {

std::string number(double v) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return ec == std::errc() ? std::string(buffer, end) : "0";
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void sample(std::string& out, const std::string& name, const std::string& labels, double value) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(number(value)).append("\n");
}

std::string model_label(const std::string& model) { return "model=\"" + label_value(model) + "\""; }

}  // namespace

std::string label_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Histogram::observe(double value) {
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  const std::string prefix = labels.empty() ? "" : labels + ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    sample(out, name + "_bucket", prefix + "le=\"" + number(bounds_[i]) + "\"", static_cast<double>(cumulative));
  }
  sample(out, name + "_bucket", prefix + "le=\"+Inf\"", static_cast<double>(count_));
  sample(out, name + "_sum", labels, sum_);
  sample(out, name + "_count", labels, static_cast<double>(count_));
}

void Metrics::request(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{route, status}];
  auto it = durations_.find(route);
  if (it == durations_.end())
    it = durations_.emplace(route, Histogram({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}))
             .first;
  it->second.observe(seconds);
}

void Metrics::batch(const std::string& model, const BatchRecord& r) {
  std::lock_guard<std::mutex> lock(mutex_);
  ModelFigures& m = models_[model];
  for (double q : r.queue_seconds) m.queue.observe(q);
  m.inference.observe(r.inference_seconds);
  m.sizes.observe(static_cast<double>(r.sequences));
  m.tokens.observe(static_cast<double>(r.tokens));
  m.sequences += static_cast<std::uint64_t>(r.sequences);
  m.token_total += static_cast<std::uint64_t>(r.tokens);
  if (r.inference_seconds > 0) m.tokens_per_second = static_cast<double>(r.tokens) / r.inference_seconds;
}

void Metrics::dropped(const std::string& model, std::int64_t requests) {
  std::lock_guard<std::mutex> lock(mutex_);
  models_[model].dropped += static_cast<std::uint64_t>(requests);
}

std::string Metrics::render(const Gauges& gauges) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  header(out, "attend_requests_total", "counter", "HTTP requests answered, by route and status");
  for (const auto& [key, count] : requests_)
    sample(out, "attend_requests_total",
           "route=\"" + label_value(key.first) + "\",status=\"" + std::to_string(key.second) + "\"",
           static_cast<double>(count));
  header(out, "attend_request_duration_seconds", "histogram", "Seconds from a request's first byte to its answer");
  for (const auto& [route, h] : durations_) h.render(out, "attend_request_duration_seconds", "route=\"" + label_value(route) + "\"");

  header(out, "attend_queue_duration_seconds", "histogram", "Seconds a request waited in its model's queue");
  for (const auto& [model, m] : models_) m.queue.render(out, "attend_queue_duration_seconds", model_label(model));
  header(out, "attend_inference_duration_seconds", "histogram", "Seconds of one batch's engine call");
  for (const auto& [model, m] : models_) m.inference.render(out, "attend_inference_duration_seconds", model_label(model));
  header(out, "attend_batch_size", "histogram", "Sequences (texts, pairs, sentences) per batch");
  for (const auto& [model, m] : models_) m.sizes.render(out, "attend_batch_size", model_label(model));
  header(out, "attend_batch_tokens", "histogram", "Tokens per batch");
  for (const auto& [model, m] : models_) m.tokens.render(out, "attend_batch_tokens", model_label(model));
  header(out, "attend_sequences_total", "counter", "Sequences computed");
  for (const auto& [model, m] : models_) sample(out, "attend_sequences_total", model_label(model), static_cast<double>(m.sequences));
  header(out, "attend_tokens_total", "counter", "Tokens computed (rate() gives tokens/s)");
  for (const auto& [model, m] : models_) sample(out, "attend_tokens_total", model_label(model), static_cast<double>(m.token_total));
  header(out, "attend_dropped_requests_total", "counter", "Requests dropped before their batch because the client had gone");
  for (const auto& [model, m] : models_) sample(out, "attend_dropped_requests_total", model_label(model), static_cast<double>(m.dropped));
  header(out, "attend_tokens_per_second", "gauge", "Tokens per second of the engine in the last batch");
  for (const auto& [model, m] : models_) sample(out, "attend_tokens_per_second", model_label(model), m.tokens_per_second);

  for (const auto& [name, values] : gauges) {
    header(out, name.c_str(), "gauge", name == "attend_queue_depth"          ? "Requests waiting in a model's queue"
                                       : name == "attend_free_lanes"         ? "A model's lanes waiting for work: its engine threads idle now"
                                       : name == "attend_model_ready"        ? "1 once the model is loaded"
                                       : name == "attend_requests_in_flight" ? "Requests accepted and not yet answered"
                                                                             : "Open HTTP connections");
    for (const auto& [labels, value] : values) sample(out, name, labels, value);
  }
  return out;
}

}  // namespace attend::server
