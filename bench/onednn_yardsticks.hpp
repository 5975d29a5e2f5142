// Which oneDNN yardsticks a benchmark program can run on this CPU, and at which ISAs
// attend and oneDNN run, for bench_gemm and bench_decoder_gemms.
#pragma once

#include "onednn_matmul.hpp"

namespace attend::bench {

// Called by a benchmark program before registering its runs: puts attend's and oneDNN's ISAs
// in the benchmark context, warns on stderr when attend's kernels are forced below their
// best (ATTEND_ISA) and oneDNN's run higher (ONEDNN_MAX_CPU_ISA=AVX2 with ATTEND_ISA=avx2
// compares like with like), and returns which yardsticks exist here, saying on stderr
// which are skipped and why.
struct Yardsticks {
  bool available[3] = {};  // by OnednnPrecision
  bool has(OnednnPrecision precision) const { return available[static_cast<int>(precision)]; }
};
Yardsticks describe_isas_and_yardsticks(const char* program);

}  // namespace attend::bench
