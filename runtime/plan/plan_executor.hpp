// Runs one phase of an execution plan over a workspace's arena. Stateless apart from
// the arena: the decoding driver fills the plan's input buffers, runs a phase, and
// reads the outputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "attend/ops/attention.hpp"
#include "plan/attention_capture.hpp"
#include "plan/execution_plan.hpp"

namespace attend::runtime {

struct PhaseShape {
  // encoder: the batch's source tokens, sentence after sentence, unpadded (sentence b's
  // from the sum of the lengths before it: Io::source_lengths); decoder: live rows
  std::int64_t rows = 0;
  std::int64_t batch = 0;          // sentences in the batch
  std::int64_t source_length = 0;  // the longest source: the cross K/V cache's positions per sentence
  std::int64_t step = 0;           // decoder: index of the token being produced
  bool alignment = false;          // decoder: also run the alignment step (attention probabilities)
  // Every attention step also writes every head's weights here (one sentence, one
  // decoder row; decoder step `step` is row `step` of the decoder's maps). Null: not
  // asked, the steps run as they always do.
  AttentionCapture* capture = nullptr;
};

class PlanExecutor {
 public:
  PlanExecutor(const ExecutionPlan& plan, std::byte* arena)
      : plan_(plan), arena_(arena), source_starts_(static_cast<std::size_t>(plan.limits().max_batch) + 1) {}

  template <class T>
  T* buffer(int id) const {
    return reinterpret_cast<T*>(arena_ + plan_.buffers()[id].offset);
  }
  // Element `index` of buffer `id`, counted in the buffer's own element type (T may be
  // void to get an untyped pointer).
  template <class T>
  T* element(int id, std::int64_t index) const {
    const PlanBuffer& b = plan_.buffers()[id];
    return static_cast<T*>(static_cast<void*>(arena_ + b.offset + static_cast<std::size_t>(index) * element_bytes(b.type)));
  }

  // Runs every step of `phase`. With `step_seconds` (one entry per plan step), adds each
  // step's wall time to its entry: the per-step profile of `attend bench`.
  //
  // The decoder phase's steps are row-wise (each decoder row reads only its own rows, its
  // own cache slots and its sentence's cross K/V), so with enough rows the threads split
  // the rows and each runs every step on its share with one thread
  // (ExecutionPlan::decoder_row_threads): one fork and join per decoder step instead of
  // one per op, and each row's activations stay in one core's cache. The profile then
  // times thread 0's share.
  void run(Phase phase, const PhaseShape& shape, double* step_seconds = nullptr) const;

 private:
  // Rows [begin, begin + count) of the phase's rows: the share one thread runs.
  struct RowSpan {
    std::int64_t begin = 0, count = 0;
  };
  void run_steps(Phase phase, const PhaseShape& shape, RowSpan rows, int threads, double* step_seconds) const;
  void run_step(const PlanStep& s, const PhaseShape& shape, RowSpan rows, int threads) const;
  // The weights of the attention step `s` has just run with `args`, into shape.capture.
  void capture(const PlanStep& s, const PhaseShape& shape, const ops::AttentionArgs& args) const;
  void capture(const PlanStep& s, const PhaseShape& shape, const ops::DecodeAttentionArgs& args) const;
  ops::Matrix matrix(const Operand& o, RowSpan rows) const;
  // The encoder's row where each sentence's source starts (batch + 1 entries: the last
  // is the row count), from Io::source_lengths, into source_starts_ (made once: the
  // phases allocate nothing).
  std::span<const std::int64_t> source_starts(const PhaseShape& shape) const;
  // Layer `layer`'s cross-attention keys or values: each row reads its sentence's rows
  // (the row table from row rows.begin on).
  ops::KvCacheView cross_view(std::int64_t layer, bool values, const PhaseShape& shape, std::int64_t first_row = 0) const;
  ops::KvCacheView self_view(std::int64_t layer, bool values, std::int64_t first_row = 0) const;
  ops::KvCacheTarget writable(const ops::KvCacheView& v, std::int64_t offset) const;

  const ExecutionPlan& plan_;
  std::byte* arena_;
  mutable std::vector<std::int64_t> source_starts_;  // [max_batch + 1]
};

}  // namespace attend::runtime
