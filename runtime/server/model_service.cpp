#include "server/model_service.hpp"

namespace attend::server {

ModelService::ModelService(std::string name, std::string directory, const runtime::RequestBatchLimits& limits)
    : name_(std::move(name)), directory_(std::move(directory)), queue_(limits) {}

ModelService::~ModelService() { stop(); }

void ModelService::load_and_start(Post post, Metrics* metrics) {
  post_ = std::move(post);
  metrics_ = metrics;
  load();
  ready_.store(true);
  queue_.set_lanes(lanes_, lane_max_tokens_);
  lane_states_.resize(static_cast<std::size_t>(lanes_));
  for (int lane = 0; lane < lanes_; ++lane) lane_threads_.emplace_back([this, lane] { take_batches(lane); });
}

void ModelService::stop() {
  queue_.close();
  for (auto& t : lane_threads_)
    if (t.joinable()) t.join();
}

bool ModelService::submit(std::shared_ptr<Job> job) { return queue_.push(std::move(job)); }

std::vector<JobTiming> ModelService::batch_done(const std::vector<std::shared_ptr<Job>>& jobs,
                                                std::chrono::steady_clock::time_point started, double seconds,
                                                std::int64_t sequences, int lane, int threads) {
  queue_.batch_done(lane_states_[static_cast<std::size_t>(lane)]);
  std::vector<JobTiming> out;
  for (const auto& job : jobs) {
    JobTiming t;
    t.queue_seconds = std::chrono::duration<double>(started - job->queued).count();
    t.inference_seconds = seconds;
    t.batch_sequences = sequences;
    t.batch_requests = static_cast<std::int64_t>(jobs.size());
    t.lane = lane;
    t.threads = threads;
    out.push_back(t);
  }
  return out;
}

void ModelService::take_batches(int lane) {
  runtime::RequestLane& state = lane_states_[static_cast<std::size_t>(lane)];
  for (;;) {
    std::vector<std::shared_ptr<runtime::QueuedRequest>> dropped;
    auto batch = queue_.next_batch(state, &dropped);
    if (!dropped.empty()) {
      if (metrics_) metrics_->dropped(name_, static_cast<std::int64_t>(dropped.size()));
      for (auto& d : dropped) {
        auto job = std::static_pointer_cast<Job>(d);
        if (job->on_dropped) post(std::move(job->on_dropped));
      }
    }
    if (batch.empty()) {
      if (dropped.empty()) return;  // closed and drained
      continue;
    }
    std::vector<std::shared_ptr<Job>> jobs;
    jobs.reserve(batch.size());
    for (auto& r : batch) jobs.push_back(std::static_pointer_cast<Job>(std::move(r)));
    run_batch(jobs, lane, threads_per_lane_ * state.lanes_of_threads);
  }
}

}  // namespace attend::server
