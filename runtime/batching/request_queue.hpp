// Dynamic batching across callers: requests that arrive one by one, from many clients,
// wait here and leave in batches by tokens, so that an engine runs one large call
// instead of many tiny ones (the server's reason to be: attend serve).
//
// The engine may run several batches at once, each on its own threads (lanes: the
// server's --inter-threads); each lane that is free asks for its next batch
// (next_batch), and the policy is, for that lane:
//   - the oldest request leads the batch; requests of its group (those that can share
//     an engine call: the same task and options) join it in arrival order while the
//     batch stays within max_tokens and max_requests — a request larger than max_tokens
//     still goes, alone;
//   - the batch leaves at once when it is full, or when no company is expected; it is
//     expected while requests are announced (being read or tokenized), and — with one
//     lane only — while the batch has fewer requests than the last one had plus those
//     that were queued when it was done (batch_done), and the lane freed up only just
//     before they came (the clients its last batch answered are sending their next
//     requests: without this wait, load on one lane splits into a large batch and a
//     trail of tiny ones, each holding up all the threads). The queued ones count: a
//     client that missed a batch by a millisecond waits in the queue through the whole
//     next one, and were the lane to expect only the clients that batch answered, it
//     would leave without the next straggler too — 16 one-sentence translation clients
//     settled into batches of 13 and 14, never 16 again (docs/performance.md, issue 32).
//     Only those queued before the answers went out: a request that came after may be
//     an answered client's already. With
//     several lanes a free lane does not wait for them: the requests that come while it
//     runs go to the next lane that frees up, and a lane waiting idle was measured to
//     cost more than the larger batch gains (docs/performance.md). A batch waits at most
//     `wait` from when both the lane was free and a request was there, so a lone client
//     never waits and no request waits longer than that;
//   - when it leaves while other lanes are free too, it takes its share only (the
//     batch's tokens over the free lanes: requests while at least half of the next one
//     fits, at least one) and the other lanes take the rest at once: work queued while every lane was busy runs on all of them
//     rather than on one while the others idle;
//   - a batch that leaves with nothing else queued or on its way may use the threads of
//     the lanes free at that moment too (RequestLane::lanes_of_threads): they have no
//     work, and a lone batch on a part of the threads ran at 82% of the old one-lane
//     server's rate (1 client, 1 sentence per request). A request that comes while it
//     runs goes to a free lane all the same (the cores are shared for that while);
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

// What the policy remembers of one lane: its last batch, and since when it is free.
struct RequestLane {
  std::size_t last_batch_requests = 0;
  // Requests that were waiting when the lane's last batch was done (batch_done; 0 if
  // not told): clients that missed it, besides the ones it answered.
  std::size_t queued_when_done = 0;
  std::chrono::steady_clock::time_point free_since;
  // Whose threads the last batch may use: its lane's, and those of the lanes that were
  // free when it left with nothing else queued or announced (≥ 1).
  int lanes_of_threads = 1;
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
  // Several at once, in order (one announcement withdrawn when `announced`): no lane sees
  // some of them without the others.
  bool push_all(std::vector<std::shared_ptr<QueuedRequest>> requests, bool announced = true);

  // Blocks until a batch is ready for `lane`, by the policy above; empty once the queue
  // is closed and drained. The abandoned requests it skips go to `dropped` (when given),
  // so that their callers can be told — at once: with nothing else queued it returns an
  // empty batch rather than wait holding them. Several lanes may wait at once, each on
  // its own thread with its own RequestLane.
  std::vector<std::shared_ptr<QueuedRequest>> next_batch(RequestLane& lane,
                                                         std::vector<std::shared_ptr<QueuedRequest>>* dropped = nullptr);
  // The same for a queue with one consumer (its lane kept here).
  std::vector<std::shared_ptr<QueuedRequest>> next_batch(std::vector<std::shared_ptr<QueuedRequest>>* dropped = nullptr);
  // `lane`'s batch is computed and its answers are about to go out: what is queued now
  // came while it ran (see the policy above).
  void batch_done(RequestLane& lane);

  // How many lanes take batches (1 unless said; before the first next_batch), and with
  // several, the most tokens of one lane's batch (0: max_tokens) — beyond what the engine
  // runs at full speed a larger batch only keeps its clients waiting while other lanes,
  // done with theirs, idle.
  void set_lanes(int lanes, std::int64_t lane_max_tokens = 0);
  // No more requests: next_batch hands out what is queued, then returns empty.
  void close();
  std::size_t depth() const;
  // Lanes inside next_batch now (free, waiting for work or company).
  int free_lanes() const;
  // The most tokens one batch takes (a lane's cap where there are several).
  std::int64_t max_batch_tokens() const;

 private:
  bool expecting_company(const RequestLane& lane, std::size_t picked) const;

  RequestBatchLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<QueuedRequest>> queue_;
  std::int64_t announced_ = 0;
  bool closed_ = false;
  int lanes_ = 1, free_lanes_ = 0;
  std::int64_t max_tokens_ = 0;  // of one batch: limits_.max_tokens, or less with several lanes
  RequestLane only_lane_;  // next_batch without a lane
};

}  // namespace attend::runtime
