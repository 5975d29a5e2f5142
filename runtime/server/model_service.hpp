// One served model: loaded in the background, then fed by its request queue — lanes
// (threads; as many as the model's thread split runs batches at once: --inter-threads)
// take the batches the queue forms (runtime/batching/request_queue.hpp), each lane
// running its batch as one engine call on its own intra-op threads, then hand every
// request its results on an HTTP thread.
//
// Why lanes rather than one engine call at a time with every thread: a call whose work
// fits in one of the engine's batches (any request alone, or a few short ones) runs
// that batch on all the threads at once, and on few cores small batches split poorly
// over threads — all-MiniLM-L6-v2 int8 on 2 cores runs at ~330 sentences/s with one
// batch over 2 threads against ~580 with two batches of 1 thread each — so a server
// fed one request at a time ran at the worse rate (docs/performance.md).
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
  int lane = 0;     // which lane ran the batch
  int threads = 0;  // its compute threads (a lane's, or more where other lanes were idle)
  int parts = 1;  // queue entries the request was cut into (one per lane: encoder_service.hpp)
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
  // Batches run at once (threads taking batches), and threads of each engine call.
  int lanes() const { return lanes_; }
  int threads_per_lane() const { return threads_per_lane_; }

  // Loads the model (on the caller's thread), then starts taking batches. Throws the
  // load error.
  void load_and_start(Post post, Metrics* metrics);
  // Lets the queued work finish (close, then join); new jobs are refused.
  void stop();

  // Queues a job; false if the model is stopping. The route announced it first
  // (queue().announce()) when it began reading the request.
  virtual bool submit(std::shared_ptr<Job> job);
  runtime::RequestQueue& queue() { return queue_; }

 protected:
  virtual void load() = 0;
  // Runs one batch (jobs of one group) on `lane`'s thread with `threads` compute threads
  // and hands each job its outcome through post(). Lanes call it at once: it must be
  // thread-safe. `threads` is the lane's (threads_per_lane), or more: a batch that left
  // the queue with nothing else to do for the lanes then idle takes their threads too
  // (RequestLane::lanes_of_threads) — one client's lone requests run on every thread.
  virtual void run_batch(const std::vector<std::shared_ptr<Job>>& jobs, int lane, int threads) = 0;
  // The model's thread split, set by the derived constructor: `lanes` batches at once,
  // each on `threads_per_lane` threads.
  // With several lanes, a lane's batch holds at most lane_max_tokens (0: --max-batch-tokens).
  void set_lanes(int lanes, int threads_per_lane, std::int64_t lane_max_tokens = 0) {
    lanes_ = lanes, threads_per_lane_ = threads_per_lane, lane_max_tokens_ = lane_max_tokens;
  }
  void post(std::function<void()> task) const { post_(std::move(task)); }
  // run_batch's engine call on `lane` is over (it started at `started` and took
  // `seconds`), its answers not yet posted: tells the queue (RequestQueue::batch_done:
  // who was left waiting meanwhile) and returns the timing of each job.
  std::vector<JobTiming> batch_done(const std::vector<std::shared_ptr<Job>>& jobs, std::chrono::steady_clock::time_point started,
                                    double seconds, std::int64_t sequences, int lane, int threads);
  Metrics* metrics() const { return metrics_; }

 private:
  void take_batches(int lane);

  std::string name_, directory_;
  runtime::RequestQueue queue_;
  std::atomic<bool> ready_{false};
  Post post_;
  Metrics* metrics_ = nullptr;
  int lanes_ = 1, threads_per_lane_ = 1;
  std::int64_t lane_max_tokens_ = 0;
  std::vector<runtime::RequestLane> lane_states_;  // lane i's, used by its thread only
  std::vector<std::thread> lane_threads_;
};

}  // namespace attend::server
