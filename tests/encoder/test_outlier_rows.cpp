// int8 GEMMs that keep the rows one value dominates (runtime/plan/outlier_rows.hpp): the
// row test, and the second term's accuracy against the bound its arithmetic gives, on
// every ISA this CPU runs, with the same bits everywhere.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "attend/ops/activation.hpp"
#include "attend/ops/isa.hpp"
#include "attend/ops/normalization.hpp"
#include "plan/outlier_rows.hpp"

namespace attend::runtime {
namespace {

TEST_CASE("outlier rows: a row whose mean magnitude gets fewer than 4 of int8's 127 levels", "[encoder][int8]") {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> row(384);
  for (float& x : row) x = normal(rng);
  CHECK_FALSE(is_outlier_row(row.data(), 384));  // Gaussian: max/mean ≈ 4, ~30 levels at the mean
  row[99] = 300.0f;  // all-MiniLM-L6-v2's [CLS] row, in miniature: max/mean ≈ 170
  CHECK(is_outlier_row(row.data(), 384));
  // The threshold: one value v and 126 of e: levels at the mean = 127·(v + 126e)/(127·v).
  std::vector<float> edge(127, 1.0f / 41.0f);
  edge[5] = 1.0f;
  CHECK_FALSE(is_outlier_row(edge.data(), 127));  // 4.07 levels
  std::fill(edge.begin(), edge.end(), 1.0f / 43.0f);
  edge[5] = -1.0f;
  CHECK(is_outlier_row(edge.data(), 127));  // 3.93 levels
  const std::vector<float> zeros(64, 0.0f);
  CHECK_FALSE(is_outlier_row(zeros.data(), 64));
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> r(64, 0.001f);
    r[3] = bad;  // the GEMM reports these rows as NaN: nothing to correct
    CHECK_FALSE(is_outlier_row(r.data(), 64));
  }
  std::vector<float> m(5 * 64, 0.5f);
  m[1 * 64 + 9] = 400.0f, m[4 * 64] = -90.0f;
  std::vector<std::int32_t> rows(5);
  REQUIRE(find_outlier_rows({m.data(), 5, 64}, rows.data()) == 2);
  CHECK(rows[0] == 1);
  CHECK(rows[1] == 4);
}

// What the encoder plan does: the list from the magnitudes a LayerNorm takes as it writes
// its rows is the list a scan of its output finds.
TEST_CASE("outlier rows: listed from a LayerNorm's magnitudes as from its output", "[encoder][int8]") {
  constexpr std::int64_t M = 97, K = 384;
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(M * K), y(M * K), gamma(K), beta(K);
  for (auto& v : x) v = normal(rng);
  for (std::int64_t k = 0; k < K; ++k) gamma[k] = 1.0f + 0.1f * normal(rng), beta[k] = 0.1f * normal(rng);
  for (std::int64_t r = 0; r < M; r += 5) x[r * K + 99] = 400.0f;  // as all-MiniLM-L6-v2's channel 99 in [CLS]
  std::vector<ops::RowMagnitude> magnitudes(M);
  ops::layer_norm({x.data(), M, K}, {y.data(), M, K}, {gamma.data(), beta.data(), 1e-12f}, 2, {}, {}, magnitudes.data());
  std::vector<std::int32_t> from_norm(M, -1), from_scan(M, -1);
  const std::int64_t n = list_outlier_rows(magnitudes, K, from_norm.data());
  REQUIRE(n == find_outlier_rows({y.data(), M, K}, from_scan.data(), 2));
  CHECK(n >= M / 5);
  CHECK(std::equal(from_norm.begin(), from_norm.begin() + n, from_scan.begin()));
}

TEST_CASE("outlier rows: the list is the same whatever the threads that scan", "[encoder][int8]") {
  // 301 rows, outliers scattered (some at the ends of the threads' shares), scanned by
  // 1…5 threads and by more threads than rows.
  constexpr std::int64_t M = 301, K = 48;
  std::vector<float> m(M * K, 0.25f);
  std::vector<std::int32_t> expected;
  for (std::int64_t r = 0; r < M; ++r)
    if (r % 7 == 0 || r == 75 || r == 150 || r == 151 || r == M - 1) {
      m[r * K + r % K] = -200.0f;
      expected.push_back(static_cast<std::int32_t>(r));
    }
  for (const int threads : {1, 2, 3, 4, 5}) {
    INFO("threads " << threads);
    std::vector<std::int32_t> rows(M, -1);
    const std::int64_t n = find_outlier_rows({m.data(), M, K}, rows.data(), threads);
    CHECK(std::vector<std::int32_t>(rows.begin(), rows.begin() + n) == expected);
  }
  std::vector<std::int32_t> few(2, -1);
  std::vector<float> two(2 * K, 0.25f);
  two[K + 3] = 90.0f;
  REQUIRE(find_outlier_rows({two.data(), 2, K}, few.data(), 8) == 1);
  CHECK(few[0] == 1);
}

// C = act(A·Wᵀ + b) + R for A with two rows one value dominates. The weight's own
// rounding is common to every path, so accuracy is measured against the exact product
// with the weights as quantized (W̃, unpack_weight), in double. A row with max |a| = m is
// quantized to within m/254 per value; the second term quantizes that residual (≤ m/254)
// to within (m/254)/254: |error of c_j| ≤ m/254²·Σ_k |W̃_jk|, times the activation's
// slope (GELU's ≤ 1.13), plus the fp32 rounding of the sums (< 1e-6·Σ_k |a_k W̃_jk|).
TEST_CASE("outlier rows: the second int8 term carries a dominated row to its bound, the same bits on every ISA",
          "[encoder][int8]") {
  constexpr std::int64_t M = 6, K = 96, N = 40;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<float> a(M * K), w(N * K), bias(N), start(M * N);
  for (float& x : a) x = normal(rng);
  for (float& x : w) x = 0.1f * normal(rng);
  for (float& x : bias) x = normal(rng);
  for (float& x : start) x = normal(rng);
  a[2 * K + 7] = 300.0f, a[4 * K + 50] = -500.0f;
  const std::vector<std::int32_t> listed = {2, 4};

  for (const ops::Activation act : {ops::Activation::none, ops::Activation::gelu}) {
    INFO("activation " << ops::activation_name(act));
    std::vector<float> first_isa;
    for (const ops::Isa isa : ops::available_isas()) {
      INFO("isa " << ops::isa_name(isa));
      const ops::PackedWeight packed = ops::pack_weight({w.data(), N, K}, ops::WeightType::s8, isa);
      std::vector<float> wq(N * K);
      ops::unpack_weight(packed.view(), {wq.data(), N, K});
      // With an activation the residual is a separate matrix; without, C itself.
      auto run = [&](bool second_term) {
        std::vector<float> c = start;
        ops::GemmEpilogue ep;
        ep.bias = bias.data(), ep.activation = act;
        ep.residual = {start.data(), M, N};
        if (act == ops::Activation::none) ep.residual = {c.data(), M, N};
        const std::span<const std::int32_t> rows = second_term ? listed : std::span<const std::int32_t>();
        gemm_keeping_outlier_rows({a.data(), M, K}, packed.view(), {c.data(), M, N}, ep, 2, rows, 0);
        return c;
      };
      const std::vector<float> plain = run(false), kept = run(true);
      for (std::int64_t r = 0; r < M; ++r) {
        const bool outlier = r == 2 || r == 4;
        double m = 0;
        for (std::int64_t k = 0; k < K; ++k) m = std::max(m, std::abs(double(a[r * K + k])));
        double plain_worst = 0, kept_worst_excess = -1;
        for (std::int64_t j = 0; j < N; ++j) {
          double exact = bias[j], weights = 0, terms = 0;
          for (std::int64_t k = 0; k < K; ++k) {
            exact += double(a[r * K + k]) * wq[j * K + k];
            weights += std::abs(double(wq[j * K + k]));
            terms += std::abs(double(a[r * K + k]) * wq[j * K + k]);
          }
          if (act == ops::Activation::gelu) exact = 0.5 * exact * (1 + std::erf(exact / std::sqrt(2.0)));
          exact += start[r * N + j];
          const double bound = (act == ops::Activation::gelu ? 1.13 : 1.0) * m / (254.0 * 254.0) * weights + 1e-6 * terms;
          plain_worst = std::max(plain_worst, std::abs(plain[r * N + j] - exact) / bound);
          kept_worst_excess = std::max(kept_worst_excess, std::abs(kept[r * N + j] - exact) - bound);
          if (!outlier) CHECK(std::memcmp(&kept[r * N + j], &plain[r * N + j], sizeof(float)) == 0);
        }
        INFO("row " << r);
        if (outlier) {
          CHECK(kept_worst_excess <= 0);
          CHECK(plain_worst > 10);  // one int8 pass misses the bound by far: the test has teeth
        }
      }
      // A chunk of the rows (a row group's): the list names rows of the whole matrix.
      std::vector<float> chunk(start.begin() + 2 * N, start.end());
      ops::GemmEpilogue ep;
      ep.bias = bias.data(), ep.activation = act;
      ep.residual = act == ops::Activation::none ? ops::ConstMatrix{chunk.data(), M - 2, N}
                                                 : ops::ConstMatrix{start.data() + 2 * N, M - 2, N};
      gemm_keeping_outlier_rows({a.data() + 2 * K, M - 2, K}, packed.view(), {chunk.data(), M - 2, N}, ep, 1, listed, 2);
      CHECK(std::memcmp(chunk.data(), kept.data() + 2 * N, chunk.size() * sizeof(float)) == 0);
      if (first_isa.empty()) first_isa = kept;
      else CHECK(std::memcmp(kept.data(), first_isa.data(), kept.size() * sizeof(float)) == 0);
    }
  }
  // A list that names a row outside the chunk, or out of order, is refused by name.
  const ops::PackedWeight packed = ops::pack_weight({w.data(), N, K}, ops::WeightType::s8);
  std::vector<float> c(M * N);
  const std::vector<std::int32_t> outside = {2, 9}, unordered = {4, 2};
  CHECK_THROWS_WITH(gemm_keeping_outlier_rows({a.data(), M, K}, packed.view(), {c.data(), M, N}, {}, 1, outside, 0),
                    Catch::Matchers::Contains("two-term row 9 (entry 1) is row 9 of A, which has 6"));
  CHECK_THROWS_WITH(gemm_keeping_outlier_rows({a.data(), M, K}, packed.view(), {c.data(), M, N}, {}, 1, unordered, 0),
                    Catch::Matchers::Contains("two-term rows are not ascending at entry 1 (4, 2)"));
}

}  // namespace
}  // namespace attend::runtime
