// GEMM: attend vs oneDNN matmul vs a naive loop, on the decoder's and encoder's shapes,
// in fp32 (gemm/…), bf16 (gemm_bf16/…) and int8 (gemm_s8/…: attend's s8 weights
// against oneDNN's u8s8 matmul). For each shape and thread count they run back to
// back, so machine drift hits them alike; bench/compare.sh turns the output into
// ratios. "FLOP/s" counts 2·M·N·K for every precision (int8 operations included).
// attend's kernels follow ATTEND_ISA, oneDNN's ONEDNN_MAX_CPU_ISA (an AVX2 proxy on an
// AVX-512 machine sets both); a oneDNN yardstick this CPU lacks is left out, with a
// message (onednn_yardsticks.hpp).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <random>
#include <string>
#include <vector>

#include "attend/ops/gemm.hpp"
#include "onednn_matmul.hpp"
#include "onednn_yardsticks.hpp"

namespace {

using attend::ops::index_t;

struct Operands {
  std::vector<float> a, w, c;
  Operands(index_t M, index_t N, index_t K) : a(M * K), w(N * K), c(M * N) {
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& v : a) v = u(gen);
    for (float& v : w) v = u(gen);
  }
};

void set_flops(benchmark::State& st, index_t M, index_t N, index_t K) {
  st.counters["FLOP/s"] = benchmark::Counter(2.0 * M * N * K, benchmark::Counter::kIsIterationInvariantRate);
}

void bm_attend(benchmark::State& st, index_t M, index_t N, index_t K, int threads, attend::ops::WeightType type) {
  Operands x(M, N, K);
  const auto packed = attend::ops::pack_weight(attend::ops::ConstMatrix(x.w.data(), N, K), type);
  for (auto _ : st) {
    attend::ops::gemm(attend::ops::ConstMatrix(x.a.data(), M, K), packed, attend::ops::Matrix(x.c.data(), M, N), {},
                      threads);
    benchmark::ClobberMemory();
  }
  set_flops(st, M, N, K);
}

void bm_onednn(benchmark::State& st, index_t M, index_t N, index_t K, int threads,
               attend::bench::OnednnPrecision precision) {
  omp_set_num_threads(threads);  // oneDNN's OpenMP runtime takes the team size from here
  Operands x(M, N, K);
  attend::bench::OnednnMatmul mm(M, N, K, x.w.data(), precision);
  mm.set_source(x.a.data());
  for (auto _ : st) {
    mm.run(x.c.data());
    benchmark::ClobberMemory();
  }
  set_flops(st, M, N, K);
}

// The textbook loop: one dot product per output, compiled -O3 (the k loop vectorises).
void bm_naive(benchmark::State& st, index_t M, index_t N, index_t K) {
  Operands x(M, N, K);
  for (auto _ : st) {
    for (index_t i = 0; i < M; ++i)
      for (index_t j = 0; j < N; ++j) {
        float s = 0;
        for (index_t k = 0; k < K; ++k) s += x.a[i * K + k] * x.w[j * K + k];
        x.c[i * N + j] = s;
      }
    benchmark::ClobberMemory();
  }
  set_flops(st, M, N, K);
}

const int kRegistered = [] {
  using attend::bench::OnednnPrecision;
  using attend::ops::WeightType;
  const auto yardsticks = attend::bench::describe_isas_and_yardsticks("bench_gemm");
  const std::pair<index_t, index_t> nk[] = {{512, 512}, {1536, 512}, {2048, 512}, {512, 2048}, {32000, 512}};
  const struct {
    const char* prefix;
    WeightType ours;
    OnednnPrecision theirs;
  } precisions[] = {{"gemm", WeightType::f32, OnednnPrecision::f32},
                    {"gemm_bf16", WeightType::bf16, OnednnPrecision::bf16},
                    {"gemm_s8", WeightType::s8, OnednnPrecision::u8s8}};
  for (index_t M : {1, 2, 3, 8, 32, 128, 256, 1024})  // 1–3: thin tiles over several panels
    for (auto [N, K] : nk) {
      const std::string shape = "/M=" + std::to_string(M) + "/N=" + std::to_string(N) + "/K=" + std::to_string(K);
      for (int t : {1, 2})
        for (const auto& p : precisions) {
          const std::string suffix = shape + "/threads=" + std::to_string(t);
          benchmark::RegisterBenchmark((std::string(p.prefix) + "/attend" + suffix).c_str(), bm_attend, M, N, K, t,
                                       p.ours)
              ->UseRealTime();
          if (yardsticks.has(p.theirs))
            benchmark::RegisterBenchmark((std::string(p.prefix) + "/onednn" + suffix).c_str(), bm_onednn, M, N, K, t,
                                         p.theirs)
                ->UseRealTime();
        }
      auto* naive = benchmark::RegisterBenchmark(("gemm/naive" + shape + "/threads=1").c_str(), bm_naive, M, N, K);
      naive->UseRealTime();
      if (M * N * K > (1 << 26)) naive->Iterations(1);  // the big ones: one pass is enough
    }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
