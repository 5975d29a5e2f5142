#include "plan/plan_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "attend/ops/activation.hpp"
#include "attend/ops/attention.hpp"
#include "attend/ops/attention_probs.hpp"
#include "attend/ops/bf16.hpp"
#include "attend/ops/embedding.hpp"
#include "attend/ops/normalization.hpp"
#include "attend/ops/parallel_tasks.hpp"
#include "attend/ops/softmax.hpp"
#include "attend/error.hpp"
#include "plan/sequence_attention.hpp"

namespace attend::runtime {

namespace {

// A stack's T5 bias (shared by its layers) or a layer's Shaw vectors, for the kernels.
ops::RelativePositions relative_positions(const ModelConfig& c, const DistanceBias& bias, const RelativeVectors& vectors) {
  ops::RelativePositions p;
  if (c.relative_attention == RelativeAttention::t5_bias) {
    p.max_distance = bias.max_distance;
    p.bias = bias.bias.data();
    p.bias_head_stride = 2 * bias.max_distance + 1;
  } else if (c.relative_attention == RelativeAttention::shaw) {
    p.max_distance = c.relative_attention_max_distance;
    p.keys = vectors.keys.data();
    p.values = vectors.values.data();
  }
  return p;
}

}  // namespace

ops::Matrix PlanExecutor::matrix(const Operand& o, RowSpan rows) const {
  const PlanBuffer& b = plan_.buffers()[o.buffer];
  return {buffer<float>(o.buffer) + rows.begin * b.cols + o.col, rows.count, o.cols, b.cols};
}

// The cross K/V, head-major: 2L blocks (layer l's keys, then its values), each
// [batch][H][S][dh] — one head's source positions contiguous, so the decoding step
// streams them. Row i reads its sentence (cross_rows[i]).
ops::KvCacheView PlanExecutor::cross_view(std::int64_t layer, bool values, const PhaseShape& shape,
                                          std::int64_t first_row) const {
  const auto& io = plan_.io();
  const std::int64_t A = plan_.model().config().attention_width(), dh = plan_.model().config().head_dim();
  const std::int64_t S = shape.source_length, block = shape.batch * S * A;
  return {element<const void>(io.cross_kv, (2 * layer + (values ? 1 : 0)) * block), dh, S * A, S * dh,
          buffer<std::int32_t>(io.cross_rows) + first_row, 0, io.kv_type};
}

// Layer l's self-attention keys or values, [R][H][T][dh] per layer: slot (j, row) of head
// h at row·T·A + h·T·dh + j·dh (A = H·dh), rows through the row table (beam search reorders
// hypotheses there, not in the cache). A row keeps its slot row from step to step
// unless the search moves it, so one head's keys are mostly contiguous.
ops::KvCacheView PlanExecutor::self_view(std::int64_t layer, bool values, std::int64_t first_row) const {
  const auto& io = plan_.io();
  const std::int64_t A = plan_.model().config().attention_width(), dh = plan_.model().config().head_dim();
  const std::int64_t R = plan_.limits().decoder_rows(), T = plan_.limits().max_target_length;
  return {element<const void>(values ? io.self_values : io.self_keys, layer * T * R * A), dh, T * A, T * dh,
          buffer<std::int32_t>(io.self_rows) + first_row * T, T, io.kv_type};
}

// A cache view as a target for store_kv: element `offset` (in the view's elements) of
// it, row stride the view's row stride, heads as it reads them. The view's memory is the
// arena's, which the executor owns and writes.
ops::KvCacheTarget PlanExecutor::writable(const ops::KvCacheView& v, std::int64_t offset) const {
  auto* base = static_cast<std::byte*>(const_cast<void*>(v.data));
  return {base + offset * ops::kv_type_bytes(v.type), v.row_stride, v.head_stride, v.type};
}

void PlanExecutor::run(Phase phase, const PhaseShape& shape, double* step_seconds) const {
  if (phase == Phase::encoder) (void)source_starts(shape);  // rows and lengths agree, before any step reads them
  const int split = phase == Phase::decoder && shape.capture == nullptr ? plan_.decoder_row_threads(shape.rows) : 1;
  if (split == 1) {
    run_steps(phase, shape, {0, shape.rows}, 0, step_seconds);
    return;
  }
  ops::parallel_tasks(split, [&](int t) {
    const std::int64_t base = shape.rows / split, extra = shape.rows % split;
    const RowSpan share{t * base + std::min<std::int64_t>(t, extra), base + (t < extra ? 1 : 0)};
    run_steps(phase, shape, share, 1, t == 0 ? step_seconds : nullptr);
  });
}

// Where each sentence's source tokens start among the encoder's rows, and (entry batch)
// where they end: the sums of the lengths before it.
std::span<const std::int64_t> PlanExecutor::source_starts(const PhaseShape& shape) const {
  if (shape.batch < 0 || shape.batch >= static_cast<std::int64_t>(source_starts_.size()))
    throw error_of("internal: an encoder batch of ", shape.batch, " sentences in a plan for ", source_starts_.size() - 1);
  const std::int32_t* lengths = buffer<std::int32_t>(plan_.io().source_lengths);
  std::int64_t* starts = source_starts_.data();
  starts[0] = 0;
  for (std::int64_t b = 0; b < shape.batch; ++b) starts[b + 1] = starts[b] + lengths[b];
  if (starts[shape.batch] != shape.rows)
    throw error_of("internal: the encoder has ", shape.rows, " rows but its sources ", starts[shape.batch], " tokens");
  return {starts, static_cast<std::size_t>(shape.batch) + 1};
}

// threads: each step's own count (0), or the given count for every step.
void PlanExecutor::run_steps(Phase phase, const PhaseShape& shape, RowSpan rows, int threads, double* step_seconds) const {
  const auto& steps = plan_.steps();
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].phase != phase) continue;
    if (steps[i].kind == StepKind::alignment && !shape.alignment) continue;
    const int step_threads = threads > 0 ? threads : steps[i].threads;
    if (step_seconds == nullptr) {
      run_step(steps[i], shape, rows, step_threads);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    run_step(steps[i], shape, rows, step_threads);
    step_seconds[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
}

void PlanExecutor::capture(const PlanStep& s, const PhaseShape& shape, const ops::AttentionArgs& args) const {
  if (shape.batch != 1) throw error_of("internal: attention is captured for one sentence, not a batch of ", shape.batch);
  ops::attention_weights(args, shape.capture->encoder_self.layer(s.layer), s.threads);
}

void PlanExecutor::capture(const PlanStep& s, const PhaseShape& shape, const ops::DecodeAttentionArgs& args) const {
  if (shape.rows != 1) throw error_of("internal: attention is captured for one decoder row, not ", shape.rows);
  AttentionMaps& maps = s.kind == StepKind::self_attention ? shape.capture->decoder_self : shape.capture->cross;
  ops::attention_decode_weights(args, maps.layer(s.layer, shape.step), maps.columns, s.threads);
}

// Rows `rows` of the phase's (the encoder: all of them), each op on `threads` threads.
void PlanExecutor::run_step(const PlanStep& s, const PhaseShape& shape, RowSpan rows, int threads) const {
  const Model& model = plan_.model();
  const ModelConfig& c = model.config();
  const auto& io = plan_.io();
  // D: the model's width; A = H·dh: the attention's (Q, K, V and the context), which T5
  // may make differ.
  const std::int64_t D = c.d_model, A = c.attention_width(), H = c.num_heads, dh = c.head_dim(), first = rows.begin;
  switch (s.kind) {
    case StepKind::embed_source:
    case StepKind::embed_target: {
      const bool source = s.kind == StepKind::embed_source;
      const Table& tokens = source ? model.source_embedding : model.target_embedding_table();
      const Table& positions = source ? model.source_positions : model.target_position_table();
      // Marian's decoder starts from a zero vector: scale 0 keeps only the position.
      const bool zero = !source && c.decoder_start_zero_embedding && shape.step == 0;
      const std::int32_t* position_ids = buffer<std::int32_t>(source ? io.source_positions : io.target_positions) + first;
      const ops::Matrix out = matrix(s.out, rows);
      const ops::ConstMatrix position_table = positions.empty() ? ops::ConstMatrix{} : positions.f32();
      ops::embedding(tokens.view(), buffer<std::int32_t>(s.in.buffer) + first, zero ? 0.0f : c.embedding_scale,
                     position_table, position_ids, out, threads);
      // Later rows the workspace marks (CTranslate2's one-pass prefix, which it zeroes
      // whole; see DecodeOptions::one_pass_prefix_tail) keep only their position too.
      if (!source && c.decoder_start_zero_embedding && !zero)
        for (std::int64_t r = 0; r < rows.count; ++r)
          if (buffer<std::int32_t>(io.zero_embedding)[first + r] != 0)
            for (std::int64_t k = 0; k < D; ++k) out(r, k) = positions.empty() ? 0.0f : position_table(position_ids[r], k);
      return;
    }
    case StepKind::layer_norm:
      if (c.norm_type == NormType::rms_norm) {
        ops::rms_norm(matrix(s.in, rows), matrix(s.out, rows), s.norm->with_epsilon(c.layer_norm_epsilon), threads);
      } else {
        ops::layer_norm(matrix(s.in, rows), matrix(s.out, rows), s.norm->with_epsilon(c.layer_norm_epsilon), threads);
      }
      return;
    case StepKind::multiply:
      ops::multiply(matrix(s.out, rows), matrix(s.in, rows), matrix(s.out, rows), threads);
      return;
    case StepKind::linear: {
      ops::GemmEpilogue ep;
      ep.alpha = s.alpha;
      ep.bias = s.linear->bias_data();
      ep.activation = s.activation;
      if (s.residual.buffer >= 0) ep.residual = matrix(s.residual, rows);
      ops::gemm(matrix(s.in, rows), s.linear->weight, matrix(s.out, rows), ep, threads);
      return;
    }
    case StepKind::encoder_attention: {
      // The fused QKV output [tokens, 3A] read in place as each sentence's Q, K, V heads.
      const ops::Matrix qkv = matrix(s.in, rows), out = matrix(s.out, rows);
      if (first != 0) throw error_of("internal: the encoder's attention runs on every row");
      const std::span<const std::int64_t> starts = source_starts(shape);
      // Heads [h0, h0 + count) of sentence b.
      auto heads_of = [&](std::int64_t b, std::int64_t h0, std::int64_t count) {
        ops::AttentionArgs a = sequence_heads(qkv, out, starts[b], starts[b + 1] - starts[b], A, dh, h0, count);
        a.scale = c.attention_scale;
        a.positions = relative_positions(c, model.encoder_position_bias, model.encoder[s.layer].relative);
        if (a.positions.bias != nullptr) a.positions.bias += h0 * a.positions.bias_head_stride;
        return a;
      };
      if (shape.capture != nullptr) {
        const ops::AttentionArgs a = heads_of(0, 0, H);
        ops::attention(a, threads);
        capture(s, shape, a);
        return;
      }
      attention_over_sequences(shape.batch, H, threads, heads_of);
      return;
    }
    case StepKind::cache_store: {
      // Row i's K and V for this step go to slot (step, i) of the layer's cache.
      const ops::Matrix kv = matrix(s.in, rows);
      for (const bool values : {false, true}) {
        // Row i of this step is slot row i (the workspace's row table says so): position
        // `step` of rows 0 … rows−1, addressed as self_view reads it.
        const ops::KvCacheView cache = self_view(s.layer, values);
        ops::store_kv({kv.data + (values ? A : 0), rows.count, A, kv.ld}, dh,
                      writable(cache, shape.step * cache.position_stride + first * cache.row_stride), 1);
      }
      return;
    }
    case StepKind::cross_kv_projection: {
      // The [rows, 2L·A] projection, a chunk of rows at a time, scattered head-major into
      // the cache (cross_view) while the chunk is still in cache — the whole fp32
      // product never exists.
      const ops::Matrix in = matrix(s.in, rows);
      const ops::Matrix scratch = matrix(s.scratch, {0, plan_.buffers()[s.scratch.buffer].rows});
      const std::int64_t layers = s.out.cols / (2 * A);
      if (first != 0) throw error_of("internal: the cross K/V projection runs on every row");
      const std::span<const std::int64_t> starts = source_starts(shape);
      ops::GemmEpilogue ep;
      ep.bias = s.linear->bias_data();
      std::int64_t sentence = 0;
      for (std::int64_t r0 = 0; r0 < rows.count; r0 += scratch.rows) {
        const std::int64_t n = std::min(scratch.rows, rows.count - r0);
        const ops::Matrix chunk{scratch.data, n, s.out.cols, scratch.ld};
        ops::gemm({in.row(r0), n, in.cols, in.ld}, s.linear->weight, chunk, ep, threads);
        // Rows r0 … r0+n−1 are positions of the sentences they fall in, each sentence's
        // run at once (its positions past its length are never read: cross_lengths).
        for (std::int64_t r = r0; r < r0 + n;) {
          while (starts[sentence + 1] <= r) ++sentence;
          const std::int64_t position = r - starts[sentence], run = std::min(starts[sentence + 1] - r, r0 + n - r);
          for (std::int64_t layer = 0; layer < layers; ++layer)
            for (const bool values : {false, true}) {
              // Positions position … position+run−1 of the sentence, as cross_view reads them.
              const ops::KvCacheView cache = cross_view(layer, values, shape);
              const std::int64_t at = sentence * cache.row_stride + position * cache.position_stride;
              const float* from = chunk.row(r - r0) + (2 * layer + (values ? 1 : 0)) * A;
              ops::KvCacheTarget to = writable(cache, at);
              to.row_stride = cache.position_stride;  // x's rows are positions here
              ops::store_kv({from, run, A, chunk.ld}, dh, to, threads);
            }
          r += run;
        }
      }
      return;
    }
    case StepKind::self_attention:
    case StepKind::cross_attention: {
      const ops::Matrix q = matrix(s.in, rows), out = matrix(s.out, rows);
      ops::DecodeAttentionArgs a;
      a.rows = rows.count, a.heads = H, a.head_dim = dh;
      a.q = q.data, a.q_row_stride = q.ld;
      a.out = out.data, a.out_row_stride = out.ld;
      a.scale = c.attention_scale;
      if (s.kind == StepKind::self_attention) {
        a.positions = relative_positions(c, model.decoder_position_bias, model.decoder[s.layer].relative);
        if (c.relative_attention == RelativeAttention::t5_bias)
          a.query_positions = buffer<std::int32_t>(io.query_positions) + first;
        a.k = self_view(s.layer, false, first);
        a.v = self_view(s.layer, true, first);
        a.kv_lengths = buffer<std::int32_t>(io.self_lengths) + first;
      } else {
        a.k = cross_view(s.layer, false, shape, first);
        a.v = cross_view(s.layer, true, shape, first);
        a.kv_lengths = buffer<std::int32_t>(io.cross_lengths) + first;
      }
      ops::attention_decode(a, threads);
      if (shape.capture != nullptr) capture(s, shape, a);
      return;
    }
    case StepKind::alignment: {
      // The probabilities the layer's cross_attention step just used, for its query.
      const ops::Matrix q = matrix(s.in, rows), out = matrix(s.out, rows);
      ops::AttentionProbsArgs a;
      a.rows = rows.count, a.heads = c.alignment_head_count(), a.head_dim = dh;
      a.q = q.data, a.q_row_stride = q.ld;
      a.k = cross_view(s.layer, false, shape, first);
      a.kv_lengths = buffer<std::int32_t>(io.cross_lengths) + first;
      a.out = out.data, a.out_row_stride = out.ld, a.columns = shape.source_length;
      a.scale = c.attention_scale;  // as the cross_attention step (T5: 1)
      ops::attention_probabilities(a, threads);
      return;
    }
    case StepKind::log_softmax:
      ops::log_softmax(matrix(s.in, rows), matrix(s.out, rows), threads);
      return;
  }
}

}  // namespace attend::runtime
