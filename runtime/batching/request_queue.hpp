// Dynamic batching across callers: requests that arrive one by one, from many clients,
// wait here and leave in batches by tokens, so that an engine runs one large call
// instead of many tiny ones (the server's reason to be: attend serve).
//
// The policy, each time the engine is free (next_batch):
//   - the oldest request leads the batch; requests of its group (those that can share
//     an engine call: the same task and options) join it in arrival order while the
//     batch stays within max_tokens and max_requests — a request larger than max_tokens
//     still goes, alone;
//   - the batch leaves at once when it is full, or when no company is expected; it is
//     expected while requests are announced (being read or tokenized), and while the
//     batch has fewer requests than the last one had and the engine freed up only just
//     before they came (the clients the last batch answered are sending their next
//     requests: without this wait, load splits into a large batch and a trail of tiny
//     ones). It waits at most `wait` from when both the engine was free and a request
//     was there, so a lone client never waits and no request waits longer than that;
//   - requests whose client has gone (abandoned) are dropped, never run.
// Requests of other groups keep their place: the next batch is led by the oldest left.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace attend::runtime {

// One caller's request: its size, its group, and whether anyone still wants the answer.
struct QueuedRequest {
  virtual ~QueuedRequest() = default;
  virtual bool abandoned() const = 0;

  std::int64_t tokens = 0;      // what the request costs in the batch's budget
  std::string group;            // only requests of the same group share a batch
  std::chrono::steady_clock::time_point queued;  // set by push
};

struct RequestBatchLimits {
  std::int64_t max_tokens = 16384;
  std::int64_t max_requests = 0;             // 0: no cap
  std::chrono::microseconds wait{2000};      // the longest a batch waits for company
};

class RequestQueue {
 public:
  explicit RequestQueue(const RequestBatchLimits& limits);

  // A request is on its way (announce), and has arrived (push) or will not (withdraw).
  // While some are announced, a batch that is not full waits for them (up to `wait`).
  void announce();
  void withdraw();
  // Queues a request (push withdraws one announcement when `announced`). Returns false,
  // queuing nothing, once the queue is closed.
  bool push(std::shared_ptr<QueuedRequest> request, bool announced = true);

  // Blocks until a batch is ready, by the policy above; empty once the queue is closed
  // and drained. The abandoned requests it skips go to `dropped` (when given), so that
  // their callers can be told — at once: with nothing else queued it returns an empty
  // batch rather than wait holding them.
  std::vector<std::shared_ptr<QueuedRequest>> next_batch(std::vector<std::shared_ptr<QueuedRequest>>* dropped = nullptr);

  // No more requests: next_batch hands out what is queued, then returns empty.
  void close();
  std::size_t depth() const;

 private:
  bool expecting_company(std::size_t picked) const;

  RequestBatchLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<QueuedRequest>> queue_;
  std::int64_t announced_ = 0;
  bool closed_ = false;
  std::size_t last_batch_requests_ = 0;
  std::chrono::steady_clock::time_point free_since_;  // when next_batch was last called
};

}  // namespace attend::runtime
