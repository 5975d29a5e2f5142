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
  bool follows_batches = false;
};

// threads (all of them) = inter × intra; whichever is not given follows from the others
// and the core count. Neither given: the split follows each call's work — as many
// batches side by side as it has, up to the thread count, intra-op threads only for
// what is left (runtime::TranslatorConfig::split_follows_batches) — because decoding's
// few-row GEMMs split worse over threads than batches do (16 cores: 16 × 1 gave 2× the
// tokens/s of 4 × 4, docs/performance.md); a call with a single batch still gets every
// thread.
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
    s.inter = total;
    s.intra = 1;
    s.follows_batches = true;
  }
  return s;
}

}  // namespace attend
