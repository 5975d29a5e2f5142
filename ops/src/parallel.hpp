// Threading for the ops: OpenMP underneath, explicit thread counts on top.
//
// Every op takes a thread count; these helpers decide how many of those threads a
// piece of work deserves (tiny work runs on the caller's thread, because waking a
// worker costs more than it saves) and split index ranges between them.
#pragma once

#include <omp.h>

#include <algorithm>

#include "attend/ops/types.hpp"

namespace attend::ops::detail {

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

// Runs body(begin, end) over [0, n) split in contiguous chunks on `nt` threads.
template <class Body>
void parallel_chunks(int nt, index_t n, const Body& body) {
  if (nt <= 1 || n <= 1) {
    body(index_t{0}, n);
    return;
  }
  nt = static_cast<int>(std::min<index_t>(nt, n));
#pragma omp parallel num_threads(nt)
  {
    index_t b = 0, e = 0;
    split_range(n, omp_get_thread_num(), omp_get_num_threads(), b, e);
    if (b < e) body(b, e);
  }
}

// Runs body(i) for i in [0, n), item i on thread i mod nt: balances work that grows
// with i (causal attention's later query tiles).
template <class Body>
void parallel_round_robin(int nt, index_t n, const Body& body) {
  if (nt <= 1 || n <= 1) {
    for (index_t i = 0; i < n; ++i) body(i);
    return;
  }
  nt = static_cast<int>(std::min<index_t>(nt, n));
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num(), T = omp_get_num_threads();
    for (index_t i = t; i < n; i += T) body(i);
  }
}

}  // namespace attend::ops::detail
