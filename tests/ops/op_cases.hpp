// The differential harness's cases: every op, on random inputs, with its reference.
//
// One list serves two modes (after ggml's test-backend-ops): the tests run each case's
// fast path on every ISA and thread count and compare with the reference; the perf
// driver (bench/op_perf) times the same cases at benchmark sizes and reports GFLOP/s
// and GB/s from the FLOP and byte counts each case declares.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attend/ops/isa.hpp"
#include "support/test_support.hpp"

namespace attend::test {

enum class CaseScale {
  test,  // edge and random shapes small enough for the double-precision reference
  perf,  // the benchmark shapes
};

// One output of a case: the fast path's buffer, the reference's, and optionally a
// per-element error scale. GEMM uses Σ_k |a_ik·w_jk| (+ |bias| + |residual|): fp32
// accumulation error grows with that sum, not with the result, which cancellation can
// make arbitrarily small.
struct CaseOutput {
  Buffer2D* got = nullptr;
  Buffer2D* expected = nullptr;
  const Buffer2D* scale = nullptr;
};

struct OpCase {
  std::string op;    // "gemm", "attention", …
  std::string name;  // op and shape, e.g. "gemm M=17 N=255 K=513 bias+gelu lda+5"
  double flops = 0;  // per run of the fast path
  double bytes = 0;  // compulsory memory traffic per run (inputs read once, outputs written once)
  double tolerance = 1e-5;  // on max_relative_error
  bool check_written = true;  // false where the output is also an input (in-place cases)
  std::function<void(int threads)> run;  // the fast op, into outputs[i].got
  std::function<void()> reference;       // the reference, into outputs[i].expected
  std::vector<CaseOutput> outputs;
  std::shared_ptr<void> state;  // owns every buffer the lambdas use

  // The case's error: max over outputs of max_relative_error, or of the scaled error
  // where an output has per-element scales.
  double error() const;
};

// Kernels bound to packed data (GEMM) pack for `isa`; the others use the active ISA,
// which the caller sets.
std::vector<OpCase> gemm_cases(Rng& rng, CaseScale scale, ops::Isa isa);
std::vector<OpCase> attention_cases(Rng& rng, CaseScale scale);
std::vector<OpCase> row_op_cases(Rng& rng, CaseScale scale);
std::vector<OpCase> all_op_cases(Rng& rng, CaseScale scale, ops::Isa isa);
// The test-scale GEMM cases of one weight type packed for `isa`: the same shapes and
// inputs for every ISA given the same rng state.
std::vector<OpCase> typed_gemm_cases(Rng& rng, ops::WeightType type, ops::Isa isa);

}  // namespace attend::test
