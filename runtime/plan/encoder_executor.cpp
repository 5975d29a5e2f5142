#include "plan/encoder_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attend/error.hpp"
#include "attend/ops/attention.hpp"
#include "attend/ops/embedding.hpp"
#include "attend/ops/gemm.hpp"
#include "attend/ops/normalization.hpp"
#include "plan/outlier_rows.hpp"
#include "plan/sequence_attention.hpp"

namespace attend::runtime {
namespace {

// sentence-transformers' Pooling over one sequence's n ≥ 1 rows of x, into out[0, D).
void pool(Pooling mode, ops::ConstMatrix x, std::int64_t first, std::int64_t n, float* out) {
  const std::int64_t D = x.cols;
  switch (mode) {
    case Pooling::cls: std::copy_n(x.row(first), D, out); return;
    case Pooling::last_token: std::copy_n(x.row(first + n - 1), D, out); return;
    case Pooling::max:
      std::copy_n(x.row(first), D, out);
      for (std::int64_t r = 1; r < n; ++r)
        for (std::int64_t k = 0; k < D; ++k) out[k] = std::max(out[k], x(first + r, k));
      return;
    case Pooling::mean:
    case Pooling::mean_sqrt_len:
    case Pooling::weighted_mean: {
      // weightedmean weighs position i (from 0) by i + 1, as sentence-transformers does.
      const bool weighted = mode == Pooling::weighted_mean;
      std::fill_n(out, D, 0.0f);
      for (std::int64_t r = 0; r < n; ++r) {
        const float w = weighted ? static_cast<float>(r + 1) : 1.0f;
        for (std::int64_t k = 0; k < D; ++k) out[k] += w * x(first + r, k);
      }
      const double total = weighted ? 0.5 * double(n) * double(n + 1) : double(n);
      const float divisor = static_cast<float>(mode == Pooling::mean_sqrt_len ? std::sqrt(double(n)) : total);
      for (std::int64_t k = 0; k < D; ++k) out[k] /= divisor;
      return;
    }
  }
}

}  // namespace

ops::Matrix EncoderExecutor::matrix(const Operand& o, std::int64_t rows) const {
  const PlanBuffer& b = plan_.buffers()[o.buffer];
  return {buffer<float>(o.buffer) + o.col, rows, o.cols, b.cols};
}

ops::Matrix EncoderExecutor::matrix(int id, std::int64_t rows) const {
  return matrix(Operand{id, 0, plan_.buffers()[id].cols}, rows);
}

ops::Matrix EncoderExecutor::matrix(const Operand& o, std::int64_t first, std::int64_t rows) const {
  const ops::Matrix all = matrix(o, plan_.holds_chunk(o.buffer) ? rows : first + rows);
  return {plan_.holds_chunk(o.buffer) ? all.data : all.row(first), rows, all.cols, all.ld};
}

void EncoderExecutor::run(EncoderPhase phase, const EncoderShape& shape, double* step_seconds,
                          EncoderStepCost* costs) const {
  const auto& steps = plan_.steps();
  auto timed = [&](size_t i, std::int64_t first, std::int64_t rows) {
    if (step_seconds == nullptr) return run_step(steps[i], shape, first, rows, costs ? costs + i : nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    run_step(steps[i], shape, first, rows, costs ? costs + i : nullptr);
    step_seconds[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].phase != phase) continue;
    if (steps[i].kind == EncoderStepKind::normalize && !shape.normalize) continue;
    const std::int64_t rows = phase == EncoderPhase::body ? shape.tokens : shape.sequences;
    if (steps[i].group < 0) {
      timed(i, 0, rows);
      continue;
    }
    size_t end = i;  // the group: steps i … end − 1
    while (end < steps.size() && steps[end].group == steps[i].group) ++end;
    const EncoderPlan::RowGroup& group = plan_.groups()[steps[i].group];
    const std::int32_t* starts = buffer<std::int32_t>(plan_.io().starts);
    std::int64_t next_sequence = 0;
    for (std::int64_t first = 0; first < rows;) {
      std::int64_t n = std::min(group.rows, rows - first);
      if (group.whole_sequences) {  // as many whole sequences as fit (a sequence always does)
        std::int64_t last = next_sequence + 1;
        while (last < shape.sequences && starts[last + 1] - first <= group.rows) ++last;
        n = starts[last] - first, next_sequence = last;
      }
      for (size_t j = i; j < end; ++j) timed(j, first, n);
      first += n;
    }
    i = end - 1;
  }
}

void EncoderExecutor::run_step(const EncoderStep& s, const EncoderShape& shape, std::int64_t first, std::int64_t rows,
                               EncoderStepCost* cost) const {
  const EncoderModel& model = plan_.model();
  const EncoderConfig& c = model.config();
  const auto& io = plan_.io();
  const std::int64_t D = c.d_model, H = c.num_heads, dh = c.head_dim();
  const std::int32_t* starts = buffer<std::int32_t>(io.starts);
  switch (s.kind) {
    case EncoderStepKind::embed: {
      const ops::Matrix out = matrix(s.out, rows);
      ops::embedding(model.token_embedding.view(), buffer<std::int32_t>(io.tokens), 1.0f, model.positions.f32(),
                     buffer<std::int32_t>(io.positions), out, s.threads);
      if (!model.type_deltas.empty()) {
        const std::int32_t* types = buffer<std::int32_t>(io.types);
        for (std::int64_t r = 0; r < rows; ++r) {
          if (types[r] == 0) continue;  // type 0 is folded into the position table
          const float* delta = model.type_deltas.data() + types[r] * D;
          for (std::int64_t k = 0; k < D; ++k) out(r, k) += delta[k];
        }
      }
      return;
    }
    case EncoderStepKind::layer_norm:
      ops::layer_norm(matrix(s.in, first, rows), matrix(s.out, first, rows), s.norm->with_epsilon(c.layer_norm_epsilon),
                      s.threads, {}, {}, s.magnitudes >= 0 ? buffer<ops::RowMagnitude>(s.magnitudes) + first : nullptr);
      return;
    case EncoderStepKind::linear: {
      ops::GemmEpilogue ep;
      ep.bias = s.linear->bias_data();
      ep.activation = s.activation;
      if (s.residual.buffer >= 0) ep.residual = matrix(s.residual, first, rows);
      const ops::Matrix in = matrix(s.in, first, rows), out = matrix(s.out, first, rows);
      ops::GemmProfile profile;
      if (cost != nullptr) {
        ep.profile = &profile;
        cost->multiply_adds += static_cast<double>(rows) * static_cast<double>(out.cols) * static_cast<double>(in.cols);
      }
      // Adds what the GEMM reported when the step ends, however it ends.
      const struct Report {
        EncoderStepCost* cost;
        const ops::GemmProfile& profile;
        ~Report() {
          if (cost != nullptr) cost->quantize_seconds += profile.quantize_seconds.load(std::memory_order_relaxed);
        }
      } report{cost, profile};
      if (s.outliers < 0) {
        ops::gemm(in, s.linear->weight, out, ep, s.threads);
        return;
      }
      // The listed rows within [first, first + rows) (all of them, outside a row group).
      const std::int32_t* list = buffer<std::int32_t>(s.outliers);
      const std::span<const std::int32_t> all(list + 1, static_cast<size_t>(list[0]));
      const auto begin = std::lower_bound(all.begin(), all.end(), first);
      const auto end = std::lower_bound(begin, all.end(), first + rows);
      gemm_keeping_outlier_rows(in, s.linear->weight.view(), out, ep, s.threads, {begin, end}, first);
      return;
    }
    case EncoderStepKind::attention: {
      // Each sequence's rows of the fused QKV [tokens, 3D], read in place as its Q, K, V
      // heads: no pad enters a score, and nothing is copied. The rows [first, first +
      // rows) hold whole sequences (a row group's chunk: its buffers start at `first`).
      const ops::Matrix qkv = matrix(s.in, first, rows), out = matrix(s.out, first, rows);
      const std::int32_t* end = starts + shape.sequences + 1;
      const std::int32_t* const chunk_begin = std::lower_bound(starts, end, first);
      const std::int32_t* chunk_end = chunk_begin;  // one past the chunk's last sequence start
      while (chunk_end + 1 < end && chunk_end[0] < first + rows) ++chunk_end;
      // Heads [h0, h0 + count) of sequence `seq`.
      auto heads_of = [&](const std::int32_t* seq, std::int64_t h0, std::int64_t count) {
        return sequence_heads(qkv, out, seq[0] - first, seq[1] - seq[0], D, dh, h0, count);
      };
      for (const std::int32_t* seq = chunk_begin; seq < chunk_end && cost != nullptr; ++seq)
        cost->multiply_adds += 2.0 * static_cast<double>(H * (seq[1] - seq[0]) * (seq[1] - seq[0]) * dh);  // QKᵀ, PV
      if (shape.capture != nullptr || s.threads <= 1) {
        for (const std::int32_t* seq = chunk_begin; seq < chunk_end; ++seq) {
          const ops::AttentionArgs a = heads_of(seq, 0, H);
          ops::attention(a, s.threads);
          if (shape.capture != nullptr) ops::attention_weights(a, shape.capture->encoder_self.layer(s.layer), s.threads);
        }
        return;
      }
      // A BERT chunk holds ~10 sequences of ~50 tokens: one region for them all.
      attention_over_sequences(chunk_end - chunk_begin, H, s.threads, [&](std::int64_t i, std::int64_t h0, std::int64_t count) {
        return heads_of(chunk_begin + i, h0, count);
      });
      return;
    }
    case EncoderStepKind::first_token: {
      const ops::Matrix in = matrix(s.in, shape.tokens), out = matrix(s.out, rows);
      for (std::int64_t b = 0; b < rows; ++b) std::copy_n(in.row(starts[b]), D, out.row(b));
      return;
    }
    case EncoderStepKind::pool: {
      const ops::Matrix in = matrix(s.in, shape.tokens), out = matrix(s.out, rows);
      for (std::int64_t b = 0; b < rows; ++b) pool(s.pooling, in, starts[b], starts[b + 1] - starts[b], out.row(b));
      return;
    }
    case EncoderStepKind::tanh: {
      const ops::Matrix out = matrix(s.out, rows);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t k = 0; k < out.cols; ++k) out(r, k) = std::tanh(out(r, k));
      return;
    }
    case EncoderStepKind::outlier_rows: {
      std::int32_t* list = buffer<std::int32_t>(s.out.buffer);
      list[0] = static_cast<std::int32_t>(
          s.magnitudes >= 0 ? list_outlier_rows({buffer<ops::RowMagnitude>(s.magnitudes), static_cast<size_t>(rows)},
                                                s.in.cols, list + 1)
                            : find_outlier_rows(matrix(s.in, rows), list + 1, s.threads));
      return;
    }
    case EncoderStepKind::normalize: {
      // torch.nn.functional.normalize: x / max(‖x‖₂, 1e-12).
      const ops::Matrix out = matrix(s.out, rows);
      for (std::int64_t r = 0; r < rows; ++r) {
        double sum = 0;
        for (std::int64_t k = 0; k < out.cols; ++k) sum += double(out(r, k)) * double(out(r, k));
        const float scale = static_cast<float>(1.0 / std::max(std::sqrt(sum), 1e-12));
        for (std::int64_t k = 0; k < out.cols; ++k) out(r, k) *= scale;
      }
      return;
    }
  }
}

}  // namespace attend::runtime
