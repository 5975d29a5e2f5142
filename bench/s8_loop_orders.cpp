// The s8 GEMM driver's loop orders, alternated in one process: which one a CPU should
// take (GemmKernels::s8_few_row_order, s8_panel_runs).
//
//   s8_loop_orders [--rounds 20] [--isa avx512|avx2|sse2]
//
// For each shape — the chunks all-MiniLM-L6-v2's encoder runs (128 rows per thread for
// the feed-forward where its 1536-wide intermediate fits 3/4 of the L2, so 64 on a
// 512 KiB L2, which the 128-row shapes here overstate; 256 for the attention), then decoder-like products whose weights
// stream from memory — it runs every chunk of a 1792-row batch once (so A and C stream
// as in the model, not one hot chunk) under each order in turn, `rounds` times, and
// prints each order's median GOP/s and the median over rounds of the per-round ratio
// block / few-row, beside the order the kernels ask for ("shipped": for kernels that
// take runs of panels, the block order with a run per call, against a call per panel).
// On shared VMs the machine's speed drifts ±20–30% from second to
// second, which neither op_perf (one hot shape) nor end-to-end runs see through; the
// per-round ratio does. An A/A column (the few-row order against itself, run after the
// block order) shows the noise floor of that median: a ratio inside it is no result.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "attend/ops/gemm.hpp"
#include "attend/ops/isa.hpp"
#include "gemm_driver.hpp"

namespace {

using namespace attend::ops;
using Order = detail::S8LoopOrder;

struct Shape {
  const char* what;
  index_t m, n, k;
  bool gelu;
  int weight_copies;  // > 1: every GEMM reads the next copy, so weights come from memory
};

constexpr index_t kBatchRows = 1792;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run_shape(const Shape& s, int rounds) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(s.n * s.k), a(kBatchRows * s.k), c(kBatchRows * s.n), bias(s.n);
  for (float& x : w) x = 0.05f * normal(rng);
  for (float& x : a) x = normal(rng);
  for (float& x : bias) x = normal(rng);
  std::vector<PackedWeight> weights;
  for (int i = 0; i < s.weight_copies; ++i) weights.push_back(pack_weight(ConstMatrix(w.data(), s.n, s.k), WeightType::s8));
  GemmEpilogue ep;
  ep.bias = bias.data();
  ep.activation = s.gelu ? Activation::gelu : Activation::none;
  std::vector<std::byte> scratch(gemm_scratch_bytes(s.m, weights[0].view()) + 64);
  std::byte* aligned = reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(scratch.data()) + 63) / 64 * 64);
  const std::span<std::byte> scratch_span(aligned, gemm_scratch_bytes(s.m, weights[0].view()));
  std::size_t next = 0;
  auto batch = [&] {  // every chunk of the batch once
    for (index_t r = 0; r + s.m <= kBatchRows; r += s.m)
      gemm(ConstMatrix(a.data() + r * s.k, s.m, s.k), weights[next++ % weights.size()].view(),
           Matrix(c.data() + r * s.n, s.m, s.n), ep, 1, scratch_span);
  };
  const double ops = 2.0 * static_cast<double>(kBatchRows / s.m * s.m) * static_cast<double>(s.n * s.k);
  auto gops = [&](Order order) {
    detail::set_s8_loop_order(order);
    batch();  // warm: this order's first touches
    const auto t0 = std::chrono::steady_clock::now();
    batch();
    batch();
    return 2 * ops / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1e9;
  };
  std::vector<double> few, block, shipped, few_again, ratio, runs_ratio, same;
  for (int round = 0; round < rounds; ++round) {
    few.push_back(gops(Order::few_rows));
    block.push_back(gops(Order::block));
    shipped.push_back(gops(Order::kernels));
    few_again.push_back(gops(Order::few_rows));
    ratio.push_back(block.back() / few.back());
    runs_ratio.push_back(shipped.back() / block.back());
    same.push_back(few_again.back() / few.back());
  }
  detail::set_s8_loop_order(Order::kernels);
  std::printf("%-32s M %4ld N %5ld K %5ld %s  few-row %6.1f  block %6.1f  shipped %6.1f GOP/s  block/few-row %.3f  "
              "shipped/block %.3f  (A/A %.3f)\n",
              s.what, static_cast<long>(s.m), static_cast<long>(s.n), static_cast<long>(s.k), s.gelu ? "+gelu" : "     ",
              median(few), median(block), median(shipped), median(ratio), median(runs_ratio), median(same));
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--isa") && i + 1 < argc) {
      set_isa(parse_isa(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: s8_loop_orders [--rounds N] [--isa avx512|avx2|sse2]\n");
      return 2;
    }
  }
  std::printf("isa %s (%s), one thread, %d rounds; medians over rounds\n", isa_name(active_isa()),
              gemm_kernel_name(active_isa(), WeightType::s8), rounds);
  const Shape shapes[] = {
      {"MiniLM FFN up (chunk of 128 rows)", 128, 1536, 384, true, 1},
      {"MiniLM FFN down", 128, 384, 1536, false, 1},
      {"MiniLM QKV (chunk of 256 rows)", 256, 1152, 384, false, 1},
      {"MiniLM attention output", 256, 384, 384, false, 1},
      {"decoder, weights from memory", 4, 2048, 512, false, 64},
      {"decoder, weights from memory", 16, 2048, 512, false, 64},
      {"decoder, weights from memory", 64, 2048, 512, false, 64},
      {"decoder, weights from memory", 32, 512, 2048, false, 64},
  };
  for (const Shape& s : shapes) run_shape(s, rounds);
}
