// Properties the differential harness does not cover: accuracy on a dense grid,
// fused attention equal to the unfused path, memory behaviour, and argument errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "attend/error.hpp"
#include "attend/ops/ops.hpp"
#include "attend/ops/parallel_tasks.hpp"
#include "attend/ops/reference.hpp"
#include "support/isa_scope.hpp"
#include "support/test_support.hpp"

using Catch::Matchers::Contains;

namespace attend::test {
namespace {

std::vector<float> gelu_grid() {
  std::vector<float> x;
  for (int i = -100000; i <= 100000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);  // [-10, 10]
  return x;
}

}  // namespace

TEST_CASE("GeLU is within 1e-6 absolute of the double formula on [-10, 10]", "[ops][activation]") {
  ProcessIsaRestorer restore;
  const std::vector<float> x = gelu_grid();
  const index_t n = static_cast<index_t>(x.size());
  for (ops::Isa isa : ops::available_isas()) {
    if (ops::f32_kernel_isa(isa) != isa) continue;  // the same kernels as avx512
    ops::set_isa(isa);
    for (ops::Activation a : {ops::Activation::gelu, ops::Activation::gelu_tanh}) {
      std::vector<float> y(x.size());
      ops::activation(a, ops::ConstMatrix(x.data(), 1, n), ops::Matrix(y.data(), 1, n), 2);
      double worst = 0;
      for (index_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(y[i] - ops::reference::activation(a, x[i])));
      INFO(ops::isa_name(isa) << " " << ops::activation_name(a) << ": max abs error " << worst);
      CHECK(worst <= 1e-6);

      // The same through the GEMM epilogue: C = act(x · 1) with a 1×1 weight.
      const float one = 1.0f;
      const ops::PackedWeight w = ops::pack_weight(ops::ConstMatrix(&one, 1, 1), isa);
      std::vector<float> z(x.size());
      ops::GemmEpilogue ep;
      ep.activation = a;
      ops::gemm(ops::ConstMatrix(x.data(), n, 1), w, ops::Matrix(z.data(), n, 1), ep, 2);
      double worst_epilogue = 0;
      for (index_t i = 0; i < n; ++i)
        worst_epilogue = std::max(worst_epilogue, std::abs(z[i] - ops::reference::activation(a, x[i])));
      INFO("as GEMM epilogue: max abs error " << worst_epilogue);
      CHECK(worst_epilogue <= 1e-6);
    }
  }
}

// GeLU = h + |h|·erf(|x|/√2), h = x/2, one rounding at the end: its erf must be within
// 1e-7 absolute of erf in double for every float, so |GeLU − exact| ≤ |h|·1e-7 plus the
// final rounding. Floats sampled over their whole range by bit pattern (every 1021st),
// densely around the ends of the kernels' erf pieces (|x| = c ± ½), both signs.
TEST_CASE("GeLU's erf is within 1e-7 absolute of erf in double over every float range", "[ops][activation]") {
  ProcessIsaRestorer restore;
  std::vector<float> x;
  for (std::uint32_t bits = 0; bits < 0x7f800000u; bits += 1021) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    x.push_back(v);
  }
  for (float edge = 0.5f; edge <= 6.0f; edge += 0.5f) {
    float v = edge;
    for (int i = 0; i < 4096; ++i) v = std::nextafter(v, 0.0f);
    for (int i = 0; i < 8192; ++i, v = std::nextafter(v, 100.0f)) x.push_back(v);
  }
  const std::size_t positives = x.size();
  for (std::size_t i = 0; i < positives; ++i) x.push_back(-x[i]);
  const index_t n = static_cast<index_t>(x.size());
  for (ops::Isa isa : ops::available_isas()) {
    if (ops::f32_kernel_isa(isa) != isa) continue;
    ops::set_isa(isa);
    std::vector<float> y(x.size());
    ops::activation(ops::Activation::gelu, ops::ConstMatrix(x.data(), 1, n), ops::Matrix(y.data(), 1, n), 2);
    double worst = 0;  // the erf error the result implies, beyond the final rounding
    float worst_x = 0;
    for (index_t i = 0; i < n; ++i) {
      const double h = 0.5 * static_cast<double>(x[i]);
      const double exact = h + std::abs(h) * std::erf(std::abs(static_cast<double>(x[i])) / std::sqrt(2.0));
      const double rounding = std::ldexp(std::abs(exact), -24) + std::numeric_limits<float>::denorm_min();
      const double excess = std::max(0.0, std::abs(y[i] - exact) - rounding);
      const double erf_error = h == 0 ? excess : excess / std::abs(h);
      if (erf_error > worst) worst = erf_error, worst_x = x[i];
    }
    INFO(ops::isa_name(isa) << ": erf error " << worst << " at x = " << worst_x << " (" << n << " floats)");
    CHECK(worst <= 1e-7);

    const float special[] = {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f};
    float out[4];
    ops::activation(ops::Activation::gelu, ops::ConstMatrix(special, 1, 4), ops::Matrix(out, 1, 4), 1);
    CHECK(out[0] == std::numeric_limits<float>::infinity());
    CHECK(std::isnan(out[1]));
    CHECK(out[2] == 0.0f);
    CHECK(out[3] == 0.0f);
  }
}

TEST_CASE("fused attention equals the unfused GEMM-softmax-GEMM path", "[ops][attention]") {
  ProcessIsaRestorer restore;
  Rng rng(test_seed() ^ 77);
  for (ops::Isa isa : ops::available_isas()) {
    if (ops::f32_kernel_isa(isa) != isa) continue;
    ops::set_isa(isa);
    for (index_t d : {20, 32, 64, 72, 80, 128})
      for (bool causal : {false, true}) {
        const index_t B = 2, H = 3, T = 45, S = causal ? 45 : 77;
        Buffer2D q(B * H * T, d), k(B * H * S, d), v(B * H * S, d), fused(B * H * T, d), unfused(B * H * T, d);
        q.fill_random(rng, -2, 2);
        k.fill_random(rng, -2, 2);
        v.fill_random(rng, -1, 1);
        std::vector<std::int32_t> lengths = {static_cast<std::int32_t>(S), static_cast<std::int32_t>(S - 11)};
        ops::AttentionArgs a;
        a.batch = B, a.heads = H, a.q_len = T, a.kv_len = S, a.head_dim = d, a.causal = causal;
        a.q = {q.data(), H * T * d, T * d, d};
        a.k = {k.data(), H * S * d, S * d, d};
        a.v = {v.data(), H * S * d, S * d, d};
        a.kv_lengths = lengths.data();
        a.out = {fused.data(), H * T * d, T * d, d};
        ops::attention(a, 2);
        std::vector<float> scratch(static_cast<size_t>(ops::attention_unfused_scratch_floats(a, 2)) + 16);
        // 64-byte aligned start for the GEMM packing inside.
        float* base = scratch.data();
        while (reinterpret_cast<std::uintptr_t>(base) % 64) ++base;
        a.out = {unfused.data(), H * T * d, T * d, d};
        ops::attention_unfused(a, {base, static_cast<size_t>(ops::attention_unfused_scratch_floats(a, 2))}, 2);
        INFO(ops::isa_name(isa) << " d=" << d << (causal ? " causal" : ""));
        CHECK(max_relative_error(fused.view(), unfused.view()) <= 1e-5);
      }
  }
}

// An encoder's self-attention (≤ 128 keys, head_dim a multiple of 16 up to 64, no
// causal mask, no relative positions) runs in the short-key kernel; anything with
// relative positions in the online-softmax tile kernel, which an all-zero T5 bias
// (s + 0 = s) turns into a reference for the plain one. Up to 64 keys (one key tile)
// both compute the same steps in the same order: the same bits, on every ISA. Past 64
// the tile kernel rescales its running sums and the short-key one does not: close, not
// equal.
TEST_CASE("the short-key attention kernel gives the tile kernel's bits up to 64 keys", "[ops][attention]") {
  ProcessIsaRestorer restore;
  Rng rng(test_seed() ^ 78);
  for (ops::Isa isa : ops::available_isas()) {
    ops::set_isa(isa);
    for (index_t d : {16, 32, 48, 64})
      for (index_t S : {1, 17, 54, 64, 65, 100, 128}) {
        const index_t B = 2, H = 2, T = S + 3, D = H * d, ld = 3 * D + 1;  // T > S: padded query rows too
        std::vector<float> qkv(static_cast<size_t>(B * T * ld)), zeros(static_cast<size_t>(H * 3), 0.0f);
        rng.fill(qkv, -2.0f, 2.0f);
        Buffer2D plain(B * T, D), tile(B * T, D);
        std::vector<std::int32_t> lengths = {static_cast<std::int32_t>(S), static_cast<std::int32_t>(std::max<index_t>(S - 9, 0))};
        ops::AttentionArgs a;
        a.batch = B, a.heads = H, a.q_len = T, a.kv_len = S, a.head_dim = d;
        a.q = {qkv.data(), T * ld, d, ld};
        a.k = {qkv.data() + D, T * ld, d, ld};
        a.v = {qkv.data() + 2 * D, T * ld, d, ld};
        a.kv_lengths = lengths.data();
        a.out = {plain.data(), T * D, d, D};
        ops::attention(a, 2);
        a.positions = {1, zeros.data(), 3, nullptr, nullptr};
        a.out = {tile.data(), T * D, d, D};
        ops::attention(a, 2);
        INFO(ops::isa_name(isa) << " d=" << d << " keys " << S);
        if (S <= 64) {
          CHECK(std::memcmp(plain.data(), tile.data(), static_cast<size_t>(B * T * D) * sizeof(float)) == 0);
        } else {
          CHECK(max_relative_error(plain.view(), tile.view()) <= 1e-5);
        }
      }
  }
}

TEST_CASE("ops report bad arguments as attend::Error naming the problem", "[ops][errors]") {
  std::vector<float> a(64, 1.0f), c(64);
  const ops::PackedWeight w = ops::pack_weight(ops::ConstMatrix(a.data(), 4, 8));

  SECTION("gemm") {
    CHECK_THROWS_WITH(ops::gemm(ops::ConstMatrix(a.data(), 2, 7), w, ops::Matrix(c.data(), 2, 4), {}, 1),
                      Contains("A is [2, 7] but B has K = 8"));
    CHECK_THROWS_WITH(ops::gemm(ops::ConstMatrix(a.data(), 2, 8), w, ops::Matrix(c.data(), 3, 4), {}, 1),
                      Contains("C is [3, 4], expected [2, 4]"));
    CHECK_THROWS_WITH(ops::gemm(ops::ConstMatrix(a.data(), 2, 8), w, ops::Matrix(c.data(), 2, 4), {}, 0),
                      Contains("thread count must be ≥ 1"));
    CHECK_THROWS_WITH(ops::gemm(ops::ConstMatrix(nullptr, 2, 8), w, ops::Matrix(c.data(), 2, 4), {}, 1),
                      Contains("A is null"));
    CHECK_THROWS_WITH(ops::gemm(ops::ConstMatrix(a.data(), 2, 8), ops::PackedWeight{}, ops::Matrix(c.data(), 2, 4), {}, 1),
                      Contains("A is [2, 8] but B has K = 0"));
    CHECK_THROWS_WITH(ops::gemm(ops::ConstMatrix(a.data(), 2, 8, 4), w, ops::Matrix(c.data(), 2, 4), {}, 1),
                      Contains("leading dimension 4 < its 8 columns"));
    ops::GemmEpilogue ep;
    ep.activation = ops::Activation::relu;
    ep.residual = ops::ConstMatrix(c.data(), 2, 4);
    CHECK_THROWS_WITH(ops::gemm(ops::ConstMatrix(a.data(), 2, 8), w, ops::Matrix(c.data(), 2, 4), ep, 1),
                      Contains("residual may alias C only without activation"));
  }
  SECTION("attention") {
    ops::AttentionArgs x;
    x.batch = 1, x.heads = 1, x.q_len = 2, x.kv_len = 2, x.head_dim = 300;
    x.q = x.k = x.v = {a.data(), 0, 0, 8};
    x.out = {c.data(), 0, 0, 8};
    CHECK_THROWS_WITH(ops::attention(x, 1), Contains("head_dim 300 is outside [1, 256]"));
    x.head_dim = 8;
    std::int32_t bad_len = 3;
    x.kv_lengths = &bad_len;
    CHECK_THROWS_WITH(ops::attention(x, 1), Contains("kv_lengths[0] = 3 is outside [0, kv_len = 2]"));
    x.kv_lengths = nullptr;
    x.q.data = nullptr;
    CHECK_THROWS_WITH(ops::attention(x, 1), Contains("q or out is null"));
    ops::DecodeAttentionArgs dx;
    dx.rows = 1, dx.heads = 1, dx.head_dim = 8, dx.q = a.data(), dx.out = c.data();
    CHECK_THROWS_WITH(ops::attention_decode(dx, 1), Contains("kv_lengths are required"));
    std::int32_t one = 1;
    dx.kv_lengths = &one;
    dx.q_row_stride = dx.out_row_stride = 8;
    dx.k = {a.data(), 8, 8, 8};
    dx.v = {a.data(), 8, 8, 8};
    dx.v.type = ops::KvType::bf16;
    CHECK_THROWS_WITH(ops::attention_decode(dx, 1), Contains("k cache is f32 but v cache is bf16"));
  }
  SECTION("rows") {
    CHECK_THROWS_WITH(ops::layer_norm(ops::ConstMatrix(a.data(), 2, 8), ops::Matrix(c.data(), 2, 8), {}, 1),
                      Contains("gamma is required"));
    CHECK_THROWS_WITH(ops::softmax(ops::ConstMatrix(a.data(), 2, 8), ops::Matrix(c.data(), 2, 7), 1),
                      Contains("x is [2, 8] but y is [2, 7]"));
    const std::int32_t ids[] = {0, 9};
    CHECK_THROWS_WITH(ops::embedding(ops::ConstMatrix(a.data(), 8, 8), ids, 1.0f, {}, nullptr,
                                     ops::Matrix(c.data(), 2, 8), 1),
                      Contains("ids[1] = 9 is outside [0, 8)"));
    const std::int8_t q[64] = {};
    CHECK_THROWS_WITH(ops::embedding(ops::EmbeddingTable(ops::MatrixView<const std::int8_t>(q, 8, 8), nullptr), ids,
                                     1.0f, {}, nullptr, ops::Matrix(c.data(), 2, 8), 1),
                      Contains("s8 table has no factors"));
    CHECK_THROWS_WITH(ops::embedding(ops::EmbeddingTable(ops::MatrixView<const std::uint16_t>(nullptr, 8, 8)), ids, 1.0f,
                                     {}, nullptr, ops::Matrix(c.data(), 2, 8), 1),
                      Contains("bf16 table is null but has shape [8, 8]"));
    CHECK_THROWS_WITH(ops::embedding(ops::ConstMatrix(a.data(), 8, 8, 4), ids, 1.0f, {}, nullptr,
                                     ops::Matrix(c.data(), 2, 8), 1),
                      Contains("table has leading dimension 4 < its 8 columns"));
    ops::EmbeddingTable unknown = ops::ConstMatrix(a.data(), 8, 8);
    unknown.type = static_cast<ops::WeightType>(7);
    CHECK_THROWS_WITH(ops::embedding(unknown, ids, 1.0f, {}, nullptr, ops::Matrix(c.data(), 2, 8), 1),
                      Contains("table has an unknown element type (7)"));
    CHECK_THROWS_WITH(ops::sinusoidal_positions(ops::PositionLayout::interleaved, 0, ops::Matrix(c.data(), 2, 7)),
                      Contains("dimension 7 must be even"));
    std::int32_t best[2];
    CHECK_THROWS_WITH(ops::row_argmax(ops::ConstMatrix(a.data(), 2, 8), nullptr, 1), Contains("row_argmax: out is null"));
    CHECK_THROWS_WITH(ops::row_argmax(ops::ConstMatrix(a.data(), 2, 0), best, 1), Contains("rows have no columns"));
    CHECK_THROWS_WITH(ops::row_argmax(ops::ConstMatrix(a.data(), 2, 8), best, 0), Contains("thread count must be ≥ 1"));
    float top[16];
    CHECK_THROWS_WITH(ops::row_top_k(ops::ConstMatrix(a.data(), 2, 8), 9, best, top, 1), Contains("k = 9 is outside [1, 8]"));
    CHECK_THROWS_WITH(ops::row_top_k(ops::ConstMatrix(a.data(), 2, 8), 2, best, nullptr, 1), Contains("indices or values is null"));
  }
}

TEST_CASE("convert_to_bf16 rounds to nearest even on every ISA, NaN kept quiet", "[ops][bf16]") {
  ProcessIsaRestorer restore;
  // Every rounding situation: exact bf16 values, ties (low half 0x8000) with even and odd
  // kept bits, just below and above a tie, a carry into the exponent, the largest
  // finite values rounding to infinity, infinities, denormals, zeros, NaNs.
  std::vector<std::uint32_t> bits = {0x3f800000u, 0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x3f808001u, 0x3f7fffffu,
                                     0x7f7fffffu, 0xff7f8000u, 0x7f800000u, 0xff800000u, 0x00000001u, 0x80018000u,
                                     0x00000000u, 0x80000000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u};
  Rng rng(7);
  for (int i = 0; i < 3000; ++i) bits.push_back(static_cast<std::uint32_t>(rng.uniform_int(0, 0xffffffffLL)));
  std::vector<float> x(bits.size());
  std::memcpy(x.data(), bits.data(), bits.size() * sizeof(float));
  // Rows of 37 with a padded leading dimension: whole vectors and a partial tail.
  const index_t cols = 37, rows = static_cast<index_t>(x.size()) / cols;
  for (ops::Isa isa : ops::available_isas()) {
    ops::set_isa(isa);
    std::vector<std::uint16_t> y(static_cast<std::size_t>(rows * (cols + 3)), 0xdead);
    ops::convert_to_bf16(ops::ConstMatrix(x.data(), rows, cols), ops::MatrixView<std::uint16_t>(y.data(), rows, cols, cols + 3), 2);
    int wrong = 0, nan_wrong = 0;
    for (index_t r = 0; r < rows; ++r) {
      for (index_t c = 0; c < cols; ++c) {
        const float v = x[r * cols + c];
        const std::uint16_t got = y[r * (cols + 3) + c];
        if (std::isnan(v)) {
          nan_wrong += got != 0x7fc0;
          continue;
        }
        // Nearest even, written out: the value of each candidate against the input.
        std::uint32_t u;
        std::memcpy(&u, &v, 4);
        const std::uint32_t low = u & 0xffffu, kept = u >> 16;
        const std::uint32_t want = low > 0x8000u || (low == 0x8000u && (kept & 1u)) ? kept + 1 : kept;
        wrong += got != want;
      }
      for (index_t c = cols; c < cols + 3; ++c) wrong += y[r * (cols + 3) + c] != 0xdead;  // padding untouched
    }
    INFO(ops::isa_name(isa));
    CHECK(wrong == 0);
    CHECK(nan_wrong == 0);
    CHECK(ops::float_from_bf16(ops::bf16_from_float(1.00390625f)) == 1.0f);  // a tie to even
    CHECK(ops::bf16_from_float(std::nanf("")) == 0x7fc0);
  }
}

// A narrow table widens to exactly the floats of an fp32 table holding its values
// (bf16 bits shifted up, s8 as fl(q·factor)), so the gather of either gives the same
// bits: the numbers a model computes do not depend on how its table is stored beyond
// the rounding of the values themselves.
TEST_CASE("embedding of a bf16 or s8 table equals the fp32 embedding of its widened values, bit for bit",
          "[ops][embedding]") {
  ProcessIsaRestorer restore;
  Rng rng(11);
  const index_t vocab = 40, dim = 77;  // whole vectors and a tail on every ISA
  std::vector<std::uint16_t> bits(static_cast<size_t>(vocab * dim));
  std::vector<std::int8_t> q(bits.size());
  std::vector<float> factors(static_cast<size_t>(vocab)), from_bf16(bits.size()), from_s8(bits.size());
  for (index_t r = 0; r < vocab; ++r) {
    factors[r] = r == 3 ? 0.0f : rng.uniform(1e-4f, 1.0f);
    for (index_t c = 0; c < dim; ++c) {
      const size_t at = static_cast<size_t>(r * dim + c);
      bits[at] = ops::bf16_from_float(rng.uniform(-3, 3));
      q[at] = static_cast<std::int8_t>(rng.uniform_int(-127, 127));
      from_bf16[at] = ops::float_from_bf16(bits[at]);
      from_s8[at] = static_cast<float>(q[at]) * factors[r];
    }
  }
  std::vector<float> positions(static_cast<size_t>(5 * dim));
  for (float& p : positions) p = rng.uniform(-1, 1);
  std::vector<std::int32_t> ids, position_ids;
  for (int i = 0; i < 33; ++i) {
    ids.push_back(static_cast<std::int32_t>(rng.uniform_int(0, vocab - 1)));
    position_ids.push_back(static_cast<std::int32_t>(rng.uniform_int(0, 4)));
  }
  const index_t n = static_cast<index_t>(ids.size());
  auto gather = [&](const ops::EmbeddingTable& t) {
    std::vector<float> out(static_cast<size_t>(n * dim));
    ops::embedding(t, ids.data(), 22.627417f, ops::ConstMatrix(positions.data(), 5, dim), position_ids.data(),
                   ops::Matrix(out.data(), n, dim), 2);
    return out;
  };
  for (ops::Isa isa : ops::available_isas()) {
    if (ops::f32_kernel_isa(isa) != isa) continue;  // the same row kernels as avx512
    ops::set_isa(isa);
    INFO(ops::isa_name(isa));
    CHECK(gather(ops::EmbeddingTable(ops::MatrixView<const std::uint16_t>(bits.data(), vocab, dim))) ==
          gather(ops::ConstMatrix(from_bf16.data(), vocab, dim)));
    CHECK(gather(ops::EmbeddingTable(ops::MatrixView<const std::int8_t>(q.data(), vocab, dim), factors.data())) ==
          gather(ops::ConstMatrix(from_s8.data(), vocab, dim)));
  }
}

TEST_CASE("packed-weight buffers share blocks of huge pages, zeroed and aligned, freed with their last buffer",
          "[ops][memory]") {
  using Pages = ops::AlignedBuffer::Pages;
  const auto before = ops::shared_huge_page_blocks();
  {
    std::vector<ops::AlignedBuffer> small;
    for (const std::size_t bytes : {1, 63, 64, 1000, 256 << 10, 1 << 20}) {
      ops::AlignedBuffer b(bytes, Pages::shared_huge);
      REQUIRE(b.bytes() == bytes);
      CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % ops::AlignedBuffer::kAlignment == 0);
      CHECK(std::all_of(b.data(), b.data() + bytes, [](std::byte x) { return x == std::byte{0}; }));
      std::memset(b.data(), 0xAB, bytes);  // the whole slice is ours to write (ASan checks)
      small.push_back(std::move(b));
    }
    // 1.3 MiB of slices: at most one block more than before (32 MiB blocks; a tail of an
    // existing block may take them).
    const auto during = ops::shared_huge_page_blocks();
    CHECK(during.blocks <= before.blocks + 1);
    // A slice larger than a block gets a block of its own, a whole number of huge pages.
    ops::AlignedBuffer large((40u << 20) + 5, Pages::shared_huge);
    const auto with_large = ops::shared_huge_page_blocks();
    CHECK(with_large.blocks == during.blocks + 1);
    CHECK(with_large.bytes - during.bytes == 42u << 20);
    CHECK(reinterpret_cast<std::uintptr_t>(large.data()) % ops::AlignedBuffer::kHugePage == 0);
    // Moves hand the slice over; the moved-from buffer holds nothing.
    ops::AlignedBuffer moved = std::move(small[0]);
    CHECK(small[0].empty());
    CHECK(small[0].data() == nullptr);
    CHECK(moved.bytes() == 1);
  }
  const auto after = ops::shared_huge_page_blocks();
  CHECK(after.blocks == before.blocks);
  CHECK(after.bytes == before.bytes);

  // Threads allocating and releasing at once (ThreadSanitizer and ASan watch this).
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      std::vector<ops::AlignedBuffer> held;
      for (int i = 0; i < 200; ++i) {
        held.emplace_back(static_cast<std::size_t>(64 * (1 + (i * 7 + t) % 300)), Pages::shared_huge);
        if (i % 3 == 0) held.erase(held.begin());
      }
    });
  for (auto& t : threads) t.join();
  CHECK(ops::shared_huge_page_blocks().blocks == before.blocks);

  // Own buffers of 2 MiB and more start on a huge-page boundary.
  ops::AlignedBuffer own(3u << 20);
  CHECK(reinterpret_cast<std::uintptr_t>(own.data()) % ops::AlignedBuffer::kHugePage == 0);
  CHECK(std::all_of(own.data(), own.data() + own.bytes(), [](std::byte x) { return x == std::byte{0}; }));
}

// layer_norm's and rms_norm's magnitudes are row_magnitudes of the rows they wrote, bit
// for bit, streamed or not, on every ISA (the differential cases check row_magnitudes
// itself against the reference order, and across ISAs); a NaN never wins the max, an
// inf does.
TEST_CASE("a norm's row magnitudes are those of its output rows, on every ISA", "[ops][rows]") {
  ProcessIsaRestorer restore;
  const index_t rows = 21, cols = 389;
  Buffer2D x(rows, cols, 3), gamma(1, cols), beta(1, cols), y(rows, cols, 1);
  Rng rng(test_seed() ^ 5151);
  x.fill_random(rng, -2, 2);
  gamma.fill_random(rng, 0.5f, 1.5f);
  beta.fill_random(rng, -1, 1);
  for (index_t r = 0; r < rows; r += 3) x.at(r, (r * 17) % cols) = 300.0f;  // one value dominates
  const ops::NormWeights w{gamma.data(), beta.data(), 1e-5f};
  const std::size_t saved = ops::streaming_store_threshold();
  for (ops::Isa isa : ops::available_isas()) {
    ops::set_isa(isa);
    for (bool rms : {false, true})
      for (std::size_t threshold : {saved, std::size_t{0}}) {
        INFO(ops::isa_name(isa) << (rms ? " rms_norm" : " layer_norm") << (threshold == 0 ? ", streamed" : ""));
        ops::set_streaming_store_threshold(threshold);
        std::vector<ops::RowMagnitude> during(rows), after(rows);
        if (rms) ops::rms_norm(x.view(), y.view(), w, 2, {}, {}, during.data());
        else ops::layer_norm(x.view(), y.view(), w, 2, {}, {}, during.data());
        ops::set_streaming_store_threshold(saved);
        ops::reference::row_magnitudes(y.view(), after.data());
        for (index_t r = 0; r < rows; ++r) {
          INFO("row " << r);
          CHECK(std::memcmp(&during[r], &after[r], sizeof(ops::RowMagnitude)) == 0);
        }
      }
  }
  std::vector<float> odd = {1.0f, -3.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  odd.resize(37, 0.5f);
  ops::RowMagnitude m;
  ops::row_magnitudes({odd.data(), 1, 37}, &m, 1);
  CHECK(m.max_abs == 3.0f);
  CHECK(std::isnan(m.sum_abs));
  odd[30] = -std::numeric_limits<float>::infinity();
  ops::row_magnitudes({odd.data(), 1, 37}, &m, 1);
  CHECK(m.max_abs == std::numeric_limits<float>::infinity());
  CHECK_THROWS_WITH(ops::row_magnitudes({odd.data(), 1, 37}, nullptr, 1), Contains("row_magnitudes: out is null"));
}

TEST_CASE("ISA selection", "[ops][isa]") {
  const auto isas = ops::available_isas();
  REQUIRE_FALSE(isas.empty());
  CHECK(isas.back() == ops::Isa::sse2);  // the x86-64 baseline is always there
  CHECK(ops::parse_isa("avx2") == ops::Isa::avx2);
  CHECK(ops::parse_isa("portable") == ops::Isa::sse2);
  CHECK(ops::parse_isa("avx512_vnni") == ops::Isa::avx512_vnni);
  CHECK(ops::parse_isa("avx512_bf16") == ops::Isa::avx512_bf16);
  CHECK(ops::f32_kernel_isa(ops::Isa::avx512_bf16) == ops::Isa::avx512);
  CHECK(ops::parse_isa("avx512_amx") == ops::Isa::avx512_amx);
  CHECK(ops::f32_kernel_isa(ops::Isa::avx512_amx) == ops::Isa::avx512);
  // A chain: a level is available only with every level below it.
  for (ops::Isa isa : isas)
    for (int lower = 0; lower < static_cast<int>(isa); ++lower) CHECK(ops::isa_available(static_cast<ops::Isa>(lower)));
  CHECK_THROWS_WITH(ops::parse_isa("neon"), Contains("unknown instruction set 'neon'"));
  for (ops::Isa isa : isas) CHECK_THAT(ops::isa_kernel_summary(isa), Contains("f32_gemm_"));
  // ctest runs this binary again with ATTEND_ISA set and ATTEND_EXPECT_ISA naming it.
  if (const char* expect = std::getenv("ATTEND_EXPECT_ISA")) CHECK(ops::isa_name(ops::active_isa()) == std::string(expect));
}

TEST_CASE("parallel_tasks runs every task once and rethrows the lowest task's exception after all end", "[ops][threads]") {
  // kStackTaskErrors threads keep their errors on the stack, more in a vector: both ways.
  for (const int threads : {3, ops::kStackTaskErrors + 3}) {
    INFO(threads << " threads");
    std::vector<std::atomic<int>> ran(static_cast<std::size_t>(threads));
    CHECK_THROWS_WITH(ops::parallel_tasks(threads, [&](int t) {
      ran[static_cast<std::size_t>(t)].fetch_add(1);
      if (t == 1 || t == threads - 1) throw std::runtime_error("task " + std::to_string(t));
    }), "task 1");
    for (const auto& r : ran) CHECK(r.load() == 1);
  }
}

TEST_CASE("an IsaScope sets the ISA of its thread and of the team workers it starts, nests, and ends", "[ops][isa]") {
  const ops::Isa process = ops::active_isa();
  const auto workers_isa = [] {
    std::vector<int> seen(3, -1);
    ops::parallel_tasks(3, [&](int t) { seen[static_cast<size_t>(t)] = static_cast<int>(ops::active_isa()); });
    return seen;
  };
  const auto all = [](ops::Isa isa) { return std::vector<int>(3, static_cast<int>(isa)); };
  {
    const ops::IsaScope outer(ops::Isa::sse2);
    CHECK(ops::active_isa() == ops::Isa::sse2);
    CHECK(workers_isa() == all(ops::Isa::sse2));
    if (ops::isa_available(ops::Isa::avx2)) {
      const ops::IsaScope inner(ops::Isa::avx2);
      CHECK(ops::active_isa() == ops::Isa::avx2);
      CHECK(workers_isa() == all(ops::Isa::avx2));
    }
    CHECK(ops::active_isa() == ops::Isa::sse2);
    ops::Isa elsewhere = ops::Isa::sse2;
    std::thread([&] { elsewhere = ops::active_isa(); }).join();
    CHECK(elsewhere == process);  // other threads keep the process's ISA
  }
  CHECK(ops::active_isa() == process);
  CHECK(workers_isa() == all(process));  // the workers dropped it with the region
  for (const ops::Isa isa :
       {ops::Isa::avx512_amx, ops::Isa::avx512_bf16, ops::Isa::avx512_vnni, ops::Isa::avx512, ops::Isa::avx2})
    if (!ops::isa_available(isa)) CHECK_THROWS_WITH(ops::IsaScope(isa), Contains("cannot run"));
}

}  // namespace attend::test
