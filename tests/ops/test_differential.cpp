// Every op against its double-precision reference, on fresh random inputs, on every
// ISA this machine supports, with 1 and 2 threads. Outputs are poisoned first: every
// element must be written, and no padding between rows touched. (The ISAs above avx512
// add only GEMM kernels: the other ops run once per distinct kernel, f32_kernel_isa.)
#include <catch2/catch.hpp>

#include "attend/ops/streaming_stores.hpp"
#include "op_cases.hpp"
#include "support/isa_scope.hpp"

namespace attend::test {
namespace {

using CaseMaker = std::vector<OpCase> (*)(Rng&, CaseScale, ops::Isa);

std::vector<OpCase> attention_for(Rng& rng, CaseScale s, ops::Isa) { return attention_cases(rng, s); }
std::vector<OpCase> row_ops_for(Rng& rng, CaseScale s, ops::Isa) { return row_op_cases(rng, s); }

void run_differential(CaseMaker make, std::uint64_t salt, bool gemm = false) {
  ProcessIsaRestorer restore;
  for (ops::Isa isa : ops::available_isas()) {
    if (!gemm && ops::f32_kernel_isa(isa) != isa) continue;
    ops::set_isa(isa);
    Rng rng(test_seed() ^ (salt * 1000 + static_cast<std::uint64_t>(isa)));
    for (OpCase& c : make(rng, CaseScale::test, isa)) {
      c.reference();
      for (int threads : {1, 2}) {
        for (auto& out : c.outputs) out.got->poison();
        c.run(threads);
        INFO(ops::isa_name(isa) << ", " << threads << " thread(s): " << c.name);
        for (auto& out : c.outputs) {
          if (c.check_written) CHECK(out.got->all_written());
          CHECK(out.got->padding_intact());
        }
        CHECK(c.error() <= c.tolerance);
      }
    }
  }
}

}  // namespace

TEST_CASE("gemm matches the reference", "[ops][gemm]") { run_differential(&gemm_cases, 1, true); }
TEST_CASE("attention matches the reference", "[ops][attention]") { run_differential(&attention_for, 2); }
TEST_CASE("row ops match the reference", "[ops][rows]") { run_differential(&row_ops_for, 3); }

// Outputs beyond the last-level cache are written with streaming stores; a threshold of
// 0 sends every row of the cases above through that path (aligned heads, odd widths,
// padded rows that start anywhere).
TEST_CASE("row ops match the reference with streaming stores", "[ops][rows]") {
  const std::size_t saved = ops::streaming_store_threshold();
  ops::set_streaming_store_threshold(0);
  struct Restore {
    std::size_t bytes;
    ~Restore() { ops::set_streaming_store_threshold(bytes); }
  } restore{saved};
  run_differential(&row_ops_for, 4);
}

}  // namespace attend::test
