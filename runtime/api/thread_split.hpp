// How the API splits its compute threads into batches side by side (inter) × threads
// per batch (intra), for translators and encoders alike.
#pragma once

#include <algorithm>
#include <string>
#include <thread>

#include "attend/error.hpp"

namespace attend {

struct ThreadSplit {
  int inter = 1, intra = 1;
};

// At most this many batches side by side when the split is chosen: each holds a
// workspace (arena, KV caches) and streams the weights on its own.
inline constexpr int kChosenInterThreadsMax = 4;

// threads (all of them) = inter × intra; whichever is not given follows from the others
// and the core count. Chosen: as many batches side by side as there are threads, up to
// kChosenInterThreadsMax, because decoding's few-row GEMMs split poorly over threads —
// on 2 cores, 2 batches × 1 thread beat 1 × 2 by 1.1–1.5× (docs/performance.md). A call
// with a single batch still gets every thread (runtime/translator: a lone batch).
inline ThreadSplit split_threads(int threads, int inter_threads, int intra_threads) {
  if (threads < 0 || inter_threads < 0 || intra_threads < 0)
    throw Error("threads = " + std::to_string(threads) + ", inter_threads = " + std::to_string(inter_threads) +
                ", intra_threads = " + std::to_string(intra_threads) + ": each must be ≥ 0 (0: chosen)");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int total = threads > 0 ? threads : cores;
  if (total > 4096) throw Error("threads = " + std::to_string(total) + ": at most 4096 threads in all");
  ThreadSplit s;
  if (inter_threads > 0) {
    s.inter = inter_threads;
    s.intra = intra_threads > 0 ? intra_threads : std::max(1, total / s.inter);
  } else if (intra_threads > 0) {
    s.intra = intra_threads;
    s.inter = std::max(1, total / s.intra);
  } else {
    s.intra = (total + kChosenInterThreadsMax - 1) / kChosenInterThreadsMax;
    s.inter = std::max(1, total / s.intra);
  }
  return s;
}

}  // namespace attend
