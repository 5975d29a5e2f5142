#include "plan/plan_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "attend/ops/activation.hpp"
#include "attend/ops/attention.hpp"
#include "attend/ops/attention_probs.hpp"
#include "attend/ops/embedding.hpp"
#include "attend/ops/normalization.hpp"
#include "attend/ops/softmax.hpp"

namespace attend::runtime {

ops::Matrix PlanExecutor::matrix(const Operand& o, std::int64_t rows) const {
  const PlanBuffer& b = plan_.buffers()[o.buffer];
  return {buffer<float>(o.buffer) + o.col, rows, o.cols, b.cols};
}

// The stacked cross K/V [batch·S, L·2D]: layer l's K at column l·2D, V after it; each
// row reads its sentence's S source positions.
ops::KvCacheView PlanExecutor::cross_view(std::int64_t layer, bool values, const PhaseShape& shape) const {
  const auto& io = plan_.io();
  const std::int64_t D = plan_.model().config().d_model, dh = plan_.model().config().head_dim();
  const std::int64_t ld = plan_.buffers()[io.cross_kv].cols, S = shape.source_length;
  const float* kv = buffer<float>(io.cross_kv) + layer * 2 * D + (values ? D : 0);
  return {kv, ld, S * ld, dh, buffer<std::int32_t>(io.cross_rows), 0};
}

void PlanExecutor::run(Phase phase, const PhaseShape& shape, double* step_seconds) const {
  const auto& steps = plan_.steps();
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].phase != phase) continue;
    if (steps[i].kind == StepKind::alignment && !shape.alignment) continue;
    if (step_seconds == nullptr) {
      run_step(steps[i], shape);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    run_step(steps[i], shape);
    step_seconds[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
}

void PlanExecutor::run_step(const PlanStep& s, const PhaseShape& shape) const {
  const Model& model = plan_.model();
  const ModelConfig& c = model.config();
  const auto& io = plan_.io();
  const std::int64_t rows = shape.rows, D = c.d_model, H = c.num_heads, dh = c.head_dim();
  const int threads = s.threads;
  switch (s.kind) {
    case StepKind::embed_source:
    case StepKind::embed_target: {
      const bool source = s.kind == StepKind::embed_source;
      const Table& tokens = source ? model.source_embedding : model.target_embedding_table();
      const Table& positions = source ? model.source_positions : model.target_position_table();
      ops::embedding(tokens.view(), buffer<std::int32_t>(s.in.buffer), c.embedding_scale, positions.view(),
                     buffer<std::int32_t>(source ? io.source_positions : io.target_positions), matrix(s.out, rows), threads);
      return;
    }
    case StepKind::layer_norm:
      ops::layer_norm(matrix(s.in, rows), matrix(s.out, rows), s.norm->with_epsilon(c.layer_norm_epsilon), threads);
      return;
    case StepKind::linear: {
      ops::GemmEpilogue ep;
      ep.bias = s.linear->bias_data();
      ep.activation = s.activation;
      if (s.residual.buffer >= 0) ep.residual = matrix(s.residual, rows);
      ops::gemm(matrix(s.in, rows), s.linear->weight, matrix(s.out, rows), ep, threads);
      return;
    }
    case StepKind::encoder_attention: {
      // The fused QKV output [batch·S, 3D] read in place as Q, K, V heads.
      const ops::Matrix qkv = matrix(s.in, rows), out = matrix(s.out, rows);
      const std::int64_t S = shape.source_length;
      ops::AttentionArgs a;
      a.batch = shape.batch, a.heads = H, a.q_len = S, a.kv_len = S, a.head_dim = dh;
      a.q = {qkv.data, S * qkv.ld, dh, qkv.ld};
      a.k = {qkv.data + D, S * qkv.ld, dh, qkv.ld};
      a.v = {qkv.data + 2 * D, S * qkv.ld, dh, qkv.ld};
      a.out = {out.data, S * out.ld, dh, out.ld};
      a.kv_lengths = buffer<std::int32_t>(io.source_lengths);
      ops::attention(a, threads);
      return;
    }
    case StepKind::cache_store: {
      // Row i's K and V for this step go to slot (step, i) of the layer's cache.
      const ops::Matrix kv = matrix(s.in, rows);
      const std::int64_t R = plan_.limits().decoder_rows(), T = plan_.limits().max_target_length;
      float* keys = buffer<float>(io.self_keys) + ((s.layer * T + shape.step) * R) * D;
      float* values = buffer<float>(io.self_values) + ((s.layer * T + shape.step) * R) * D;
      for (std::int64_t i = 0; i < rows; ++i) {
        std::memcpy(keys + i * D, kv.row(i), D * sizeof(float));
        std::memcpy(values + i * D, kv.row(i) + D, D * sizeof(float));
      }
      return;
    }
    case StepKind::self_attention:
    case StepKind::cross_attention: {
      const ops::Matrix q = matrix(s.in, rows), out = matrix(s.out, rows);
      ops::DecodeAttentionArgs a;
      a.rows = rows, a.heads = H, a.head_dim = dh;
      a.q = q.data, a.q_row_stride = q.ld;
      a.out = out.data, a.out_row_stride = out.ld;
      if (s.kind == StepKind::self_attention) {
        // Slot (j, row) of layer l: keys + ((l·T + j)·R + row)·D; rows through the table.
        const std::int64_t R = plan_.limits().decoder_rows(), T = plan_.limits().max_target_length;
        const std::int32_t* table = buffer<std::int32_t>(io.self_rows);
        a.k = {buffer<float>(io.self_keys) + s.layer * T * R * D, R * D, D, dh, table, T};
        a.v = {buffer<float>(io.self_values) + s.layer * T * R * D, R * D, D, dh, table, T};
        a.kv_lengths = buffer<std::int32_t>(io.self_lengths);
      } else {
        a.k = cross_view(s.layer, false, shape);
        a.v = cross_view(s.layer, true, shape);
        a.kv_lengths = buffer<std::int32_t>(io.cross_lengths);
      }
      ops::attention_decode(a, threads);
      return;
    }
    case StepKind::alignment: {
      // The probabilities the layer's cross_attention step just used, for its query.
      const ops::Matrix q = matrix(s.in, rows), out = matrix(s.out, rows);
      ops::AttentionProbsArgs a;
      a.rows = rows, a.heads = c.alignment_head_count(), a.head_dim = dh;
      a.q = q.data, a.q_row_stride = q.ld;
      a.k = cross_view(s.layer, false, shape);
      a.kv_lengths = buffer<std::int32_t>(io.cross_lengths);
      a.out = out.data, a.out_row_stride = out.ld, a.columns = shape.source_length;
      ops::attention_probabilities(a, threads);
      return;
    }
    case StepKind::log_softmax:
      ops::log_softmax(matrix(s.in, rows), matrix(s.out, rows), threads);
      return;
  }
}

}  // namespace attend::runtime
