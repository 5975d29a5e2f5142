#include "onednn_matmul.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attend::bench {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

namespace {

dt source_type(OnednnPrecision p) { return p == OnednnPrecision::f32 ? dt::f32 : p == OnednnPrecision::bf16 ? dt::bf16 : dt::u8; }
dt weight_type(OnednnPrecision p) { return p == OnednnPrecision::f32 ? dt::f32 : p == OnednnPrecision::bf16 ? dt::bf16 : dt::s8; }

std::uint16_t to_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace

const char* onednn_precision_name(OnednnPrecision p) {
  return p == OnednnPrecision::f32 ? "f32" : p == OnednnPrecision::bf16 ? "bf16" : "u8s8";
}

bool onednn_has_matmul(OnednnPrecision precision) {
  const std::vector<float> w(16 * 16, 0.5f);
  try {
    OnednnMatmul probe(4, 16, 16, w.data(), precision);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

std::string onednn_effective_isa() {
  using isa = dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case isa::sse41: return "sse41";
    case isa::avx: return "avx";
    case isa::avx2: return "avx2";
    case isa::avx2_vnni: return "avx2_vnni";
    case isa::avx512_core: return "avx512_core";
    case isa::avx512_core_vnni: return "avx512_core_vnni";
    case isa::avx512_core_bf16: return "avx512_core_bf16";
    case isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

OnednnMatmul::OnednnMatmul(std::int64_t M, std::int64_t N, std::int64_t K, const float* w, OnednnPrecision precision)
    : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), precision_(precision) {
  a_md_ = dnnl::memory::desc({M, K}, source_type(precision), tag::ab);
  c_md_ = dnnl::memory::desc({M, N}, dt::f32, tag::ab);
  const dnnl::memory::desc w_any({K, N}, weight_type(precision), tag::any);
  dnnl::primitive_attr attr;
  // [N, K] row-major is [K, N] in column-major ("ba").
  dnnl::memory user({{K, N}, dt::f32, tag::ba}, engine_, const_cast<float*>(w));
  std::vector<std::int8_t> q;
  if (precision == OnednnPrecision::u8s8) {
    // Per output feature: q = round(w·127/max|w_n|), C = Σ a_u8·q · (max|w_n|/127).
    q.resize(static_cast<size_t>(N * K));
    std::vector<float> scales(static_cast<size_t>(N));
    for (std::int64_t n = 0; n < N; ++n) {
      float amax = 0;
      for (std::int64_t k = 0; k < K; ++k) amax = std::max(amax, std::abs(w[n * K + k]));
      const float inv = amax > 0 ? 127.0f / amax : 0.0f;
      for (std::int64_t k = 0; k < K; ++k) q[n * K + k] = static_cast<std::int8_t>(std::nearbyint(w[n * K + k] * inv));
      scales[n] = amax / 127.0f;
    }
    attr.set_output_scales(1 << 1, scales);
    user = dnnl::memory({{K, N}, dt::s8, tag::ba}, engine_, q.data());
  }
  pd_ = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md_, w_any, c_md_), attr, engine_);
  prim_ = dnnl::matmul(pd_);
  weights_ = dnnl::memory(pd_.weights_desc(), engine_);
  dnnl::reorder(user, weights_).execute(stream_, user, weights_);
  stream_.wait();
}

void OnednnMatmul::set_source(const float* a) {
  const auto count = static_cast<size_t>(a_md_.get_size() / dnnl::memory::data_type_size(source_type(precision_)));
  source_.resize(a_md_.get_size());
  for (size_t i = 0; i < count; ++i) {
    if (precision_ == OnednnPrecision::bf16) {
      const std::uint16_t h = to_bf16(a[i]);
      std::memcpy(source_.data() + 2 * i, &h, 2);
    } else if (precision_ == OnednnPrecision::u8s8) {
      source_[i] = static_cast<std::uint8_t>(std::nearbyint(std::abs(a[i]) * 255.0f));  // a post-ReLU-like u8
    } else {
      std::memcpy(source_.data() + 4 * i, a + i, 4);
    }
  }
}

void OnednnMatmul::run(float* c) {
  dnnl::memory am(a_md_, engine_, source_.data()), cm(c_md_, engine_, c);
  prim_.execute(stream_, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, cm}});
  stream_.wait();
}

void OnednnMatmul::run(const float* a, float* c) {
  dnnl::memory am(a_md_, engine_, const_cast<float*>(a)), cm(c_md_, engine_, c);
  prim_.execute(stream_, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, cm}});
  stream_.wait();
}

}  // namespace attend::bench
