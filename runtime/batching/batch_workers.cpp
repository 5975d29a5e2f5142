#include "batching/batch_workers.hpp"

namespace attend::runtime {

BatchWorkers::BatchWorkers(int workers) {
  for (int w = 1; w < workers; ++w) threads_.emplace_back([this, w] { work(w); });
}

BatchWorkers::~BatchWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void BatchWorkers::run(std::int64_t tasks, const std::function<void(std::int64_t, int)>& task, int use) {
  if (tasks <= 0) return;
  if (use <= 0 || use > workers()) use = workers();
  if (use == 1 || tasks == 1) {  // nothing to share: no hand-over cost
    for (std::int64_t i = 0; i < tasks; ++i) task(i, 0);
    return;
  }
  // Another call holds the workers: this one runs on its own thread rather than wait,
  // so callers on several threads still proceed in parallel.
  std::unique_lock<std::mutex> one_run(run_mutex_, std::try_to_lock);
  if (!one_run.owns_lock()) {
    for (std::int64_t i = 0; i < tasks; ++i) task(i, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    tasks_ = tasks;
    next_ = 0;
    taking_ = use;
    error_ = nullptr;
    busy_ = static_cast<int>(threads_.size());
    ++generation_;
  }
  wake_.notify_all();
  take_tasks(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return busy_ == 0; });
  task_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

// Takes tasks until none is left (or one has failed).
void BatchWorkers::take_tasks(int worker) {
  for (;;) {
    std::int64_t i;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error_ || next_ >= tasks_) return;
      i = next_++;
    }
    try {
      (*task_)(i, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void BatchWorkers::work(int worker) {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    if (worker < taking_) take_tasks(worker);
    std::lock_guard<std::mutex> lock(mutex_);
    if (--busy_ == 0) done_.notify_one();
  }
}

}  // namespace attend::runtime
