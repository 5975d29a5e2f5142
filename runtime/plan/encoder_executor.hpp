// Runs the phases of an encoder plan (encoder_plan.hpp) over an arena: the packed
// body, then the heads a call asks for. Stateless apart from the arena: the workspace
// fills the plan's inputs, runs phases and reads the outputs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plan/attention_capture.hpp"
#include "plan/encoder_plan.hpp"

namespace attend::runtime {

// A batch's shape at run time.
struct EncoderShape {
  std::int64_t tokens = 0;     // rows of the body
  std::int64_t sequences = 0;  // rows of the heads
  bool normalize = false;      // the embedding phase ends with an L2 normalisation
  // Every attention step also writes every head's weights to capture->encoder_self (one
  // sequence). Null: not asked.
  AttentionCapture* capture = nullptr;
};

// What a profiled run adds to each plan step besides its wall time (attend bench's
// breakdown): the part of it an int8 linear step spent quantizing its input, and the
// multiply-adds it ran (a GEMM's M·N·K, attention's QKᵀ and PV over each sequence).
struct EncoderStepCost {
  double quantize_seconds = 0;
  double multiply_adds = 0;
};

// Runs phases of an encoder plan over an arena (the workspace's PlanMemory).
class EncoderExecutor {
 public:
  EncoderExecutor(const EncoderPlan& plan, std::byte* arena) : plan_(plan), arena_(arena) {}

  template <class T>
  T* buffer(int id) const {
    return reinterpret_cast<T*>(arena_ + plan_.buffers()[id].offset);
  }
  ops::Matrix matrix(int id, std::int64_t rows) const;

  // With `step_seconds` (one entry per plan step), adds each step's wall time to it, and
  // with `costs` (one per step too) what else the profile shows of it.
  void run(EncoderPhase phase, const EncoderShape& shape, double* step_seconds = nullptr,
           EncoderStepCost* costs = nullptr) const;

 private:
  // Runs step s on `rows` rows from `first` (a chunk of a row group; else all of them);
  // with `cost`, adds to it.
  void run_step(const EncoderStep& s, const EncoderShape& shape, std::int64_t first, std::int64_t rows,
                EncoderStepCost* cost = nullptr) const;
  ops::Matrix matrix(const Operand& o, std::int64_t rows) const;
  // Rows [first, first + rows) of an operand; those of a chunk buffer from its row 0.
  ops::Matrix matrix(const Operand& o, std::int64_t first, std::int64_t rows) const;

  const EncoderPlan& plan_;
  std::byte* arena_;
};

}  // namespace attend::runtime
