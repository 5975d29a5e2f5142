#include "batching/request_queue.hpp"

#include <algorithm>

namespace attend::runtime {

RequestQueue::RequestQueue(const RequestBatchLimits& limits) : limits_(limits), max_tokens_(limits.max_tokens) {}

void RequestQueue::announce() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++announced_;
}

void RequestQueue::withdraw() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    announced_ = std::max<std::int64_t>(0, announced_ - 1);
  }
  changed_.notify_all();
}

bool RequestQueue::push(std::shared_ptr<QueuedRequest> request, bool announced) {
  std::vector<std::shared_ptr<QueuedRequest>> one;
  one.push_back(std::move(request));
  return push_all(std::move(one), announced);
}

bool RequestQueue::push_all(std::vector<std::shared_ptr<QueuedRequest>> requests, bool announced) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (announced) announced_ = std::max<std::int64_t>(0, announced_ - 1);
    if (closed_) return false;
    const auto now = std::chrono::steady_clock::now();
    for (auto& r : requests) {
      r->queued = now;
      queue_.push_back(std::move(r));
    }
  }
  changed_.notify_all();
  return true;
}

void RequestQueue::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

std::size_t RequestQueue::depth() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

void RequestQueue::set_lanes(int lanes, std::int64_t lane_max_tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  lanes_ = std::max(1, lanes);
  max_tokens_ = lanes_ > 1 && lane_max_tokens > 0 ? std::min(limits_.max_tokens, lane_max_tokens) : limits_.max_tokens;
}

std::int64_t RequestQueue::max_batch_tokens() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return max_tokens_;
}

int RequestQueue::free_lanes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_lanes_;
}

bool RequestQueue::expecting_company(const RequestLane& lane, std::size_t picked) const {
  if (announced_ > 0) return true;
  // The lane's last clients coming back: only with one lane, and only if the queue
  // filled right after the lane freed (a lane idle for a while has no one coming back).
  return lanes_ == 1 && picked < lane.last_batch_requests + lane.queued_when_done &&
         queue_.front()->queued - lane.free_since < limits_.wait;
}

void RequestQueue::batch_done(RequestLane& lane) {
  std::lock_guard<std::mutex> lock(mutex_);
  lane.queued_when_done = queue_.size();
}

std::vector<std::shared_ptr<QueuedRequest>> RequestQueue::next_batch(std::vector<std::shared_ptr<QueuedRequest>>* dropped) {
  return next_batch(only_lane_, dropped);
}

std::vector<std::shared_ptr<QueuedRequest>> RequestQueue::next_batch(RequestLane& lane,
                                                                     std::vector<std::shared_ptr<QueuedRequest>>* dropped) {
  std::unique_lock<std::mutex> lock(mutex_);
  lane.free_since = std::chrono::steady_clock::now();
  ++free_lanes_;
  struct Busy {  // however this call ends, the lane is no longer free
    int& free;
    ~Busy() { --free; }
  } busy{free_lanes_};
  for (;;) {
    // Requests nobody waits for any more are dropped here, before they cost anything.
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (!(*it)->abandoned()) {
        ++it;
        continue;
      }
      if (dropped) dropped->push_back(std::move(*it));
      it = queue_.erase(it);
    }
    if (queue_.empty()) {
      // The dropped are reported at once: their clients' calls end only when the caller
      // hears of them, and a shutdown waits for every call to end before it closes.
      if (closed_ || (dropped && !dropped->empty())) return {};
      changed_.wait(lock);
      continue;
    }
    // The oldest request leads; those of its group follow in order while they fit.
    const std::string& group = queue_.front()->group;
    std::vector<std::size_t> picked{0};
    std::vector<std::int64_t> tokens_so_far{queue_.front()->tokens};
    bool full = false;
    for (std::size_t i = 1; i < queue_.size(); ++i) {
      if (limits_.max_requests > 0 && static_cast<std::int64_t>(picked.size()) >= limits_.max_requests) break;
      if (queue_[i]->group != group) continue;
      if (tokens_so_far.back() + queue_[i]->tokens > max_tokens_) {
        full = true;
        break;
      }
      tokens_so_far.push_back(tokens_so_far.back() + queue_[i]->tokens);
      picked.push_back(i);
    }
    const std::int64_t tokens = tokens_so_far.back();
    full = full || tokens >= max_tokens_ ||
           (limits_.max_requests > 0 && static_cast<std::int64_t>(picked.size()) >= limits_.max_requests);
    const auto now = std::chrono::steady_clock::now();
    const auto deadline = std::max(queue_.front()->queued, lane.free_since) + limits_.wait;
    if (full || closed_ || !expecting_company(lane, picked.size()) || now >= deadline) {
      // Other lanes free as well: this one takes its share of the tokens, they the rest.
      if (free_lanes_ > 1) {
        // The next request joins while at least half of it fits in the share: two halves
        // of one request go to two lanes, not both to the first.
        const std::int64_t share = (tokens + free_lanes_ - 1) / free_lanes_;
        std::size_t n = 1;
        while (n < picked.size() && 2 * tokens_so_far[n - 1] + queue_[picked[n]]->tokens <= 2 * share) ++n;
        picked.resize(n);
      }
      lane.last_batch_requests = picked.size();
      lane.queued_when_done = 0;  // until batch_done says
      std::vector<std::shared_ptr<QueuedRequest>> batch;
      batch.reserve(picked.size());
      for (std::size_t i : picked) batch.push_back(std::move(queue_[i]));
      for (auto it = picked.rbegin(); it != picked.rend(); ++it) queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(*it));
      if (!queue_.empty()) changed_.notify_all();  // the rest is another free lane's
      // Nothing left for the other free lanes (this one among free_lanes_): their
      // threads are this batch's.
      lane.lanes_of_threads = queue_.empty() && announced_ == 0 ? free_lanes_ : 1;
      return batch;
    }
    // Company is on its way: wait for it (a push, a withdrawal), at most until the
    // deadline.
    changed_.wait_until(lock, deadline);
  }
}

}  // namespace attend::runtime
