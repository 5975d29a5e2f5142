// Several batches at once: a fixed set of worker threads that a translate call lends
// its batches to (CTranslate2's inter_threads).
//
// Small decoding GEMMs (32 rows) split poorly over threads, so on few cores two
// batches with one compute thread each beat one batch with two. The workers live as
// long as the translator, so each keeps its own thread team (ops/src/parallel.hpp;
// when it has intra threads) instead of creating one per call.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace attend::runtime {

class BatchWorkers {
 public:
  // `workers` ≥ 1 threads take part in each run, the calling thread among them, so
  // workers − 1 threads are started here.
  explicit BatchWorkers(int workers);
  ~BatchWorkers();
  BatchWorkers(const BatchWorkers&) = delete;
  BatchWorkers& operator=(const BatchWorkers&) = delete;

  int workers() const { return static_cast<int>(threads_.size()) + 1; }

  // Calls task(i, worker) once for every i in [0, tasks), spread over the workers (worker
  // ∈ [0, workers()), the caller being 0), and returns when all are done. Tasks are taken
  // in increasing i. The first exception stops the hand-out of further tasks and is
  // rethrown here once every running task has ended. One run at a time has the helper
  // threads: a caller that finds them busy runs its tasks alone, on its own thread, as
  // worker 0 (so several calling threads still work in parallel and none waits). Only
  // workers [0, use) take tasks (use ≤ 0: all of them).
  void run(std::int64_t tasks, const std::function<void(std::int64_t task, int worker)>& task, int use = 0);

 private:
  void work(int worker);
  void take_tasks(int worker);

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

}  // namespace attend::runtime
