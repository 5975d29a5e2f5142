// The bf16 and s8 GEMMs beyond the differential harness: their accuracy against fp32
// within stated bounds, packing that keeps CTranslate2's int8 weights exactly, NaN
// propagation, caller scratch, and argument errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attend/error.hpp"
#include "attend/ops/aligned_buffer.hpp"
#include "attend/ops/gemm.hpp"
#include "attend/ops/reference.hpp"
#include "gemm_driver.hpp"
#include "support/test_support.hpp"

using Catch::Matchers::Contains;

namespace attend::test {
namespace {

// ISAs whose kernel for `type` no lower available ISA shares.
std::vector<ops::Isa> isas_with_own_kernel(ops::WeightType type) {
  std::vector<ops::Isa> out;
  for (ops::Isa isa : ops::available_isas()) {
    bool own = true;
    for (ops::Isa lower : ops::available_isas())
      own = own && !(lower < isa && std::string(ops::gemm_kernel_name(lower, type)) == ops::gemm_kernel_name(isa, type));
    if (own) out.push_back(isa);
  }
  return out;
}

double rms(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

}  // namespace

// Worst-case bounds from the rounding alone (no statistics):
//   s8:   |Δa| ≤ fa/2 and |Δw| ≤ fw/2 per element (fa, fw the row's and column's
//         quantization steps), so |Δc| ≤ fa/2·Σ|w| + fw/2·Σ|a| + K·fa·fw/4.
//   bf16: |Δx| ≤ 2⁻⁹·|x| per element, so |Δc| ≤ (2⁻⁸ + 2⁻¹⁸)·Σ|a·w|.
// Both plus 1e-5·Σ|a·w| for the fp32 arithmetic. Typical errors, on activations
// U(−1, 1) and weights N(0, 0.05²), K = 512 (measured): s8 0.84% (7-bit activations
// 1.08%) and bf16 0.22% of the outputs' RMS; checked at 2% / 0.5%.
TEST_CASE("bf16 and s8 GEMMs are within their error bounds of fp32", "[ops][gemm][accuracy]") {
  Rng rng(test_seed() ^ 4242);
  const index_t M = 64, N = 300, K = 512;
  Buffer2D a(M, K), w(N, K), exact(M, N), got(M, N);
  a.fill_random(rng, -1, 1);
  for (index_t j = 0; j < N; ++j)
    for (index_t k = 0; k < K; ++k) w.at(j, k) = rng.normal(0.0f, 0.05f);
  ops::reference::gemm(a.view(), w.view(), exact.view(), 1.0f, nullptr, ops::Activation::none, {});

  for (auto type : {ops::WeightType::bf16, ops::WeightType::s8})
    for (ops::Isa isa : isas_with_own_kernel(type)) {
      const ops::PackedWeight packed = ops::pack_weight(w.view(), type, isa);
      ops::gemm(a.view(), packed, got.view(), {}, 2);
      constexpr int levels = ops::kS8ActivationLevels;
      std::vector<double> errors, values;
      double worst_ratio = 0;
      for (index_t i = 0; i < M; ++i) {
        double a_abs = 0, a_max = 0;
        for (index_t k = 0; k < K; ++k) a_abs += std::abs(a.at(i, k)), a_max = std::max<double>(a_max, std::abs(a.at(i, k)));
        for (index_t j = 0; j < N; ++j) {
          double w_abs = 0, w_max = 0, aw_abs = 0;
          for (index_t k = 0; k < K; ++k) {
            w_abs += std::abs(w.at(j, k));
            w_max = std::max<double>(w_max, std::abs(w.at(j, k)));
            aw_abs += std::abs(double(a.at(i, k)) * w.at(j, k));
          }
          const double fa = a_max / levels, fw = w_max / 127;
          const double bound = type == ops::WeightType::s8
                                   ? fa / 2 * w_abs + fw / 2 * a_abs + K * fa * fw / 4 + 1e-5 * aw_abs
                                   : (std::ldexp(1.0, -8) + std::ldexp(1.0, -18) + 1e-5) * aw_abs;
          const double err = std::abs(double(got.at(i, j)) - exact.at(i, j));
          worst_ratio = std::max(worst_ratio, err / bound);
          errors.push_back(err);
          values.push_back(exact.at(i, j));
        }
      }
      const double relative_rms = rms(errors) / rms(values);
      const double typical = type == ops::WeightType::bf16 ? 0.005 : 0.02;
      INFO(ops::gemm_kernel_name(isa, type) << ": worst error / bound " << worst_ratio << ", RMS error / RMS output "
                                            << relative_rms);
      CHECK(worst_ratio <= 1.0);
      CHECK(relative_rms <= typical);
    }
}

TEST_CASE("s8 packing keeps CTranslate2's int8 weights exactly", "[ops][gemm][pack]") {
  Rng rng(test_seed() ^ 4343);
  const index_t N = 45, K = 70;
  std::vector<std::int8_t> q(N * K);
  std::vector<float> scales(N);
  for (auto& x : q) x = static_cast<std::int8_t>(rng.uniform_int(-128, 127));
  for (auto& s : scales) s = 127.0f / rng.uniform(0.01f, 3.0f);
  scales[3] = std::numeric_limits<float>::infinity();  // CTranslate2's all-zero row
  for (ops::Isa isa : isas_with_own_kernel(ops::WeightType::s8)) {
    const ops::PackedWeight p = ops::pack_weight_s8({q.data(), N, K}, scales.data(), isa);
    CHECK(p.type() == ops::WeightType::s8);
    CHECK(p.bytes() == ops::packed_weight_bytes(N, K, ops::WeightType::s8, isa));
    Buffer2D back(N, K);
    ops::unpack_weight(p.view(), back.view());
    int mismatches = 0;
    for (index_t j = 0; j < N; ++j)
      for (index_t k = 0; k < K; ++k)  // (a −128, never written by CTranslate2, is read as −127)
        mismatches += back.at(j, k) != float(std::max<std::int8_t>(q[j * K + k], -127)) * (1.0f / scales[j]);
    INFO(ops::isa_name(isa));
    CHECK(mismatches == 0);
  }
}

TEST_CASE("packing fp32 as s8 and bf16 rounds as the references do", "[ops][gemm][pack]") {
  Rng rng(test_seed() ^ 4444);
  const index_t N = 37, K = 53;
  Buffer2D w(N, K), back(N, K);
  w.fill_random(rng, -3, 3);
  w.at(0, 0) = 1.00390625f;   // halfway between two bf16: rounds to the even one (1.0)
  w.at(0, 1) = 1.01171875f;   // halfway, rounds up to the even one (1.015625)
  w.at(1, 0) = 0.0f;
  for (index_t k = 0; k < K; ++k) w.at(2, k) = 0.0f;  // an all-zero row quantizes to 0
  std::vector<std::int8_t> q(N * K);
  std::vector<float> factor(N);
  ops::reference::quantize_rows(w.view(), 127, q.data(), factor.data());
  for (ops::Isa isa : ops::available_isas()) {
    INFO(ops::isa_name(isa));
    ops::unpack_weight(ops::pack_weight(w.view(), ops::WeightType::s8, isa).view(), back.view());
    int s8_mismatches = 0, bf16_mismatches = 0;
    for (index_t j = 0; j < N; ++j)
      for (index_t k = 0; k < K; ++k) {
        // Packed as CTranslate2 stores it: scale = 127/amax, dequantized by 1/scale.
        float amax = 0;
        for (index_t kk = 0; kk < K; ++kk) amax = std::max(amax, std::abs(w.at(j, kk)));
        const float dequantize = amax > 0 ? 1.0f / (127.0f / amax) : 0.0f;
        s8_mismatches += back.at(j, k) != float(q[j * K + k]) * dequantize;
      }
    ops::unpack_weight(ops::pack_weight(w.view(), ops::WeightType::bf16, isa).view(), back.view());
    for (index_t j = 0; j < N; ++j)
      for (index_t k = 0; k < K; ++k) bf16_mismatches += back.at(j, k) != ops::reference::round_to_bf16(w.at(j, k));
    CHECK(s8_mismatches == 0);
    CHECK(bf16_mismatches == 0);
    CHECK(back.at(0, 0) == 1.0f);
    CHECK(back.at(0, 1) == 1.015625f);
  }
  // Memory: s8 is a quarter of f32 (plus one float per output), bf16 a half. N = 768 is a
  // multiple of every kernel's panel width (8, 16, 24 on AVX2's 4×24 fp32 tile, 32, 64),
  // so no type's panels carry padding columns the others do not.
  const ops::Isa best = ops::available_isas().front();
  const index_t n = 768, k = 512;
  const auto f32_bytes = ops::packed_weight_bytes(n, k, ops::WeightType::f32, best);
  CHECK(f32_bytes == n * k * sizeof(float));
  CHECK(ops::packed_weight_bytes(n, k, ops::WeightType::bf16, best) == f32_bytes / 2);
  CHECK(ops::packed_weight_bytes(n, k, ops::WeightType::s8, best) == f32_bytes / 4 + n * sizeof(float));
}

TEST_CASE("s8 and bf16 GEMMs propagate NaN and inf in A to their rows only", "[ops][gemm]") {
  const index_t M = 3, N = 40, K = 20;
  Buffer2D a(M, K), w(N, K), c(M, N);
  Rng rng(test_seed() ^ 4545);
  a.fill_random(rng, -1, 1);
  w.fill_random(rng, -1, 1);
  a.at(0, 7) = std::numeric_limits<float>::quiet_NaN();
  a.at(2, 3) = std::numeric_limits<float>::infinity();
  for (ops::Isa isa : ops::available_isas())
    for (auto type : {ops::WeightType::bf16, ops::WeightType::s8}) {
      ops::gemm(a.view(), ops::pack_weight(w.view(), type, isa), c.view(), {}, 1);
      INFO(ops::gemm_kernel_name(isa, type));
      for (index_t j = 0; j < N; ++j) {
        CHECK_FALSE(std::isfinite(c.at(0, j)));
        CHECK(std::isfinite(c.at(1, j)));
        CHECK_FALSE(std::isfinite(c.at(2, j)));
      }
    }
}

// Rows whose every value quantizes to ±127 over a K of 257 16-value steps: the largest
// per-step sums the quantizer's row sums (ops' Σq, which the VNNI kernel's start value
// needs) ever meet, past the 127 steps after which its 16-bit sums are widened, and a
// masked tail. Weights are integers with scale 1, so each output is Σ_k sign_k·w_jk
// exactly (within fp32's rounding of the int32 sum); an overflowed row sum would be off
// by thousands. Every ISA gives the same bits.
TEST_CASE("s8 GEMM: rows at ±127 everywhere over a long K keep their exact sums", "[ops][gemm][int8]") {
  const index_t M = 4, N = 24, K = 4100;
  Buffer2D a(M, K), c(M, N), first(M, N);
  std::vector<std::int8_t> w(static_cast<size_t>(N * K));
  Rng rng(test_seed() ^ 4747);
  for (auto& x : w) x = static_cast<std::int8_t>(rng.uniform_int(-127, 127));
  for (index_t k = 0; k < K; ++k) {
    a.at(0, k) = 1.0f;                       // every pair +254
    a.at(1, k) = -1.0f;                      // every pair −254
    a.at(2, k) = k % 2 ? 0.5f : -0.5f;       // alternating
    a.at(3, k) = (k * 7919) % 3 ? 2.0f : -2.0f;
  }
  const std::vector<float> scales(N, 1.0f);
  bool have_first = false;
  for (ops::Isa isa : ops::available_isas()) {
    INFO("isa " << ops::isa_name(isa));
    const ops::PackedWeight p = ops::pack_weight_s8({w.data(), N, K}, scales.data(), isa);
    ops::gemm(a.view(), p, c.view(), {}, 1);
    for (index_t r = 0; r < M; ++r)
      for (index_t j = 0; j < N; ++j) {
        double exact = 0;
        for (index_t k = 0; k < K; ++k) exact += (a.at(r, k) > 0 ? 1.0 : -1.0) * w[static_cast<size_t>(j * K + k)];
        exact *= std::fabs(a.at(r, 0));
        INFO("row " << r << " column " << j);
        CHECK(std::fabs(c.at(r, j) - exact) <= 1e-5 * (std::fabs(exact) + 127.0 * K / 100));
      }
    if (!have_first) {
      first = c, have_first = true;
      continue;
    }
    CHECK(max_absolute_error(c.view(), first.view()) == 0.0);
  }
}

// GemmEpilogue::two_term_rows: a listed row's result depends only on the row — not on
// the threads, the tile it falls in, the rows around it or the group its residual is
// computed in — and on every ISA is the same bits; unlisted rows are exactly the
// one-term GEMM's. Shapes: fewer rows than columns (the threads split the panels; one
// residual per group), more (the threads split the rows; 56 listed rows make groups of
// up to MR residuals, several per thread, and runs longer than a tile), and a decoding
// step's few rows against many columns (one AMX tile quantized once, its panels split
// over the threads). (Its accuracy against the bound its
// arithmetic gives: tests/encoder/test_outlier_rows.cpp.)
TEST_CASE("s8 GEMM two-term rows: the same bits whatever the threads, tiles and neighbours", "[ops][gemm][int8]") {
  enum Shape { panels_split, tall, few_rows };
  const Shape shape = GENERATE(panels_split, tall, few_rows);
  const index_t K = GENERATE(200, 256);  // 256: AMX's tiles, where the CPU has them
  const index_t M = shape == tall ? 168 : shape == few_rows ? 24 : 40, N = shape == tall ? 40 : shape == few_rows ? 600 : 70;
  INFO((shape == tall ? "rows split" : shape == few_rows ? "few rows" : "panels split") << ": M " << M << ", N " << N
                                                                                         << ", K " << K);
  Buffer2D a(M, K), w(N, K), start(M, N);
  Rng rng(test_seed() ^ 4848);
  a.fill_random(rng, -1, 1);
  w.fill_random(rng, -0.2, 0.2);
  start.fill_random(rng, -1, 1);
  std::vector<float> bias(N);
  for (auto& b : bias) b = rng.uniform(-1, 1);
  std::vector<std::int32_t> listed = {0, 13, 14, 29, 39};
  if (shape == few_rows) listed = {0, 11, 12, 23};
  if (shape == tall) {
    listed.clear();
    for (std::int32_t r = 0; r < M; ++r)
      if (r % 3 == 0 || (r >= 100 && r < 140)) listed.push_back(r);  // 56, and a run of 40
  }
  for (std::int32_t r : listed) a.at(r, (r * 7) % K) = 60.0f + static_cast<float>(r);  // one value dominates
  for (const ops::Activation act : {ops::Activation::none, ops::Activation::gelu}) {
    INFO("activation " << ops::activation_name(act));
    std::vector<float> first_isa;
    for (ops::Isa isa : ops::available_isas()) {
      INFO("isa " << ops::isa_name(isa));
      const ops::PackedWeight p = ops::pack_weight(w.view(), ops::WeightType::s8, isa);
      // rows [r0, M) of A as their own GEMM, the list's rows among them.
      auto run = [&](index_t r0, int threads, bool two_terms) {
        Buffer2D c(M - r0, N);
        for (index_t r = r0; r < M; ++r)
          for (index_t j = 0; j < N; ++j) c.at(r - r0, j) = start.at(r, j);
        ops::GemmEpilogue ep;
        ep.bias = bias.data(), ep.activation = act;
        const ops::ConstMatrix rows_of_start{start.view().row(r0), M - r0, N, start.view().ld};
        ep.residual = act == ops::Activation::none ? ops::ConstMatrix(c.view()) : rows_of_start;
        std::vector<std::int32_t> mine;
        for (std::int32_t r : listed)
          if (r >= r0 && two_terms) mine.push_back(r);
        ep.two_term_rows = mine, ep.two_term_row_base = r0;
        const ops::ConstMatrix rows_of_a{a.view().row(r0), M - r0, K, a.view().ld};
        ops::gemm(rows_of_a, p.view(), c.view(), ep, threads);
        return std::vector<float>(c.view().data, c.view().data + (M - r0) * N);
      };
      const std::vector<float> one = run(0, 1, true), plain = run(0, 1, false);
      for (int threads : {2, 3}) CHECK(run(0, threads, true) == one);
      for (index_t r0 : {13, 14, shape == few_rows ? 4 : 27, shape == tall ? 101 : shape == few_rows ? 7 : 33}) {
        INFO("rows from " << r0);
        const std::vector<float> part = run(r0, 2, true);
        CHECK(std::equal(part.begin(), part.end(), one.begin() + r0 * N));
      }
      for (index_t r = 0; r < M; ++r) {
        const bool two = std::find(listed.begin(), listed.end(), r) != listed.end();
        INFO("row " << r);
        CHECK(std::equal(one.begin() + r * N, one.begin() + (r + 1) * N, plain.begin() + r * N) == !two);
      }
      if (first_isa.empty()) first_isa = one;
      else CHECK(one == first_isa);
    }
  }
}

// Which loop order a CPU's kernels take for few rows is a speed choice
// (GemmKernels::s8_few_row_order; bench/s8_loop_orders): on every ISA, both orders must
// give the same bits, two-term rows and the epilogue included, on one thread or two.
// (The block order as the kernels ask for it — for AVX2 and AMX, a run of panels per
// call — against a call per panel; N 203 ends on a partial panel, and 1403 at K = 384
// is more panels than one 512 KiB block of B holds.)
TEST_CASE("s8 GEMM: the block order, in runs of panels or a call per panel, and the few-row order give the same bits",
          "[ops][gemm][int8]") {
  const index_t M = GENERATE(5, 24, 128), N = GENERATE(203, 1403), K = 384;
  INFO("M " << M << " N " << N);
  Buffer2D a(M, K), w(N, K), c(M, N);
  Rng rng(test_seed() ^ 5151);
  a.fill_random(rng, -1, 1);
  w.fill_random(rng, -0.2, 0.2);
  std::vector<float> bias(N);
  for (auto& b : bias) b = rng.uniform(-1, 1);
  const std::vector<std::int32_t> listed = {0, 3};  // rows one value dominates: two terms
  for (std::int32_t r : listed) a.at(r, 5) = 80.0f;
  struct ResetOrder {
    ~ResetOrder() { ops::detail::set_s8_loop_order(ops::detail::S8LoopOrder::kernels); }
  } reset;
  for (ops::Isa isa : ops::available_isas()) {
    INFO("isa " << ops::isa_name(isa));
    const ops::PackedWeight p = ops::pack_weight(w.view(), ops::WeightType::s8, isa);
    ops::GemmEpilogue ep;
    ep.bias = bias.data(), ep.activation = ops::Activation::gelu, ep.two_term_rows = listed;
    auto run = [&](ops::detail::S8LoopOrder order, int threads) {
      ops::detail::set_s8_loop_order(order);
      ops::gemm(a.view(), p.view(), c.view(), ep, threads);
      return std::vector<float>(c.view().data, c.view().data + M * N);
    };
    const std::vector<float> block = run(ops::detail::S8LoopOrder::block, 1);
    CHECK(run(ops::detail::S8LoopOrder::few_rows, 1) == block);
    CHECK(run(ops::detail::S8LoopOrder::few_rows, 2) == block);
    CHECK(run(ops::detail::S8LoopOrder::block, 2) == block);
    CHECK(run(ops::detail::S8LoopOrder::kernels, 1) == block);
    CHECK(run(ops::detail::S8LoopOrder::kernels, 2) == block);
  }
}

TEST_CASE("an s8 GEMM gives the same result in caller scratch", "[ops][gemm]") {
  const index_t M = 50, N = 70, K = 90;
  Buffer2D a(M, K), w(N, K), own(M, N), given(M, N);
  Rng rng(test_seed() ^ 4646);
  a.fill_random(rng, -1, 1);
  w.fill_random(rng, -1, 1);
  const ops::PackedWeight p = ops::pack_weight(w.view(), ops::WeightType::s8);
  const std::size_t need = ops::gemm_scratch_bytes(M, p.view());
  ops::AlignedBuffer scratch(need + 64);
  ops::gemm(a.view(), p, own.view(), {}, 2);
  ops::gemm(a.view(), p.view(), given.view(), {}, 2, {scratch.data(), need});
  CHECK(max_absolute_error(given.view(), own.view()) == 0.0);
  CHECK(ops::gemm_scratch_bytes(M, ops::pack_weight(w.view(), ops::WeightType::bf16).view()) == 0);
  CHECK_THROWS_WITH(ops::gemm(a.view(), p.view(), given.view(), {}, 2, {scratch.data(), need - 1}),
                    Contains("scratch holds " + std::to_string(need - 1) + " bytes"));
  CHECK_THROWS_WITH(ops::gemm(a.view(), p.view(), given.view(), {}, 2, {scratch.data() + 1, need}),
                    Contains("64-byte aligned"));
}

TEST_CASE("typed packing reports bad weights as attend::Error", "[ops][gemm][errors]") {
  std::vector<std::int8_t> q(4 * 8, 1);
  std::vector<float> scales = {1.0f, 2.0f, 0.0f, 1.0f};
  CHECK_THROWS_WITH(ops::pack_weight_s8({q.data(), 4, 8}, scales.data()), Contains("scale[2] = 0 is not positive"));
  scales[2] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(ops::pack_weight_s8({q.data(), 4, 8}, scales.data()), Contains("scale[2] = nan is not positive"));
  CHECK_THROWS_WITH(ops::pack_weight_s8({q.data(), 4, 8}, nullptr), Contains("scales are null"));
  std::vector<std::int8_t> wide(ops::kMaxS8K + 1, 1);
  CHECK_THROWS_WITH(ops::pack_weight_s8({wide.data(), 1, ops::kMaxS8K + 1}, scales.data()),
                    Contains("K = 131073 exceeds 131072"));
  std::vector<float> w(4 * 8, 0.5f);
  w[13] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH(ops::pack_weight(ops::ConstMatrix(w.data(), 4, 8), ops::WeightType::s8),
                    Contains("weight[1, 5] = inf cannot be quantized to s8"));
  CHECK_NOTHROW(ops::pack_weight(ops::ConstMatrix(w.data(), 4, 8), ops::WeightType::bf16));
  std::vector<float> small(4);
  CHECK_THROWS_WITH(ops::unpack_weight(ops::pack_weight(ops::ConstMatrix(w.data(), 4, 8), ops::WeightType::bf16).view(),
                                       ops::Matrix(small.data(), 2, 2)),
                    Contains("w is [2, 2], the weight is [4, 8]"));
}

}  // namespace attend::test
