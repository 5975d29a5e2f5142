// Attention: fused (online softmax) vs unfused (GEMM → softmax → GEMM), H = 8, d = 64.
// Reports FLOP/s and the extra memory each needs beyond Q, K, V and O. Decode: one
// query per sequence against a cache of L keys, fused decode kernel vs the unfused path.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "attend/ops/aligned_buffer.hpp"
#include "attend/ops/attention.hpp"
#include "attend/ops/bf16.hpp"
#include "memory_probe.hpp"

namespace {

using attend::ops::index_t;
constexpr index_t H = 8, d = 64;

struct Tensors {
  index_t B, T, S;
  attend::ops::AlignedBuffer q, k, v, out;
  Tensors(index_t b, index_t t, index_t s)
      : B(b), T(t), S(s), q(bytes(b * t)), k(bytes(b * s)), v(bytes(b * s)), out(bytes(b * t)) {
    std::mt19937 gen(3);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto* buf : {&q, &k, &v})
      for (size_t i = 0; i < buf->bytes() / 4; ++i) buf->floats()[i] = u(gen);
  }
  static size_t bytes(index_t rows) { return static_cast<size_t>(rows) * H * d * sizeof(float); }
  attend::ops::AttentionArgs args(bool causal) const {
    attend::ops::AttentionArgs a;
    a.batch = B, a.heads = H, a.q_len = T, a.kv_len = S, a.head_dim = d, a.causal = causal;
    a.q = {q.floats(), H * T * d, T * d, d};
    a.k = {k.floats(), H * S * d, S * d, d};
    a.v = {v.floats(), H * S * d, S * d, d};
    a.out = {out.floats(), H * T * d, T * d, d};
    return a;
  }
};

void counters(benchmark::State& st, double flops, double extra_bytes) {
  st.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["extra_MiB"] = extra_bytes / (1 << 20);
}

void bm_fused(benchmark::State& st, index_t T, bool causal, int threads) {
  Tensors x(1, T, T);
  const auto args = x.args(causal);
  for (auto _ : st) attend::ops::attention(args, threads);
  counters(st, 4.0 * H * T * T * d * (causal ? 0.5 : 1.0),
           double(attend::ops::attention_stack_bytes_per_thread()) * threads);
}

void bm_unfused(benchmark::State& st, index_t T, bool causal, int threads) {
  Tensors x(1, T, T);
  const auto args = x.args(causal);
  const index_t floats = attend::ops::attention_unfused_scratch_floats(args, threads);
  attend::ops::AlignedBuffer scratch(static_cast<size_t>(floats) * sizeof(float));
  for (auto _ : st) attend::ops::attention_unfused(args, {scratch.floats(), static_cast<size_t>(floats)}, threads);
  counters(st, 4.0 * H * T * T * d * (causal ? 0.5 : 1.0), double(scratch.bytes()));
}

// Decode: B sequences, one new query each, L cached keys (contiguous cache).
void bm_decode_fused(benchmark::State& st, index_t L, int threads) {
  constexpr index_t B = 32;
  Tensors x(B, 1, L);
  std::vector<std::int32_t> lengths(B, static_cast<std::int32_t>(L));
  attend::ops::DecodeAttentionArgs a;
  a.rows = B, a.heads = H, a.head_dim = d;
  a.q = x.q.floats();
  a.q_row_stride = H * d;
  // Cache [B, H, L, d]: row stride H·L·d, head stride L·d, position stride d.
  a.k = {x.k.floats(), d, H * L * d, L * d, nullptr, 0};
  a.v = {x.v.floats(), d, H * L * d, L * d, nullptr, 0};
  a.kv_lengths = lengths.data();
  a.out = x.out.floats();
  a.out_row_stride = H * d;
  for (auto _ : st) attend::ops::attention_decode(a, threads);
  counters(st, 4.0 * B * H * L * d, double(attend::ops::attention_stack_bytes_per_thread()) * threads);
}

// Decode over a cross K/V cache of 6 layers in the two layouts a runtime can give it,
// each iteration on the next layer (24 MB in all at fp32, as a Transformer-base batch of
// 32 × L source positions): stacked as the K/V projection writes it, [B·L, 6·2·H·d] (a
// row's positions 24 KB apart, 12 KB at bf16), or head-major, [6][2][B][H][L][d] (a row's
// positions contiguous); f32 or bf16 elements.
void bm_decode_cross_layout(benchmark::State& st, index_t L, bool head_major, attend::ops::KvType type, int threads) {
  constexpr index_t B = 32, layers = 6, G = 2 * layers * H * d;
  const size_t n = static_cast<size_t>(B * L * G);
  attend::ops::AlignedBuffer kv(n * sizeof(float));
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (size_t i = 0; i < n; ++i) kv.floats()[i] = u(gen);
  if (type == attend::ops::KvType::bf16)  // narrowed in place, front to back: the first half holds them
    for (size_t i = 0; i < n; ++i) reinterpret_cast<std::uint16_t*>(kv.data())[i] = attend::ops::bf16_from_float(kv.floats()[i]);
  Tensors x(B, 1, 1);
  std::vector<std::int32_t> lengths(B, static_cast<std::int32_t>(L));
  attend::ops::DecodeAttentionArgs a;
  a.rows = B, a.heads = H, a.head_dim = d;
  a.q = x.q.floats(), a.q_row_stride = H * d;
  a.kv_lengths = lengths.data();
  a.out = x.out.floats(), a.out_row_stride = H * d;
  index_t layer = 0;
  for (auto _ : st) {
    const auto* base = static_cast<const char*>(static_cast<const void*>(kv.data()));
    const index_t e = attend::ops::kv_type_bytes(type);
    if (head_major) {
      const index_t block = B * H * L * d;
      a.k = {base + (2 * layer) * block * e, d, H * L * d, L * d, nullptr, 0, type};
      a.v = {base + (2 * layer + 1) * block * e, d, H * L * d, L * d, nullptr, 0, type};
    } else {
      a.k = {base + layer * 2 * H * d * e, G, L * G, d, nullptr, 0, type};
      a.v = {base + (layer * 2 * H * d + H * d) * e, G, L * G, d, nullptr, 0, type};
    }
    attend::ops::attention_decode(a, threads);
    layer = (layer + 1) % layers;
  }
  counters(st, 4.0 * B * H * L * d, 0);
  st.counters["kv_GB/s"] = benchmark::Counter(2.0 * B * H * L * d * double(attend::ops::kv_type_bytes(type)) * double(st.iterations()),
                                               benchmark::Counter::kIsRate);
}

void bm_decode_unfused(benchmark::State& st, index_t L, int threads) {
  constexpr index_t B = 32;
  Tensors x(B, 1, L);
  const auto args = x.args(false);
  const index_t floats = attend::ops::attention_unfused_scratch_floats(args, threads);
  attend::ops::AlignedBuffer scratch(static_cast<size_t>(floats) * sizeof(float));
  for (auto _ : st) attend::ops::attention_unfused(args, {scratch.floats(), static_cast<size_t>(floats)}, threads);
  counters(st, 4.0 * B * H * L * d, double(scratch.bytes()));
}

// T = S = 16384 once, fused only: the growth of peak RSS during the call is the extra
// memory actually used. Unfused would need H·T·S floats of scores per (b, h) in flight.
void bm_fused_16k(benchmark::State& st, int threads) {
  constexpr index_t T = 16384;
  Tensors x(1, T, T);
  const auto args = x.args(true);
  attend::ops::attention(args, threads);  // touch everything once (thread stacks included)
  for (auto _ : st) {
    attend::bench::reset_peak_rss();
    const size_t before = attend::bench::peak_rss_bytes();
    attend::ops::attention(args, threads);
    st.counters["measured_extra_MiB"] = double(attend::bench::peak_rss_bytes() - before) / (1 << 20);
  }
  st.counters["unfused_would_need_MiB"] = double(T) * T * sizeof(float) * threads / (1 << 20);
  counters(st, 4.0 * H * T * T * d * 0.5, double(attend::ops::attention_stack_bytes_per_thread()) * threads);
}

const int kRegistered = [] {
  for (index_t T : {64, 256, 1024, 4096})
    for (bool causal : {false, true})
      for (int t : {1, 2}) {
        const std::string s = "/T=S=" + std::to_string(T) + (causal ? "/causal" : "/full") + "/threads=" + std::to_string(t);
        benchmark::RegisterBenchmark(("attention/fused" + s).c_str(), bm_fused, T, causal, t)->UseRealTime();
        benchmark::RegisterBenchmark(("attention/unfused" + s).c_str(), bm_unfused, T, causal, t)->UseRealTime();
      }
  for (index_t L : {16, 128, 1024})
    for (int t : {1, 2}) {
      const std::string s = "/B=32/L=" + std::to_string(L) + "/threads=" + std::to_string(t);
      benchmark::RegisterBenchmark(("decode/fused" + s).c_str(), bm_decode_fused, L, t)->UseRealTime();
      benchmark::RegisterBenchmark(("decode/unfused" + s).c_str(), bm_decode_unfused, L, t)->UseRealTime();
    }
  for (index_t L : {32, 64})
    for (bool head_major : {false, true})
      for (auto type : {attend::ops::KvType::f32, attend::ops::KvType::bf16})
        benchmark::RegisterBenchmark(("decode/cross_layout/" + std::string(head_major ? "head_major" : "stacked") + "/" +
                                      attend::ops::kv_type_name(type) + "/B=32/L=" + std::to_string(L) + "/threads=1")
                                         .c_str(),
                                     bm_decode_cross_layout, L, head_major, type, 1)
            ->UseRealTime();
  for (int t : {1, 2})
    benchmark::RegisterBenchmark(("attention_16k/fused/T=S=16384/causal/threads=" + std::to_string(t)).c_str(),
                                 bm_fused_16k, t)
        ->UseRealTime()
        ->Iterations(1);
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
