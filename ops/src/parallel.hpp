// Threading for the ops: explicit thread counts on top, attend's own thread teams
// underneath (thread_team.cpp).
//
// Every op takes a thread count; these helpers decide how many of those threads a
// piece of work deserves (tiny work runs on the caller's thread, because waking a
// worker costs more than it saves) and split index ranges between them.
//
// Each thread that starts parallel work has a team of its own, so several translations
// running at once from several threads (inter-op parallelism, Ray actors, services)
// never share or block each other's workers. A worker waits for the next region by
// spinning briefly, then sleeping: it stays hot through the back-to-back regions of a
// decoder step, but never burns a core another process needs for more than ~50 µs —
// OpenMP's spinning workers made two processes sharing cores run 60× slower.
#pragma once

#include <algorithm>

#include "attend/ops/types.hpp"

namespace attend::ops::detail {

// Runs job(context, t) for every t in [0, nt): t = 0 on the calling thread, the others
// on the calling thread's team, and returns when all have. Inside a region (a job that
// starts parallel work itself) the t's run one after another on the calling thread.
using TeamJob = void (*)(const void* context, int t);
void run_on_team(int nt, TeamJob job, const void* context);

// The calling thread's IsaScope (isa.cpp) as a raw value (-1: none), which a team's
// workers adopt for the caller's region, so an op's workers run the caller's kernels.
int thread_isa_scope();
void set_thread_isa_scope(int isa);

// The t of the job the calling thread is running (0 outside any region): a per-thread
// scratch slot.
int thread_index();

// Threads worth using for `work` units when each thread should get at least `grain`.
inline int useful_threads(int threads, index_t work, index_t grain) {
  if (threads <= 1 || work <= grain) return 1;
  return static_cast<int>(std::min<index_t>(threads, std::max<index_t>(1, work / grain)));
}

// Contiguous share [begin, end) of [0, n) for thread `t` of `nt` (balanced to ±1).
inline void split_range(index_t n, int t, int nt, index_t& begin, index_t& end) {
  const index_t base = n / nt, extra = n % nt;
  begin = t * base + std::min<index_t>(t, extra);
  end = begin + base + (t < extra ? 1 : 0);
}

// What a region's job needs: the body, the range, the threads.
template <class Body>
struct Region {
  const Body* body;
  index_t n;
  int nt;
};

// Runs body(begin, end) over [0, n) split in contiguous chunks on `nt` threads; chunk t
// runs with thread_index() == t.
template <class Body>
void parallel_chunks(int nt, index_t n, const Body& body) {
  if (nt <= 1 || n <= 1) {
    body(index_t{0}, n);
    return;
  }
  const Region<Body> region{&body, n, static_cast<int>(std::min<index_t>(nt, n))};
  run_on_team(region.nt, [](const void* context, int t) {
    const auto& r = *static_cast<const Region<Body>*>(context);
    index_t b = 0, e = 0;
    split_range(r.n, t, r.nt, b, e);
    if (b < e) (*r.body)(b, e);
  }, &region);
}

// Runs body(i) for i in [0, n), item i on thread i mod nt: balances work that grows
// with i (causal attention's later query tiles).
template <class Body>
void parallel_round_robin(int nt, index_t n, const Body& body) {
  if (nt <= 1 || n <= 1) {
    for (index_t i = 0; i < n; ++i) body(i);
    return;
  }
  const Region<Body> region{&body, n, static_cast<int>(std::min<index_t>(nt, n))};
  run_on_team(region.nt, [](const void* context, int t) {
    const auto& r = *static_cast<const Region<Body>*>(context);
    for (index_t i = t; i < r.n; i += r.nt) (*r.body)(i);
  }, &region);
}

}  // namespace attend::ops::detail
