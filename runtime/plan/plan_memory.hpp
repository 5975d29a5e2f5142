// The memory a compiled plan runs in: one arena of the plan's size, in which every
// buffer sits at the offset the plan gave it (and the decoder's attention caches with
// them), plus the seconds each step took while profiling. Every kind of model's
// workspace holds one — the encoder-decoder's decoding Workspace and the encoder-only
// EncoderWorkspace — and keeps its own per-call state beside it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "attend/ops/aligned_buffer.hpp"

namespace attend::runtime {

class PlanMemory {
 public:
  PlanMemory(std::size_t arena_bytes, std::size_t steps) : arena_(arena_bytes), step_seconds_(steps, 0.0) {}

  std::byte* arena() { return arena_.data(); }
  std::size_t arena_bytes() const { return arena_.bytes(); }

  // Where an executor adds each step's time: null unless profiling.
  double* step_clock(bool profiling) { return profiling ? step_seconds_.data() : nullptr; }
  std::span<const double> step_seconds() const { return step_seconds_; }
  void reset_step_seconds() { std::fill(step_seconds_.begin(), step_seconds_.end(), 0.0); }

 private:
  ops::AlignedBuffer arena_;
  std::vector<double> step_seconds_;
};

}  // namespace attend::runtime
