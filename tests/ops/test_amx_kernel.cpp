// The AMX s8 micro-kernel (ops/src/kernels/gemm_s8_amx_microkernel.hpp) at the level of
// one GemmTile, on every CPU: its loops, row halves, K steps and layouts run here on
// AmxTilesEmulated (plain C++ tile operations, the instructions' semantics) with the
// portable epilogue, against sums computed in this file — and, where the CPU has AMX,
// the real kernel of the avx512_amx table against the same expected bits. (The whole
// s8 GEMM with it, against every other ISA, bit for bit: test_isa_identity.cpp and
// test_gemm_typed.cpp, which run every available ISA.)
//
// This file is compiled with the kernels' -ffp-contract=off (tests/CMakeLists.txt), so
// the epilogue it instantiates rounds as the kernels' does.
#define ATTEND_ISA_NS test_amx_emulation
#include "kernels/gemm_s8_amx_microkernel.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "attend/ops/isa.hpp"
#include "kernel_table.hpp"
#include "support/test_support.hpp"

namespace attend::test {
namespace {

namespace emu = ops::test_amx_emulation;
using ops::index_t;

constexpr int kPanel = emu::kAmxPanelWidth;

// One call's operands: A as rows of kc int8, `panels` panels of [kc/4][32][4] u8 = q +
// 128 one after another, nr columns in all (the last panel partly), and what the kernel
// must store: ((float)Σ a·q · col_scale) · row_scale + bias.
struct TileCase {
  int mr = 0, nr = 0, panels = 1;
  index_t kc = 0;
  std::vector<std::int8_t> a;
  std::vector<std::uint8_t> panel;
  std::vector<float> row_scale, col_scale, bias;
  std::vector<std::int32_t> row_offset;
  std::vector<float> expected;  // [mr][nr]

  TileCase(Rng& rng, int mr_, int nr_, index_t kc_) : mr(mr_), nr(nr_), panels((nr_ + kPanel - 1) / kPanel), kc(kc_) {
    const int width = panels * kPanel;
    a.resize(static_cast<size_t>(mr * kc));
    std::vector<int> q(static_cast<size_t>(kc * width), 0);  // [k][j], zero past nr
    for (auto& x : a) x = static_cast<std::int8_t>(rng.uniform_int(-127, 127));
    for (index_t k = 0; k < kc; ++k)
      for (int j = 0; j < nr; ++j) q[static_cast<size_t>(k * width + j)] = rng.uniform_int(-127, 127);
    panel.resize(static_cast<size_t>(kc * width));
    for (int p = 0; p < panels; ++p)
      for (index_t k = 0; k < kc; ++k)
        for (int j = 0; j < kPanel; ++j)
          panel[static_cast<size_t>(p * kc * kPanel + (k / 4) * kPanel * 4 + j * 4 + k % 4)] =
              static_cast<std::uint8_t>(q[static_cast<size_t>(k * width + p * kPanel + j)] + 128);
    row_scale.resize(static_cast<size_t>(mr));
    row_offset.resize(static_cast<size_t>(mr));
    col_scale.assign(static_cast<size_t>(width), 0.0f);
    bias.assign(static_cast<size_t>(width), 0.0f);
    for (auto& s : row_scale) s = static_cast<float>(rng.uniform(1e-3, 1e-2));
    for (int j = 0; j < nr; ++j) {
      col_scale[static_cast<size_t>(j)] = static_cast<float>(rng.uniform(1e-3, 1e-2));
      bias[static_cast<size_t>(j)] = static_cast<float>(rng.uniform(-1, 1));
    }
    expected.resize(static_cast<size_t>(mr * nr));
    for (int r = 0; r < mr; ++r) {
      std::int32_t total = 0;
      for (index_t k = 0; k < kc; ++k) total += a[static_cast<size_t>(r * kc + k)];
      row_offset[static_cast<size_t>(r)] = 128 * total;
      for (int j = 0; j < nr; ++j) {
        std::int32_t s = 0;
        for (index_t k = 0; k < kc; ++k)
          s += a[static_cast<size_t>(r * kc + k)] * q[static_cast<size_t>(k * width + j)];
        const float dequantized = static_cast<float>(s) * col_scale[static_cast<size_t>(j)] *
                                  row_scale[static_cast<size_t>(r)];
        expected[static_cast<size_t>(r * nr + j)] = dequantized + bias[static_cast<size_t>(j)];
      }
    }
  }

  // Runs `kernel` on the tile; returns C (poisoned first).
  template <class Kernel>
  std::vector<float> run(const Kernel& kernel) const {
    std::vector<float> c(static_cast<size_t>(mr * nr), std::numeric_limits<float>::quiet_NaN());
    ops::detail::GemmTile t;
    t.kc = kc;
    t.nr = nr;
    t.panels = panels;
    t.panel_stride = kc * kPanel;
    t.a = a.data();
    t.b = panel.data();
    t.c = c.data();
    t.ldc = nr;
    t.last = true;
    t.bias = bias.data();
    t.row_scale = row_scale.data();
    t.row_offset = row_offset.data();
    t.col_scale = col_scale.data();
    t.prefetch = reinterpret_cast<const char*>(panel.data());
    kernel(t);
    return c;
  }
};

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("AMX s8 micro-kernel: emulated tiles, and the instructions where the CPU has them", "[ops][gemm][int8][amx]") {
  Rng rng(test_seed() ^ 0x414d58);
  const bool have_amx = ops::isa_available(ops::Isa::avx512_amx);
  INFO("this CPU " << (have_amx ? "runs" : "lacks") << " AMX: the real kernel is " << (have_amx ? "" : "not ")
                   << "checked");
  for (const int mr : {1, 5, 16, 17, 31, 32})
    for (const index_t kc : {64, 128, 384})
      for (const int nr : {32, 7, 96, 77}) {  // one panel, whole or in part; a run of three
        INFO("mr " << mr << ", kc " << kc << ", nr " << nr);
        const TileCase c(rng, mr, nr, kc);
        const auto emulated = c.run([&](const ops::detail::GemmTile& t) {
          emu::AmxTilesEmulated::configure(mr);  // (configure is per call: tiles of other heights ran before)
          emu::s8_amx_tile<xsimd::sse2, emu::AmxTilesEmulated>(t, mr);
        });
        CHECK(same_bits(emulated, c.expected));
        if (have_amx) {
          const auto& kernels = ops::detail::kernels_for(ops::Isa::avx512_amx);
          REQUIRE(kernels.s8.mr == 32);
          kernels.s8_begin_thread();
          const auto real = c.run(kernels.s8.kernels[mr - 1][0]);
          CHECK(same_bits(real, c.expected));
        }
      }
}

}  // namespace attend::test
