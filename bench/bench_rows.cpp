// Memory-bound ops against a plain copy of the same bytes: LayerNorm (read x, write y),
// GeLU (same), softmax over the vocabulary. Two sizes: one that lives in L2 (the
// decoding step) and one far beyond L3 (DRAM-bound). GB/s counts bytes read + written.
#include <benchmark/benchmark.h>

#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "attend/ops/activation.hpp"
#include "attend/ops/normalization.hpp"
#include "attend/ops/softmax.hpp"

namespace {

using attend::ops::index_t;

// 64-byte aligned, as every tensor in attend's arena: streaming stores need aligned
// vectors, and a row start off that grid costs each row a partial line.
template <class T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <class U>
  Aligned64(const Aligned64<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{64}); }
  bool operator==(const Aligned64&) const { return true; }
};
using FloatVec = std::vector<float, Aligned64<float>>;

struct Rows {
  index_t rows, cols;
  FloatVec x, y, gamma, beta;
  Rows(index_t r, index_t c) : rows(r), cols(c), x(r * c), y(r * c), gamma(c, 1.0f), beta(c, 0.0f) {
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(-3, 3);
    for (float& v : x) v = u(gen);
  }
  attend::ops::ConstMatrix in() const { return {x.data(), rows, cols}; }
  attend::ops::Matrix out() { return {y.data(), rows, cols}; }
};

void bytes_counter(benchmark::State& st, const Rows& r) {
  st.counters["GB/s"] = benchmark::Counter(8.0 * r.rows * r.cols, benchmark::Counter::kIsIterationInvariantRate);
}

void bm_copy(benchmark::State& st, index_t rows, index_t cols) {
  Rows r(rows, cols);
  for (auto _ : st) {
    std::memcpy(r.y.data(), r.x.data(), r.x.size() * sizeof(float));
    benchmark::ClobberMemory();
  }
  bytes_counter(st, r);
}

void bm_layer_norm(benchmark::State& st, index_t rows, index_t cols, int threads) {
  Rows r(rows, cols);
  const attend::ops::NormWeights w{r.gamma.data(), r.beta.data(), 1e-5f};
  for (auto _ : st) attend::ops::layer_norm(r.in(), r.out(), w, threads);
  bytes_counter(st, r);
}

void bm_gelu(benchmark::State& st, index_t rows, index_t cols, int threads) {
  Rows r(rows, cols);
  for (auto _ : st) attend::ops::activation(attend::ops::Activation::gelu, r.in(), r.out(), threads);
  bytes_counter(st, r);
}

void bm_softmax(benchmark::State& st, index_t rows, index_t cols, int threads) {
  Rows r(rows, cols);
  for (auto _ : st) attend::ops::softmax(r.in(), r.out(), threads);
  bytes_counter(st, r);
}

const int kRegistered = [] {
  struct Shape {
    const char* op;
    index_t rows, cols;
  };
  // L2-resident (a decoding step's rows) and DRAM-sized (far beyond the 105 MiB L3).
  const Shape shapes[] = {{"layer_norm", 128, 512},   {"layer_norm", 65536, 512}, {"gelu", 32, 2048},
                          {"gelu", 16384, 2048},      {"softmax", 4, 32000},      {"softmax", 1024, 32000}};
  for (const Shape& s : shapes) {
    const std::string shape = std::string("/").append(std::to_string(s.rows)).append("x").append(std::to_string(s.cols));
    benchmark::RegisterBenchmark(("rows/copy" + std::string("/") + s.op + shape).c_str(), bm_copy, s.rows, s.cols)
        ->UseRealTime();
    for (int t : {1, 2}) {
      const std::string name = std::string("rows/") + s.op + "/" + s.op + shape + "/threads=" + std::to_string(t);
      auto fn = std::string(s.op) == "layer_norm" ? bm_layer_norm : std::string(s.op) == "gelu" ? bm_gelu : bm_softmax;
      benchmark::RegisterBenchmark(name.c_str(), fn, s.rows, s.cols, t)->UseRealTime();
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
