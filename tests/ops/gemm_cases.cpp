#include <cmath>
#include <sstream>

#include "attend/ops/gemm.hpp"
#include "attend/ops/reference.hpp"
#include "op_cases.hpp"

namespace attend::test {
namespace {

struct GemmVariant {
  bool bias = false;
  ops::Activation act = ops::Activation::none;
  bool residual = false;
  bool residual_in_c = false;  // residual aliases C
  float alpha = 1.0f;
  bool kn = false;             // weight given as [K, N]
  index_t pad = 0;             // leading-dimension padding of A and C
};

std::string describe(index_t M, index_t N, index_t K, const GemmVariant& v) {
  std::ostringstream s;
  s << "gemm M=" << M << " N=" << N << " K=" << K;
  if (v.alpha != 1.0f) s << " alpha=" << v.alpha;
  if (v.bias) s << " +bias";
  if (v.act != ops::Activation::none) s << " +" << ops::activation_name(v.act);
  if (v.residual) s << (v.residual_in_c ? " +residual(in C)" : " +residual");
  if (v.kn) s << " W[K,N]";
  if (v.pad) s << " ld+" << v.pad;
  return s.str();
}

OpCase gemm_case(Rng& rng, index_t M, index_t N, index_t K, const GemmVariant& v, ops::Isa isa) {
  struct State {
    Buffer2D a, w, bias, residual, c, c_ref, scale;
    ops::PackedWeight packed;
    ops::GemmEpilogue ep;
  };
  auto s = std::make_shared<State>();
  s->a = Buffer2D(M, K, v.pad);
  s->a.fill_random(rng, -1, 1);
  s->w = Buffer2D(N, K);
  s->w.fill_random(rng, -1, 1);
  if (v.kn) {
    Buffer2D wt(K, N);
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k) wt.at(k, n) = s->w.at(n, k);
    s->packed = ops::pack_weight_kn(wt.view(), isa);
  } else {
    s->packed = ops::pack_weight(s->w.view(), isa);
  }
  s->bias = Buffer2D(1, N);
  s->bias.fill_random(rng, -1, 1);
  s->residual = Buffer2D(M, N, v.pad);
  s->residual.fill_random(rng, -2, 2);
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
  c.bytes = 4.0 * (M * K + N * K + M * N * (v.residual ? 2 : 1));
  c.check_written = !v.residual_in_c;
  c.run = [s, v](int threads) {
    if (v.residual_in_c) s->c.copy_from(s->residual);
    ops::gemm(s->a.view(), s->packed, s->c.view(), s->ep, threads);
  };
  c.reference = [s, v] {
    ops::reference::gemm(s->a.view(), s->w.view(), s->c_ref.view(), v.alpha, s->ep.bias, v.act,
                         v.residual ? ops::ConstMatrix(s->residual.view()) : ops::ConstMatrix{});
    const index_t M = s->a.rows(), N = s->w.rows(), K = s->a.cols();
    s->scale = Buffer2D(M, N);
    for (index_t i = 0; i < M; ++i)
      for (index_t j = 0; j < N; ++j) {
        double sum = 0;
        for (index_t k = 0; k < K; ++k) sum += std::abs(double(s->a.at(i, k)) * s->w.at(j, k));
        sum = sum * std::abs(v.alpha) + (v.bias ? std::abs(s->bias.at(0, j)) : 0.0) +
              (v.residual ? std::abs(s->residual.at(i, j)) : 0.0);
        s->scale.at(i, j) = static_cast<float>(std::max(sum, 1e-30));
      }
  };
  c.outputs = {{&s->c, &s->c_ref, &s->scale}};
  c.state = s;
  return c;
}

GemmVariant random_variant(Rng& rng) {
  static const ops::Activation acts[] = {ops::Activation::none, ops::Activation::relu, ops::Activation::gelu,
                                         ops::Activation::gelu_tanh, ops::Activation::silu, ops::Activation::gelu_sigmoid};
  GemmVariant v;
  v.bias = rng.uniform_int(0, 1);
  v.act = acts[rng.uniform_int(0, 4)];
  v.residual = rng.uniform_int(0, 2) == 0;
  v.residual_in_c = v.residual && v.act == ops::Activation::none && rng.uniform_int(0, 1);
  v.alpha = rng.uniform_int(0, 3) == 0 ? 0.5f : 1.0f;
  if (v.residual_in_c) v.alpha = 1.0f;
  v.kn = rng.uniform_int(0, 3) == 0;
  v.pad = rng.uniform_int(0, 1) ? rng.uniform_int(1, 9) : 0;
  return v;
}

}  // namespace

std::vector<OpCase> gemm_cases(Rng& rng, CaseScale scale, ops::Isa isa) {
  std::vector<OpCase> out;
  if (scale == CaseScale::perf) {
    for (index_t M : {1, 8, 32, 256, 1024})
      for (auto [N, K] : {std::pair<index_t, index_t>{512, 512}, {1536, 512}, {2048, 512}, {512, 2048}, {32000, 512}})
        out.push_back(gemm_case(rng, M, N, K, GemmVariant{}, isa));
    return out;
  }
  // Every combination of awkward sizes (below a size cap, for the reference's sake),
  // each with a random epilogue, packing and stride.
  const index_t edges[] = {1, 3, 17, 64, 255, 513};
  for (index_t M : edges)
    for (index_t N : edges)
      for (index_t K : edges)
        if (M * N * K <= 3'000'000) out.push_back(gemm_case(rng, M, N, K, random_variant(rng), isa));
  // Random shapes, and K = 0 (the product is empty: the epilogue alone).
  for (int i = 0; i < 6; ++i)
    out.push_back(gemm_case(rng, rng.uniform_int(1, 200), rng.uniform_int(1, 700), rng.uniform_int(1, 1100),
                            random_variant(rng), isa));
  GemmVariant empty_k;
  empty_k.bias = true;
  empty_k.act = ops::Activation::gelu;
  empty_k.residual = true;
  out.push_back(gemm_case(rng, 5, 40, 0, empty_k, isa));
  return out;
}

}  // namespace attend::test
