#include "batching/batch_workers.hpp"

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "batching/fork_guard.hpp"

namespace attend::runtime {

// The helper threads of one process and the run they share.
class BatchWorkers::Crew {
 public:
  explicit Crew(int workers) : generation_of_fork_(fork_generation()) {
    for (int w = 1; w < workers; ++w) threads_.emplace_back([this, w] { work(w); });
  }

  ~Crew() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  Crew(const Crew&) = delete;
  Crew& operator=(const Crew&) = delete;

  // Whether this crew's threads exist here (false in a child forked after it was made).
  bool here() const { return generation_of_fork_ == fork_generation(); }

  void run(std::int64_t tasks, const std::function<void(std::int64_t, int)>& task, int use);

 private:
  void work(int worker);
  void take_tasks(int worker);

  const std::uint64_t generation_of_fork_;
  std::vector<std::thread> threads_;
  std::mutex run_mutex_;  // held by the run that has the helper threads

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::int64_t, int)>* task_ = nullptr;
  std::int64_t tasks_ = 0, next_ = 0;
  int taking_ = 0;                // workers [0, taking_) take tasks in the current run
  std::uint64_t generation_ = 0;  // bumped per run: workers wake once per run
  int busy_ = 0;                  // helper threads still inside the current run
  std::exception_ptr error_;
  bool stop_ = false;
};

BatchWorkers::BatchWorkers(int workers) : workers_(workers) {
  if (workers > 1) crew_.store(new Crew(workers), std::memory_order_release);
}

BatchWorkers::~BatchWorkers() {
  Crew* crew = crew_.load(std::memory_order_acquire);
  // A parent's crew in a forked child: its threads cannot be joined, its locks may be
  // held; it is left as the fork left it.
  if (crew != nullptr && crew->here()) delete crew;
}

BatchWorkers::Crew& BatchWorkers::crew() {
  Crew* crew = crew_.load(std::memory_order_acquire);
  if (crew != nullptr && crew->here()) return *crew;
  auto fresh = std::make_unique<Crew>(workers_);
  // Several threads of a child may get here at once: one crew wins, the others are
  // joined again at once (unique_ptr).
  if (crew_.compare_exchange_strong(crew, fresh.get(), std::memory_order_acq_rel)) return *fresh.release();
  return *crew;
}

void BatchWorkers::run(std::int64_t tasks, const std::function<void(std::int64_t, int)>& task, int use) {
  if (tasks <= 0) return;
  if (use <= 0 || use > workers()) use = workers();
  if (use == 1 || tasks == 1) {  // nothing to share: no hand-over cost
    for (std::int64_t i = 0; i < tasks; ++i) task(i, 0);
    return;
  }
  crew().run(tasks, task, use);
}

void BatchWorkers::Crew::run(std::int64_t tasks, const std::function<void(std::int64_t, int)>& task, int use) {
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
void BatchWorkers::Crew::take_tasks(int worker) {
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

void BatchWorkers::Crew::work(int worker) {
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
