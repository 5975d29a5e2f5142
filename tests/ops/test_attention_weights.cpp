// The attention weights ops (attention_probs.hpp): every head's probabilities, recomputed
// from the arguments the fused kernels take. Checked by what they must be: each row a
// distribution over the keys it sees (0 at masked and future keys, sum 1), and — the
// point of recomputing from the same arguments — the weights applied to the values give
// the fused kernels' outputs.
//
// Tolerance: the fused kernels compute in float (scores, exp2, the weighted sum), these
// ops and the sums below in double, so outputs differ by the kernels' float rounding: a
// score sums head_dim = 32 products, an output averages ≤ 19 values of size ≤ 2.5
// (values in [-1, 1], relative values in [-1.5, 1.5]), so at worst about
// 2.5·(32 + 19)·ε(float) ≈ 8e-6 (measured: ≤ 5e-7 over seeds, AVX-512, AVX2 and SSE2).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attend/ops/attention.hpp"
#include "attend/ops/attention_probs.hpp"
#include "attend/ops/bf16.hpp"
#include "support/test_support.hpp"

namespace attend::test {
namespace {

constexpr double kOutputTolerance = 1e-5;

std::vector<float> random_vector(Rng& rng, index_t n, float bound) {
  std::vector<float> v(static_cast<size_t>(n));
  rng.fill(v, -bound, bound);
  return v;
}

struct Relative {
  std::vector<float> bias, keys, values;
  ops::RelativePositions p;
};

// T5's bias and Shaw's keys and values at max distance 3, as asked.
Relative relative_terms(Rng& rng, bool bias, bool shaw, index_t heads, index_t d) {
  Relative r;
  if (!bias && !shaw) return r;
  r.p.max_distance = 3;
  if (bias) {
    r.bias = random_vector(rng, heads * 7, 1.5f);
    r.p.bias = r.bias.data(), r.p.bias_head_stride = 7;
  }
  if (shaw) {
    r.keys = random_vector(rng, 7 * d, 1.5f);
    r.values = random_vector(rng, 7 * d, 1.5f);
    r.p.keys = r.keys.data(), r.p.values = r.values.data();
  }
  return r;
}

index_t clipped(index_t j, index_t position, index_t r) { return std::clamp(j - position, -r, r) + r; }

// Σ_j p_j·(value(j) + relative value of j) — what attention outputs, given its weights.
template <class Value>
std::vector<double> apply_weights(const float* p, index_t keys, index_t d, const Value& value,
                                  const ops::RelativePositions& rel, index_t position) {
  std::vector<double> out(static_cast<size_t>(d), 0.0);
  for (index_t j = 0; j < keys; ++j)
    for (index_t c = 0; c < d; ++c) {
      double v = value(j, c);
      if (rel.values != nullptr) v += rel.values[clipped(j, position, rel.max_distance) * d + c];
      out[c] += p[j] * v;
    }
  return out;
}

}  // namespace

TEST_CASE("attention_weights: every head's rows are distributions that reproduce the fused output", "[ops][attention-weights]") {
  Rng rng(test_seed() ^ 20);
  const index_t B = 3, H = 2, d = 32;
  for (const bool causal : {false, true})
    for (const int relative : {0, 1, 2, 3}) {  // none, T5 bias, Shaw keys/values, both
      const index_t S = 19, T = causal ? S : 11;
      INFO((causal ? "causal" : "not causal") << ", relative terms " << relative);
      const std::vector<float> q = random_vector(rng, B * H * T * d, 1), k = random_vector(rng, B * H * S * d, 1),
                               v = random_vector(rng, B * H * S * d, 1);
      std::vector<float> fused(static_cast<size_t>(B * H * T * d));
      const std::vector<std::int32_t> lengths = {static_cast<std::int32_t>(S), 7, 0};  // padding; a sentence of none
      const Relative rel = relative_terms(rng, relative & 1, relative & 2, H, d);
      ops::AttentionArgs a;
      a.batch = B, a.heads = H, a.q_len = T, a.kv_len = S, a.head_dim = d, a.causal = causal;
      a.q = {q.data(), H * T * d, T * d, d};
      a.k = {k.data(), H * S * d, S * d, d};
      a.v = {v.data(), H * S * d, S * d, d};
      a.out = {fused.data(), H * T * d, T * d, d};
      a.kv_lengths = lengths.data();
      a.positions = rel.p;
      ops::attention(a, 2);
      std::vector<float> w(static_cast<size_t>(B * H * T * S), -1.0f);  // -1: a weight never written
      const ops::WeightsView view{w.data(), H * T * S, T * S, S};
      ops::attention_weights(a, view, 2);

      for (index_t b = 0; b < B; ++b)
        for (index_t h = 0; h < H; ++h)
          for (index_t t = 0; t < T; ++t) {
            const float* p = view.at(b, h, t);
            const index_t position = t + S - T;
            const index_t visible = causal ? std::min<index_t>(lengths[b], position + 1) : lengths[b];
            double total = 0;
            for (index_t j = 0; j < S; ++j) {
              if (j >= visible) REQUIRE(p[j] == 0.0f);  // padding and the future: exactly 0
              REQUIRE((p[j] >= 0.0f && p[j] <= 1.0f));
              total += p[j];
            }
            REQUIRE(total == Approx(visible > 0 ? 1.0 : 0.0).margin(1e-6));  // S float roundings of ≤ 1
            const auto out = apply_weights(p, S, d, [&](index_t j, index_t c) { return v[((b * H + h) * S + j) * d + c]; },
                                           rel.p, position);
            for (index_t c = 0; c < d; ++c) REQUIRE(out[c] == Approx(fused[((b * H + h) * T + t) * d + c]).margin(kOutputTolerance));
          }
    }
}

TEST_CASE("attention_decode_weights: a decoding step's heads over f32 and bf16 caches reproduce attention_decode",
          "[ops][attention-weights]") {
  Rng rng(test_seed() ^ 21);
  const index_t rows = 3, H = 4, d = 32, L = 13, columns = 16;
  for (const ops::KvType type : {ops::KvType::f32, ops::KvType::bf16})
    for (const int relative : {0, 1, 2, 3}) {
      INFO(ops::kv_type_name(type) << ", relative terms " << relative);
      // Cache [position][row][head][d], rows through a table that swaps rows 0 and 2 (as beam search reorders).
      const std::vector<float> k32 = random_vector(rng, L * rows * H * d, 1), v32 = random_vector(rng, L * rows * H * d, 1);
      std::vector<std::uint16_t> k16(k32.size()), v16(v32.size());
      for (size_t i = 0; i < k32.size(); ++i) k16[i] = ops::bf16_from_float(k32[i]), v16[i] = ops::bf16_from_float(v32[i]);
      const bool bf16 = type == ops::KvType::bf16;
      const std::vector<std::int32_t> table = {2, 1, 0}, lengths = {static_cast<std::int32_t>(L), 5, 1},
                                      positions = {static_cast<std::int32_t>(L - 1), 9, 0};
      const Relative rel = relative_terms(rng, relative & 1, relative & 2, H, d);
      const std::vector<float> q = random_vector(rng, rows * H * d, 1);
      std::vector<float> out(static_cast<size_t>(rows * H * d));
      ops::DecodeAttentionArgs a;
      a.rows = rows, a.heads = H, a.head_dim = d;
      a.q = q.data(), a.q_row_stride = H * d, a.out = out.data(), a.out_row_stride = H * d;
      a.k = {bf16 ? static_cast<const void*>(k16.data()) : k32.data(), rows * H * d, H * d, d, table.data(), 0, type};
      a.v = {bf16 ? static_cast<const void*>(v16.data()) : v32.data(), rows * H * d, H * d, d, table.data(), 0, type};
      a.kv_lengths = lengths.data();
      a.positions = rel.p;
      a.query_positions = relative != 0 ? positions.data() : nullptr;
      ops::attention_decode(a, 2);
      std::vector<float> w(static_cast<size_t>(rows * H * columns), -1.0f);
      const ops::WeightsView view{w.data(), H * columns, columns, 0};
      ops::attention_decode_weights(a, view, columns, 2);

      for (index_t i = 0; i < rows; ++i)
        for (index_t h = 0; h < H; ++h) {
          const float* p = view.at(i, h, 0);
          double total = 0;
          for (index_t j = 0; j < columns; ++j) {
            if (j >= lengths[i]) REQUIRE(p[j] == 0.0f);
            total += p[j];
          }
          REQUIRE(total == Approx(1.0).margin(1e-6));
          const index_t position = relative != 0 ? positions[i] : lengths[i] - 1;
          const auto value = [&](index_t j, index_t c) {
            const size_t at = static_cast<size_t>((j * rows + table[i]) * H * d + h * d + c);
            return bf16 ? double(ops::float_from_bf16(v16[at])) : double(v32[at]);
          };
          const auto expected = apply_weights(p, lengths[i], d, value, rel.p, position);
          for (index_t c = 0; c < d; ++c) REQUIRE(expected[c] == Approx(out[i * H * d + h * d + c]).margin(kOutputTolerance));
        }
    }
}

TEST_CASE("attention weights ops report bad arguments as attend::Error", "[ops][attention-weights][errors]") {
  std::vector<float> q(32), k(32), w(4);
  const std::vector<std::int32_t> too_long = {5};
  ops::DecodeAttentionArgs a;
  a.rows = 1, a.heads = 1, a.head_dim = 32, a.q = q.data(), a.q_row_stride = 32;
  a.k = {k.data(), 32, 32, 32, nullptr, 0, ops::KvType::f32};
  a.kv_lengths = too_long.data();
  CHECK_THROWS_WITH(ops::attention_decode_weights(a, {w.data(), 4, 4, 0}, 4, 1),
                    Catch::Matchers::Contains("attention_decode_weights") && Catch::Matchers::Contains("columns = 4"));
  ops::AttentionArgs b;
  b.batch = 1, b.heads = 1, b.q_len = 1, b.kv_len = 1, b.head_dim = 0;
  CHECK_THROWS_WITH(ops::attention_weights(b, {w.data(), 1, 1, 1}, 1), Catch::Matchers::Contains("head_dim"));
}

}  // namespace attend::test
