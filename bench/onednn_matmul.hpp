// oneDNN's fp32 matmul set up the way it runs best: shapes fixed at creation, weights
// reordered once into the layout oneDNN picks (format_tag::any). The yardstick for
// attend's GEMM.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>

namespace attend::bench {

class OnednnMatmul {
 public:
  // C[M, N] = A[M, K] · Wᵀ with W given as [N, K] (nn.Linear layout).
  OnednnMatmul(std::int64_t M, std::int64_t N, std::int64_t K, const float* w);
  void run(const float* a, float* c);

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
  dnnl::memory weights_;
  dnnl::memory::desc a_md_, c_md_;
};

}  // namespace attend::bench
