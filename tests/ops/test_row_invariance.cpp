// Row invariance: an output row of the ops a model runs is the same bits whatever other
// rows share the call, where the row sits in it, and how many threads split it. The
// GEMMs (f32, bf16, s8; every ISA's kernels, every epilogue, K in one block or several)
// on any run of rows of A against all of A; attention of a padded batch against each
// sequence alone; LayerNorm and log-softmax. This is what makes a sentence's result
// independent of its batch (tests/runtime/test_batch_invariance.cpp). And the GEMMs of
// the ISAs that multiply and add alike give the same bits.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "attend/ops/attention.hpp"
#include "attend/ops/gemm.hpp"
#include "attend/ops/normalization.hpp"
#include "attend/ops/softmax.hpp"
#include "support/isa_scope.hpp"
#include "support/test_support.hpp"

namespace attend::test {
namespace {

bool same_row(const float* a, const float* b, index_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

// Rows of `got` (its row r is row first + r of `want`) that differ in any bit; -1 if none.
index_t first_differing_row(ops::ConstMatrix got, ops::ConstMatrix want, index_t first) {
  for (index_t r = 0; r < got.rows; ++r)
    if (!same_row(got.row(r), want.row(first + r), got.cols)) return first + r;
  return -1;
}

enum class Epilogue { bias_gelu, alpha_residual, residual_in_c };
const char* epilogue_name(Epilogue e) {
  return e == Epilogue::bias_gelu ? "bias + gelu" : e == Epilogue::alpha_residual ? "alpha, residual" : "residual is C";
}

struct GemmCase {
  index_t n, k;
};

// C = A·Bᵀ with the epilogue, for rows [first, first + rows) of A (and of the residual).
void run_gemm(const Buffer2D& a, const ops::PackedWeight& b, const std::vector<float>& bias, const Buffer2D& residual,
              Epilogue e, index_t first, index_t rows, int threads, Buffer2D& c) {
  const ops::ConstMatrix a_rows{a.data() + first * a.ld(), rows, a.cols(), a.ld()};
  const ops::ConstMatrix residual_rows{residual.data() + first * residual.ld(), rows, residual.cols(), residual.ld()};
  c = Buffer2D(rows, b.n(), 3);
  ops::GemmEpilogue ep;
  switch (e) {
    case Epilogue::bias_gelu:
      ep.bias = bias.data(), ep.activation = ops::Activation::gelu;
      break;
    case Epilogue::alpha_residual:
      ep.alpha = 0.75f, ep.residual = residual_rows;
      break;
    case Epilogue::residual_in_c:  // partial sums added to what C holds (a fused residual)
      for (index_t r = 0; r < rows; ++r) std::memcpy(c.data() + r * c.ld(), residual_rows.row(r), b.n() * sizeof(float));
      ep.residual = c.view();
      break;
  }
  ops::gemm(a_rows, b, c.view(), ep, threads);
}

// The runs of rows checked against the whole: single rows (first, middle, last), short
// runs of every thin-tile height, and long ones straddling tiles.
std::vector<std::pair<index_t, index_t>> row_runs(index_t m) {
  std::vector<std::pair<index_t, index_t>> runs = {{0, 1}, {m / 2, 1}, {m - 1, 1}, {1, 2}, {m - 3, 3}, {2, 4},
                                                   {5, 5}, {3, 13}, {m / 3, m - m / 3}};
  std::erase_if(runs, [&](const auto& r) { return r.first < 0 || r.first + r.second > m; });
  return runs;
}

void check_gemm_rows(ops::Isa isa, ops::WeightType type, const GemmCase& gc, index_t m, Rng& rng) {
  Buffer2D w(gc.n, gc.k), a(m, gc.k, 5), residual(m, gc.n, 1);
  w.fill_random(rng, -0.5f, 0.5f);
  a.fill_random(rng, -1.0f, 1.0f);
  residual.fill_random(rng, -1.0f, 1.0f);
  std::vector<float> bias(static_cast<size_t>(gc.n));
  rng.fill(bias, -0.5f, 0.5f);
  const ops::PackedWeight b = ops::pack_weight(w.view(), type, isa);
  for (Epilogue e : {Epilogue::bias_gelu, Epilogue::alpha_residual, Epilogue::residual_in_c}) {
    INFO(ops::gemm_kernel_name(isa, type) << ": M " << m << ", N " << gc.n << ", K " << gc.k << ", "
                                          << epilogue_name(e));
    Buffer2D whole, part;
    run_gemm(a, b, bias, residual, e, 0, m, 1, whole);
    for (int threads : {2, 3, 4}) {
      run_gemm(a, b, bias, residual, e, 0, m, threads, part);
      INFO("all rows on " << threads << " threads");
      CHECK(first_differing_row(part.view(), whole.view(), 0) == -1);
    }
    for (const auto& [first, rows] : row_runs(m))
      for (int threads : {1, 3}) {
        run_gemm(a, b, bias, residual, e, first, rows, threads, part);
        INFO("rows [" << first << ", " << first + rows << ") alone on " << threads << " thread(s)");
        CHECK(first_differing_row(part.view(), whole.view(), first) == -1);
      }
  }
}

TEST_CASE("a GEMM row is the same bits whatever rows share the call and however threads split it",
          "[ops][gemm][row-invariance]") {
  Rng rng(test_seed() ^ 2929);
  // K: one element, short, one block, two and three K blocks (fp32/bf16 block K at 512;
  // bf16 pairs an odd K with a zero). N: one column, part of a panel, several panels.
  const GemmCase cases[] = {{1, 1}, {37, 7}, {100, 64}, {200, 513}, {70, 1100}};
  for (ops::Isa isa : ops::available_isas())
    for (ops::WeightType type : {ops::WeightType::f32, ops::WeightType::bf16, ops::WeightType::s8})
      for (const GemmCase& gc : cases) check_gemm_rows(isa, type, gc, 41, rng);
  // More rows than a thread packs at once (the decoding loop order stops at 248): the
  // blocked loop order, and thread grids that split rows.
  for (ops::Isa isa : ops::available_isas())
    for (ops::WeightType type : {ops::WeightType::f32, ops::WeightType::bf16})
      check_gemm_rows(isa, type, {48, 520}, 300, rng);
}

// Since every element is one sum in k order, the ISAs that multiply and add alike give
// the same bits: fp32 on AVX2 and AVX-512 (a fused multiply-add per product; SSE2 has
// none), bf16 widened to fp32 on SSE2, AVX2 and AVX-512 (a product of two bf16 is exact
// in fp32, fused or not; AVX512_BF16's vdpbf16ps rounds its own way).
TEST_CASE("fp32 GEMMs on AVX2 and AVX-512, and widened bf16 GEMMs on every ISA, give the same bits",
          "[ops][gemm][row-invariance]") {
  Rng rng(test_seed() ^ 2932);
  const struct {
    ops::WeightType type;
    std::vector<ops::Isa> isas;
  } groups[] = {{ops::WeightType::f32, {ops::Isa::avx512, ops::Isa::avx2}},
                {ops::WeightType::bf16, {ops::Isa::avx512, ops::Isa::avx2, ops::Isa::sse2}}};
  for (const auto& group : groups)
    for (const GemmCase& gc : {GemmCase{37, 7}, GemmCase{100, 64}, GemmCase{70, 1100}})
      for (index_t m : {1, 2, 3, 5, 29}) {
        Buffer2D w(gc.n, gc.k), a(m, gc.k), residual(m, gc.n);
        w.fill_random(rng, -0.5f, 0.5f);
        a.fill_random(rng, -1.0f, 1.0f);
        residual.fill_random(rng, -1.0f, 1.0f);
        std::vector<float> bias(static_cast<size_t>(gc.n));
        rng.fill(bias, -0.5f, 0.5f);
        Buffer2D first;
        std::string first_kernel;
        for (ops::Isa isa : group.isas) {
          if (!ops::isa_available(isa)) continue;
          Buffer2D c;
          run_gemm(a, ops::pack_weight(w.view(), group.type, isa), bias, residual, Epilogue::bias_gelu, 0, m, 2, c);
          if (first_kernel.empty()) {
            first = std::move(c), first_kernel = ops::gemm_kernel_name(isa, group.type);
            continue;
          }
          INFO(ops::gemm_kernel_name(isa, group.type) << " against " << first_kernel << ": M " << m << ", N " << gc.n
                                                      << ", K " << gc.k);
          CHECK(first_differing_row(c.view(), first.view(), 0) == -1);
        }
      }
}

// ---- attention: a padded batch against each sequence alone ----

ops::AttentionArgs attention_args(index_t batch, index_t heads, index_t s, index_t dh, const float* qkv, float* out) {
  ops::AttentionArgs x;
  x.batch = batch, x.heads = heads, x.q_len = s, x.kv_len = s, x.head_dim = dh;
  const index_t ld = 3 * heads * dh, d = heads * dh;
  x.q = {qkv, s * ld, dh, ld};
  x.k = {qkv + d, s * ld, dh, ld};
  x.v = {qkv + 2 * d, s * ld, dh, ld};
  x.out = {out, s * d, dh, d};
  return x;
}

TEST_CASE("attention of a sequence is the same bits alone and in a padded batch, on any threads",
          "[ops][attention][row-invariance]") {
  ProcessIsaRestorer restore;
  Rng rng(test_seed() ^ 2930);
  // dh 24: the online-softmax tile kernel for all; dh 32: the short-key kernel for the
  // sentences of ≤ 128 keys without relative positions (alone or in the batch), the tile
  // kernel for the 140-key one and with the T5 bias.
  const index_t heads = 2, S = 140;                              // > one 64-key tile, several query tiles
  const std::vector<std::int32_t> lengths = {140, 5, 75, 33, 1};  // the batch pads each to S
  const index_t B = static_cast<index_t>(lengths.size());
  for (index_t dh : {24, 32}) {
    const index_t d = heads * dh;
    std::vector<float> qkv(static_cast<size_t>(B * S * 3 * d)), bias(static_cast<size_t>(heads * 17));
    rng.fill(qkv, -2.0f, 2.0f);
    rng.fill(bias, -1.0f, 1.0f);
    for (ops::Isa isa : ops::available_isas()) {
      ops::set_isa(isa);
      for (bool positions : {false, true}) {
        INFO(ops::isa_name(isa) << ", head dim " << dh << (positions ? ", T5 bias" : ""));
        std::vector<float> batched(static_cast<size_t>(B * S * d));
        ops::AttentionArgs x = attention_args(B, heads, S, dh, qkv.data(), batched.data());
        x.kv_lengths = lengths.data();
        if (positions) x.positions = {8, bias.data(), 17, nullptr, nullptr};
        ops::attention(x, 3);
        for (index_t b = 0; b < B; ++b)
          for (int threads : {1, 2}) {
            const index_t n = lengths[b];
            std::vector<float> alone(static_cast<size_t>(n * d));
            ops::AttentionArgs y = attention_args(1, heads, n, dh, qkv.data() + b * S * 3 * d, alone.data());
            y.positions = x.positions;
            ops::attention(y, threads);
            INFO("sequence " << b << " (" << n << " keys) alone on " << threads << " thread(s)");
            CHECK(std::memcmp(alone.data(), batched.data() + b * S * d, alone.size() * sizeof(float)) == 0);
          }
      }
    }
  }
}

TEST_CASE("LayerNorm and log-softmax rows are the same bits on any rows and threads", "[ops][row-invariance]") {
  ProcessIsaRestorer restore;
  Rng rng(test_seed() ^ 2931);
  const index_t m = 29, n = 1000;
  Buffer2D x(m, n, 2);
  x.fill_random(rng, -3.0f, 3.0f);
  std::vector<float> gamma(n), beta(n);
  rng.fill(gamma, 0.5f, 1.5f);
  rng.fill(beta, -0.5f, 0.5f);
  for (ops::Isa isa : ops::available_isas()) {
    ops::set_isa(isa);
    INFO(ops::isa_name(isa));
    auto run = [&](index_t first, index_t rows, int threads, bool norm) {
      Buffer2D y(rows, n, 1);
      const ops::ConstMatrix in{x.data() + first * x.ld(), rows, n, x.ld()};
      if (norm) ops::layer_norm(in, y.view(), {gamma.data(), beta.data(), 1e-5f}, threads);
      else ops::log_softmax(in, y.view(), threads);
      return y;
    };
    for (bool norm : {true, false}) {
      const Buffer2D whole = run(0, m, 1, norm);
      for (const auto& [first, rows] : row_runs(m))
        for (int threads : {1, 4}) {
          INFO((norm ? "layer_norm" : "log_softmax") << " rows [" << first << ", " << first + rows << ") on "
                                                      << threads << " threads");
          CHECK(first_differing_row(run(first, rows, threads, norm).view(), whole.view(), first) == -1);
        }
    }
  }
}

}  // namespace
}  // namespace attend::test
