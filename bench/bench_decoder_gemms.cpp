// The GEMMs of one decoder step of the standard workload (Transformer-base: 6 layers of
// qkv 1536×512, self-out 512×512, cross-q 512×512, cross-out 512×512, fc1 2048×512,
// fc2 512×2048, then the 32000×512 output projection), back to back on M = 32 rows
// (batch 32, greedy) or 128 (beam 4) — or 1 to 3 (one sentence, greedy or a beam of 2
// or 3: the thin tiles that take several panels at once, kernel_table.hpp) — weights
// cold as in decoding: 38 MB (int8) to
// 154 MB (fp32) per step stream from memory, beyond the 32 MiB L3. attend in f32, bf16
// and s8 against oneDNN's f32, bf16 and u8s8 matmul, each step alternating with the
// other's in the same run. "FLOP/s" counts 2·M·N·K; "weights_GB/s" the weight bytes
// streamed per second; "ms_per_step" the step's GEMM time.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attend/ops/gemm.hpp"
#include "onednn_matmul.hpp"
#include "onednn_yardsticks.hpp"

namespace {

using attend::ops::index_t;

struct Shape {
  index_t n, k;
};

// One decoder step's weights, in execution order.
std::vector<Shape> decoder_step_shapes() {
  std::vector<Shape> shapes;
  for (int layer = 0; layer < 6; ++layer)
    for (Shape s : {Shape{1536, 512}, Shape{512, 512}, Shape{512, 512}, Shape{512, 512}, Shape{2048, 512}, Shape{512, 2048}})
      shapes.push_back(s);
  shapes.push_back({32000, 512});
  return shapes;
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

struct StepCounters {
  double flops = 0, weight_bytes = 0;
  void set(benchmark::State& st) const {
    st.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
    st.counters["weights_GB/s"] = benchmark::Counter(weight_bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    // (1e-3 per iteration as a rate, inverted: milliseconds per iteration)
    st.counters["ms_per_step"] = benchmark::Counter(1e-3, benchmark::Counter::kIsIterationInvariantRate |
                                                              benchmark::Counter::kInvert);
  }
};

void bm_attend(benchmark::State& st, index_t M, int threads, attend::ops::WeightType type) {
  const auto shapes = decoder_step_shapes();
  std::vector<attend::ops::PackedWeight> weights;
  StepCounters counters;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto w = random_floats(shapes[i].n * shapes[i].k, static_cast<unsigned>(i));
    weights.push_back(attend::ops::pack_weight(attend::ops::ConstMatrix(w.data(), shapes[i].n, shapes[i].k), type));
    counters.flops += 2.0 * M * shapes[i].n * shapes[i].k;
    counters.weight_bytes += static_cast<double>(weights.back().bytes());
  }
  const auto a = random_floats(M * 2048, 99);
  std::vector<float> c(M * 32000);
  for (auto _ : st) {
    for (std::size_t i = 0; i < shapes.size(); ++i)
      attend::ops::gemm(attend::ops::ConstMatrix(a.data(), M, shapes[i].k), weights[i],
                        attend::ops::Matrix(c.data(), M, shapes[i].n), {}, threads);
    benchmark::ClobberMemory();
  }
  counters.set(st);
}

void bm_onednn(benchmark::State& st, index_t M, int threads, attend::bench::OnednnPrecision precision) {
  omp_set_num_threads(threads);
  const auto shapes = decoder_step_shapes();
  const auto a = random_floats(M * 2048, 99);
  std::vector<std::unique_ptr<attend::bench::OnednnMatmul>> mms;
  StepCounters counters;
  const double element = precision == attend::bench::OnednnPrecision::f32    ? 4
                         : precision == attend::bench::OnednnPrecision::bf16 ? 2
                                                                             : 1;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto w = random_floats(shapes[i].n * shapes[i].k, static_cast<unsigned>(i));
    mms.push_back(std::make_unique<attend::bench::OnednnMatmul>(M, shapes[i].n, shapes[i].k, w.data(), precision));
    mms.back()->set_source(a.data());
    counters.flops += 2.0 * M * shapes[i].n * shapes[i].k;
    counters.weight_bytes += element * shapes[i].n * shapes[i].k;
  }
  std::vector<float> c(M * 32000);
  for (auto _ : st) {
    for (auto& mm : mms) mm->run(c.data());
    benchmark::ClobberMemory();
  }
  counters.set(st);
}

const int kRegistered = [] {
  using attend::bench::OnednnPrecision;
  using attend::ops::WeightType;
  const struct {
    const char* name;
    WeightType ours;
    OnednnPrecision theirs;
  } precisions[] = {{"f32", WeightType::f32, OnednnPrecision::f32},
                    {"bf16", WeightType::bf16, OnednnPrecision::bf16},
                    {"s8", WeightType::s8, OnednnPrecision::u8s8}};
  const auto yardsticks = attend::bench::describe_isas_and_yardsticks("bench_decoder_gemms");
  for (index_t M : {1, 2, 3, 16, 32, 128})
    for (int t : {1, 2})
      for (const auto& p : precisions) {
        const std::string suffix = std::string("/") + p.name + "/M=" + std::to_string(M) + "/threads=" + std::to_string(t);
        benchmark::RegisterBenchmark(("decoder_step/attend" + suffix).c_str(), bm_attend, M, t, p.ours)->UseRealTime();
        if (yardsticks.has(p.theirs))
          benchmark::RegisterBenchmark(("decoder_step/onednn" + suffix).c_str(), bm_onednn, M, t, p.theirs)->UseRealTime();
      }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
