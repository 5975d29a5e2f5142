#include "onednn_matmul.hpp"

namespace attend::bench {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

OnednnMatmul::OnednnMatmul(std::int64_t M, std::int64_t N, std::int64_t K, const float* w)
    : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
  a_md_ = dnnl::memory::desc({M, K}, dt::f32, tag::ab);
  c_md_ = dnnl::memory::desc({M, N}, dt::f32, tag::ab);
  const dnnl::memory::desc w_any({K, N}, dt::f32, tag::any);
  pd_ = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md_, w_any, c_md_), engine_);
  prim_ = dnnl::matmul(pd_);
  // [N, K] row-major is [K, N] in column-major ("ba").
  dnnl::memory user({{K, N}, dt::f32, tag::ba}, engine_, const_cast<float*>(w));
  weights_ = dnnl::memory(pd_.weights_desc(), engine_);
  dnnl::reorder(user, weights_).execute(stream_, user, weights_);
  stream_.wait();
}

void OnednnMatmul::run(const float* a, float* c) {
  dnnl::memory am(a_md_, engine_, const_cast<float*>(a)), cm(c_md_, engine_, c);
  prim_.execute(stream_, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, cm}});
  stream_.wait();
}

}  // namespace attend::bench
