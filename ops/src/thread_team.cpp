// attend's thread teams (parallel.hpp): one per thread that starts parallel work,
// created on its first region and joined when that thread exits.
//
// A region is published by bumping `generation_`, a word that also carries the
// region's thread count, so a worker learns from one acquire-load both that there is
// new work and whether it takes part — and never reads the job of a region it is not
// in. Workers spin on that word for a short while, then sleep on it (a futex, through
// std::atomic::wait); the caller runs t = 0 itself, then waits for `pending_` to reach
// zero the same way. Sleeping is announced in a counter (workers) or a flag (the
// caller) checked after the opposite side's store, both sequentially consistent, so
// a wake-up is never lost and never paid for when nobody sleeps.
#include <immintrin.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "attend/ops/parallel_tasks.hpp"
#include "parallel.hpp"

namespace attend::ops::detail {
namespace {

constexpr long kDefaultSpinUs = 50;

// How long a waiting thread spins before it sleeps: long enough to bridge the gaps
// between the regions of a decoder step, short enough that a thread whose partner was
// descheduled gives its core back soon. $ATTEND_SPIN_US overrides it (0: sleep at once,
// as OMP_WAIT_POLICY=passive; large: spin, as active).
std::chrono::microseconds spin_time() {
  static const std::chrono::microseconds spin = [] {
    const char* env = std::getenv("ATTEND_SPIN_US");
    const long us = env != nullptr && *env != '\0' ? std::strtol(env, nullptr, 10) : kDefaultSpinUs;
    return std::chrono::microseconds(std::clamp(us, 0L, 1000000L));
  }();
  return spin;
}

constexpr int kMaxTeam = 255;          // threads in a region (the count fits in 8 bits)
constexpr std::uint32_t kCountBits = 8;

thread_local int tls_index = 0;        // thread_index()
thread_local bool tls_in_region = false;

// Spins until ready() or spin_time() has passed; whether ready() held.
template <class Ready>
bool spin_until(const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + spin_time();
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    _mm_pause();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) return ready();
  }
}

class Team {
 public:
  Team() = default;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  ~Team() {
    publish(0);  // a region nobody takes part in, seen after stop_
    for (std::thread& t : threads_) t.join();
  }

  void run(int nt, TeamJob job, const void* context) {
    grow(nt - 1);
    job_ = job, context_ = context, isa_scope_ = thread_isa_scope();
    pending_.store(nt - 1, std::memory_order_relaxed);
    publish(nt);
    run_job(job, context, 0);
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      caller_sleeping_.store(true, std::memory_order_seq_cst);
      for (int p; (p = pending_.load(std::memory_order_seq_cst)) != 0;) pending_.wait(p, std::memory_order_seq_cst);
      caller_sleeping_.store(false, std::memory_order_relaxed);
    }
  }

 private:
  static void run_job(TeamJob job, const void* context, int t) {
    tls_index = t, tls_in_region = true;
    job(context, t);
    tls_index = 0, tls_in_region = false;
  }

  // A worker's part of the region: with the caller's IsaScope, its own restored after.
  void run_worker_job(int t) {
    const int own = thread_isa_scope();
    set_thread_isa_scope(isa_scope_);
    run_job(job_, context_, t);
    set_thread_isa_scope(own);
  }

  // Starts a region of `nt` threads (0: the workers' last, they stop).
  void publish(int nt) {
    if (nt == 0) stop_.store(true, std::memory_order_relaxed);
    ++counter_;
    generation_.store((counter_ << kCountBits) | static_cast<std::uint32_t>(nt), std::memory_order_seq_cst);
    if (sleeping_workers_.load(std::memory_order_seq_cst) > 0) generation_.notify_all();
  }

  void grow(int workers) {
    while (static_cast<int>(threads_.size()) < workers) {
      const int index = static_cast<int>(threads_.size()) + 1;
      threads_.emplace_back([this, index, seen = generation_.load(std::memory_order_relaxed)] { work(index, seen); });
    }
  }

  void work(int index, std::uint32_t seen) {
    for (;;) {
      std::uint32_t g = seen;
      if (!spin_until([&] { return (g = generation_.load(std::memory_order_acquire)) != seen; })) {
        sleeping_workers_.fetch_add(1, std::memory_order_seq_cst);
        while ((g = generation_.load(std::memory_order_seq_cst)) == seen) generation_.wait(seen, std::memory_order_seq_cst);
        sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = g;
      const int nt = static_cast<int>(g & ((1u << kCountBits) - 1));
      if (nt == 0 && stop_.load(std::memory_order_relaxed)) return;
      if (index >= nt) continue;  // not in this region: its job is not ours to read
      run_worker_job(index);
      if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 && caller_sleeping_.load(std::memory_order_seq_cst))
        pending_.notify_one();
    }
  }

  std::vector<std::thread> threads_;  // worker t = index + 1
  std::uint32_t counter_ = 0;         // regions published (the caller's only)
  TeamJob job_ = nullptr;             // the current region, written before it is published
  const void* context_ = nullptr;
  int isa_scope_ = -1;                // the caller's IsaScope for the current region
  std::atomic<std::uint32_t> generation_{0};  // counter << 8 | thread count
  std::atomic<int> pending_{0};               // workers still in the current region
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
};

// fork() copies only the forking thread: in the child, an inherited team's workers do
// not exist. Such a team is left alone (leaked, never joined) and a new one made.
std::atomic<unsigned> g_fork_epoch{0};
std::once_flag g_atfork_once;

struct TeamHolder {
  std::unique_ptr<Team> team;
  unsigned epoch = 0;
  ~TeamHolder() {
    if (team && epoch != g_fork_epoch.load()) (void)team.release();
  }
};
thread_local TeamHolder tls_team;

Team& my_team() {
  std::call_once(g_atfork_once, [] { ::pthread_atfork(nullptr, nullptr, [] { g_fork_epoch.fetch_add(1); }); });
  const unsigned epoch = g_fork_epoch.load(std::memory_order_relaxed);
  if (tls_team.team && tls_team.epoch != epoch) (void)tls_team.team.release();
  if (!tls_team.team) tls_team.team = std::make_unique<Team>(), tls_team.epoch = epoch;
  return *tls_team.team;
}

}  // namespace

void run_on_team(int nt, TeamJob job, const void* context) {
  nt = std::min(nt, kMaxTeam);
  if (nt <= 1 || tls_in_region) {  // nested (as OpenMP without nesting): one after another, here
    const int outer = tls_index;
    const bool in_region = tls_in_region;
    for (int t = 0; t < nt; ++t) {
      tls_index = t, tls_in_region = true;
      job(context, t);
    }
    tls_index = outer, tls_in_region = in_region;
    return;
  }
  my_team().run(nt, job, context);
}

int thread_index() { return tls_index; }

void run_tasks(int threads, TaskJob job, const void* context) { run_on_team(threads, job, context); }

}  // namespace attend::ops::detail
