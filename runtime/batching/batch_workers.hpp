// Several batches at once: a fixed set of worker threads that a translate call lends
// its batches to (CTranslate2's inter_threads).
//
// Small decoding GEMMs (32 rows) split poorly over threads, so on few cores two
// batches with one compute thread each beat one batch with two. The workers live as
// long as the translator, so each keeps its own thread team (ops/src/parallel.hpp;
// when it has intra threads) instead of creating one per call.
//
// fork(): a child has none of the parent's threads, and their locks may have been held
// when it forked (fork_guard.hpp). The threads and everything they share live in a
// Crew made per process: a child's first run leaves the parent's crew alone (never
// joined, never freed) and starts its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace attend::runtime {

class BatchWorkers {
 public:
  // `workers` ≥ 1 threads take part in each run, the calling thread among them, so
  // workers − 1 threads are started here (in a forked child: at its first run).
  explicit BatchWorkers(int workers);
  ~BatchWorkers();
  BatchWorkers(const BatchWorkers&) = delete;
  BatchWorkers& operator=(const BatchWorkers&) = delete;

  int workers() const { return workers_; }

  // Calls task(i, worker) once for every i in [0, tasks), spread over the workers (worker
  // ∈ [0, workers()), the caller being 0), and returns when all are done. Tasks are taken
  // in increasing i. The first exception stops the hand-out of further tasks and is
  // rethrown here once every running task has ended. One run at a time has the helper
  // threads: a caller that finds them busy runs its tasks alone, on its own thread, as
  // worker 0 (so several calling threads still work in parallel and none waits). Only
  // workers [0, use) take tasks (use ≤ 0: all of them).
  void run(std::int64_t tasks, const std::function<void(std::int64_t task, int worker)>& task, int use = 0);

 private:
  class Crew;
  Crew& crew();  // this process's

  const int workers_;
  std::atomic<Crew*> crew_{nullptr};
};

}  // namespace attend::runtime
