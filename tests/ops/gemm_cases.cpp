#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <tuple>

#include "attend/ops/gemm.hpp"
#include "attend/ops/reference.hpp"
#include "op_cases.hpp"

namespace attend::test {
namespace {

struct GemmVariant {
  ops::WeightType type = ops::WeightType::f32;
  bool ct2 = false;    // s8 packed from int8 + CTranslate2 scales (pack_weight_s8), not from fp32
  bool exact = false;  // s8 on integers whose result a float holds exactly: must match bit for bit
  bool bias = false;
  ops::Activation act = ops::Activation::none;
  bool residual = false;
  bool residual_in_c = false;  // residual aliases C
  float alpha = 1.0f;
  bool kn = false;             // weight given as [K, N] (f32 only)
  index_t pad = 0;             // leading-dimension padding of A and C
};

std::string describe(index_t M, index_t N, index_t K, const GemmVariant& v) {
  std::ostringstream s;
  s << "gemm " << ops::weight_type_name(v.type) << (v.ct2 ? "(ct2)" : "") << (v.exact ? " exact" : "") << " M=" << M
    << " N=" << N << " K=" << K;
  if (v.alpha != 1.0f) s << " alpha=" << v.alpha;
  if (v.bias) s << " +bias";
  if (v.act != ops::Activation::none) s << " +" << ops::activation_name(v.act);
  if (v.residual) s << (v.residual_in_c ? " +residual(in C)" : " +residual");
  if (v.kn) s << " W[K,N]";
  if (v.pad) s << " ld+" << v.pad;
  return s.str();
}

// Integers in [lo, hi].
void fill_integers(Rng& rng, Buffer2D& b, index_t lo, index_t hi) {
  for (index_t r = 0; r < b.rows(); ++r)
    for (index_t c = 0; c < b.cols(); ++c) b.at(r, c) = static_cast<float>(rng.uniform_int(lo, hi));
}

OpCase gemm_case(Rng& rng, index_t M, index_t N, index_t K, const GemmVariant& v, ops::Isa isa) {
  struct State {
    Buffer2D a, w, bias, residual, c, c_ref, scale;
    std::vector<std::int8_t> wq;     // s8: the quantized weight [N, K]
    std::vector<float> w_factor;     // s8: its dequantization factors
    ops::PackedWeight packed;
    ops::GemmEpilogue ep;
  };
  auto s = std::make_shared<State>();
  constexpr int levels = ops::kS8ActivationLevels;
  s->a = Buffer2D(M, K, v.pad);
  s->w = Buffer2D(N, K);
  s->bias = Buffer2D(1, N);
  s->residual = Buffer2D(M, N, v.pad);
  if (v.exact) {
    // Integer activations with each row's max at ±levels: quantization is the identity
    // (factor 1), so C is the exact integer sum, which a float holds below 2^24.
    fill_integers(rng, s->a, -levels, levels);
    for (index_t i = 0; i < M && K > 0; ++i)
      s->a.at(i, rng.uniform_int(0, K - 1)) = static_cast<float>(rng.uniform_int(0, 1) ? levels : -levels);
    fill_integers(rng, s->bias, -100, 100);
    fill_integers(rng, s->residual, -1000, 1000);
  } else {
    s->a.fill_random(rng, -1, 1);
    s->w.fill_random(rng, -1, 1);
    s->bias.fill_random(rng, -1, 1);
    s->residual.fill_random(rng, -2, 2);
  }
  if (v.type == ops::WeightType::s8) {
    s->wq.resize(static_cast<size_t>(N * K));
    s->w_factor.resize(static_cast<size_t>(N));
    if (v.ct2) {
      // As a CTranslate2 file holds them: any int8 (−128 too), w = q / scale.
      std::vector<float> scales(static_cast<size_t>(N));
      for (index_t j = 0; j < N; ++j) {
        for (index_t k = 0; k < K; ++k) s->wq[j * K + k] = static_cast<std::int8_t>(rng.uniform_int(-128, 127));
        scales[j] = v.exact ? 1.0f : 127.0f / rng.uniform(0.05f, 2.0f);
        s->w_factor[j] = 1.0f / scales[j];
      }
      s->packed = ops::pack_weight_s8({s->wq.data(), N, K}, scales.data(), isa);
      for (auto& q : s->wq) q = std::max<std::int8_t>(q, -127);  // packing reads −128 as −127
    } else {
      s->packed = ops::pack_weight(s->w.view(), ops::WeightType::s8, isa);
      ops::reference::quantize_rows(s->w.view(), 127, s->wq.data(), s->w_factor.data());
    }
  } else if (v.kn) {
    Buffer2D wt(K, N);
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k) wt.at(k, n) = s->w.at(n, k);
    s->packed = ops::pack_weight_kn(wt.view(), isa);
  } else {
    s->packed = ops::pack_weight(s->w.view(), v.type, isa);
  }
  s->c = Buffer2D(M, N, v.pad);
  s->c_ref = Buffer2D(M, N, v.pad);
  s->ep.alpha = v.alpha;
  s->ep.bias = v.bias ? s->bias.data() : nullptr;
  s->ep.activation = v.act;
  if (v.residual) s->ep.residual = v.residual_in_c ? ops::ConstMatrix(s->c.view()) : ops::ConstMatrix(s->residual.view());

  OpCase c;
  c.op = "gemm";
  c.name = describe(M, N, K, v);
  c.flops = 2.0 * M * N * K;
  const double weight_bytes = v.type == ops::WeightType::s8 ? 1 : v.type == ops::WeightType::bf16 ? 2 : 4;
  c.bytes = weight_bytes * N * K + 4.0 * (M * K + M * N * (v.residual ? 2 : 1));
  // s8: the integer sums are exact; only the float epilogue rounds (a one-off
  // quantized activation already shows as ~1/(K·levels)). bf16: fp32 accumulation.
  c.tolerance = v.exact ? 0.0 : v.type == ops::WeightType::s8 ? 2e-6 : 1e-5;
  c.check_written = !v.residual_in_c;
  c.run = [s, v](int threads) {
    if (v.residual_in_c) s->c.copy_from(s->residual);
    ops::gemm(s->a.view(), s->packed, s->c.view(), s->ep, threads);
  };
  c.reference = [s, v] {
    const ops::ConstMatrix residual = v.residual ? ops::ConstMatrix(s->residual.view()) : ops::ConstMatrix{};
    const index_t M = s->a.rows(), N = s->w.rows(), K = s->a.cols();
    switch (v.type) {
      case ops::WeightType::f32:
        ops::reference::gemm(s->a.view(), s->w.view(), s->c_ref.view(), v.alpha, s->ep.bias, v.act, residual);
        break;
      case ops::WeightType::bf16:
        ops::reference::gemm_bf16(s->a.view(), s->w.view(), s->c_ref.view(), v.alpha, s->ep.bias, v.act, residual);
        break;
      case ops::WeightType::s8:
        ops::reference::gemm_s8(s->a.view(), levels, {s->wq.data(), N, K}, s->w_factor.data(), s->c_ref.view(),
                                v.alpha, s->ep.bias, v.act, residual);
        break;
    }
    // The error scale: Σ_k |a_ik·w_jk| with the weight the GEMM multiplies.
    Buffer2D w_used(N, K);
    ops::unpack_weight(s->packed.view(), w_used.view());
    s->scale = Buffer2D(M, N);
    for (index_t i = 0; i < M; ++i)
      for (index_t j = 0; j < N; ++j) {
        double sum = 0;
        for (index_t k = 0; k < K; ++k) sum += std::abs(double(s->a.at(i, k)) * w_used.at(j, k));
        sum = sum * std::abs(v.alpha) + (v.bias ? std::abs(s->bias.at(0, j)) : 0.0) +
              (v.residual ? std::abs(s->residual.at(i, j)) : 0.0);
        s->scale.at(i, j) = static_cast<float>(std::max(sum, 1e-30));
      }
  };
  c.outputs = {{&s->c, &s->c_ref, &s->scale}};
  c.state = s;
  return c;
}

GemmVariant random_variant(Rng& rng, ops::WeightType type) {
  static const ops::Activation acts[] = {ops::Activation::none, ops::Activation::relu, ops::Activation::gelu,
                                         ops::Activation::gelu_tanh, ops::Activation::silu, ops::Activation::gelu_sigmoid};
  GemmVariant v;
  v.type = type;
  v.ct2 = type == ops::WeightType::s8 && rng.uniform_int(0, 1);
  v.bias = rng.uniform_int(0, 1);
  v.act = acts[rng.uniform_int(0, std::size(acts) - 1)];
  v.residual = rng.uniform_int(0, 2) == 0;
  v.residual_in_c = v.residual && v.act == ops::Activation::none && rng.uniform_int(0, 1);
  v.alpha = rng.uniform_int(0, 3) == 0 ? 0.5f : 1.0f;
  if (v.residual_in_c) v.alpha = 1.0f;
  v.kn = type == ops::WeightType::f32 && rng.uniform_int(0, 3) == 0;
  v.pad = rng.uniform_int(0, 1) ? rng.uniform_int(1, 9) : 0;
  return v;
}

// s8 on integers: no activation beyond ReLU (GeLU would round), alpha 1.
GemmVariant exact_variant(Rng& rng) {
  GemmVariant v = random_variant(rng, ops::WeightType::s8);
  v.ct2 = true;
  v.exact = true;
  v.alpha = 1.0f;
  if (v.act != ops::Activation::none) v.act = ops::Activation::relu;
  v.residual_in_c = v.residual && v.act == ops::Activation::none && rng.uniform_int(0, 1);
  return v;
}

// True when `isa` runs its own kernel for `type`, not one a lower ISA also runs (the
// avx512_vnni table's f32 and bf16 kernels are avx512's): each kernel is tested once.
bool own_kernel(ops::Isa isa, ops::WeightType type) {
  for (ops::Isa lower : ops::available_isas())
    if (lower < isa && std::string(ops::gemm_kernel_name(lower, type)) == ops::gemm_kernel_name(isa, type))
      return false;
  return true;
}

void typed_test_cases(Rng& rng, ops::Isa isa, ops::WeightType type, std::vector<OpCase>& out) {
  // Decoding-sized rows, N on and off the panel width, K on and off the k groups.
  for (index_t M : {1, 3, 14, 33, 60})
    for (index_t N : {1, 31, 33, 100})
      for (index_t K : {1, 3, 7, 64, 130, 513}) out.push_back(gemm_case(rng, M, N, K, random_variant(rng, type), isa));
  // K a multiple of 64 (AMX's tiles; every other K goes to its VNNI fallback) at row
  // counts around its 16-row tile halves and 32-row tiles, and an encoder-like shape.
  for (index_t M : {16, 17, 32, 33, 47, 96})
    for (index_t K : {64, 384}) out.push_back(gemm_case(rng, M, 70, K, random_variant(rng, type), isa));
  out.push_back(gemm_case(rng, 300, 130, 1536, random_variant(rng, type), isa));
  // Beam-sized rows, and (s8) rows × K beyond the few-row path, on 1 and 2 threads.
  out.push_back(gemm_case(rng, 128, 100, 257, random_variant(rng, type), isa));
  out.push_back(gemm_case(rng, 200, 300, 1400, random_variant(rng, type), isa));
  for (int i = 0; i < 4; ++i)
    out.push_back(gemm_case(rng, rng.uniform_int(1, 200), rng.uniform_int(1, 300), rng.uniform_int(1, 700),
                            random_variant(rng, type), isa));
  if (type == ops::WeightType::s8)
    for (index_t M : {1, 14, 33, 60})
      for (index_t N : {5, 64, 100})
        for (index_t K : {1, 4, 129, 1000}) out.push_back(gemm_case(rng, M, N, K, exact_variant(rng), isa));
}

}  // namespace

std::vector<OpCase> typed_gemm_cases(Rng& rng, ops::WeightType type, ops::Isa isa) {
  std::vector<OpCase> out;
  typed_test_cases(rng, isa, type, out);
  return out;
}

std::vector<OpCase> gemm_cases(Rng& rng, CaseScale scale, ops::Isa isa) {
  std::vector<OpCase> out;
  if (scale == CaseScale::perf) {
    for (auto type : {ops::WeightType::f32, ops::WeightType::bf16, ops::WeightType::s8})
      for (index_t M : {1, 8, 32, 128, 256, 1024})
        for (auto [N, K] : {std::pair<index_t, index_t>{512, 512}, {1536, 512}, {2048, 512}, {512, 2048}, {32000, 512}}) {
          GemmVariant v;
          v.type = type;
          out.push_back(gemm_case(rng, M, N, K, v, isa));
        }
    // all-MiniLM-L6-v2's int8 encoder GEMMs as its plan runs them on one thread: QKV and
    // attention output on 256-token chunks, FFN up (with its bias + GeLU, and without)
    // and FFN down on 128-row chunks.
    for (auto [M, N, K, act] : {std::tuple<index_t, index_t, index_t, ops::Activation>{256, 1152, 384, ops::Activation::none},
                                {256, 384, 384, ops::Activation::none},
                                {128, 1536, 384, ops::Activation::gelu},
                                {128, 1536, 384, ops::Activation::none},
                                {128, 384, 1536, ops::Activation::none}}) {
      GemmVariant v;
      v.type = ops::WeightType::s8;
      v.bias = true;
      v.act = act;
      out.push_back(gemm_case(rng, M, N, K, v, isa));
    }
    return out;
  }
  if (own_kernel(isa, ops::WeightType::f32)) {
    // Every combination of awkward sizes (below a size cap, for the reference's sake),
    // each with a random epilogue, packing and stride.
    const index_t edges[] = {1, 3, 17, 64, 255, 513};
    for (index_t M : edges)
      for (index_t N : edges)
        for (index_t K : edges)
          if (M * N * K <= 3'000'000)
            out.push_back(gemm_case(rng, M, N, K, random_variant(rng, ops::WeightType::f32), isa));
    // Random shapes.
    for (int i = 0; i < 6; ++i)
      out.push_back(gemm_case(rng, rng.uniform_int(1, 200), rng.uniform_int(1, 700), rng.uniform_int(1, 1100),
                              random_variant(rng, ops::WeightType::f32), isa));
  }
  for (auto type : {ops::WeightType::bf16, ops::WeightType::s8})
    if (own_kernel(isa, type)) typed_test_cases(rng, isa, type, out);
  // K = 0 (the product is empty: the epilogue alone), every type.
  for (auto type : {ops::WeightType::f32, ops::WeightType::bf16, ops::WeightType::s8}) {
    GemmVariant empty_k;
    empty_k.type = type;
    empty_k.bias = true;
    empty_k.act = ops::Activation::gelu;
    empty_k.residual = true;
    if (own_kernel(isa, type)) out.push_back(gemm_case(rng, 5, 40, 0, empty_k, isa));
  }
  return out;
}

}  // namespace attend::test
