// Every ISA computes the same bits (kernels/simd.hpp): the s8 GEMM (exact int32 sums
// and the same float epilogue), attention, normalisation, activations, softmax and the
// other row ops give bit-identical outputs whatever kernels run them — so a model's int8
// outputs do not depend on the CPU. The fp32 and bf16 GEMMs are the exception (SSE2
// has no FMA, AVX512_BF16's vdpbf16ps rounds its own way), and are left out here; where
// their ISAs agree, test_row_invariance.cpp checks them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "op_cases.hpp"
#include "support/isa_scope.hpp"

namespace attend::test {
namespace {

using Bits = std::vector<std::uint32_t>;

// The elements of every output of a case (padding left out), as bits.
std::vector<Bits> output_bits(const OpCase& c) {
  std::vector<Bits> all;
  for (const CaseOutput& out : c.outputs) {
    Bits bits;
    for (index_t r = 0; r < out.got->rows(); ++r)
      for (index_t col = 0; col < out.got->cols(); ++col) {
        std::uint32_t b;
        const float x = out.got->at(r, col);
        std::memcpy(&b, &x, sizeof b);
        bits.push_back(b);
      }
    all.push_back(std::move(bits));
  }
  return all;
}

std::size_t mismatches(const std::vector<Bits>& a, const std::vector<Bits>& b) {
  if (a.size() != b.size()) return SIZE_MAX;
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return SIZE_MAX;
    for (std::size_t j = 0; j < a[i].size(); ++j) n += a[i][j] != b[i][j];
  }
  return n;
}

// Runs the cases `make` builds (from the same seed) under every ISA this machine has,
// on 1 and 2 threads, and compares every output with the first ISA's, bit for bit.
template <class Make>
void check_identical_across_isas(const Make& make, std::uint64_t salt) {
  ProcessIsaRestorer restore;
  std::vector<std::vector<Bits>> first;  // [case][output]
  std::vector<std::string> names;
  std::string first_isa;
  for (ops::Isa isa : ops::available_isas()) {
    ops::set_isa(isa);
    Rng rng(test_seed() ^ salt);
    std::vector<OpCase> cases = make(rng, isa);
    if (first.empty()) {
      first_isa = ops::isa_name(isa);
      for (const OpCase& c : cases) names.push_back(c.name);
    }
    REQUIRE(cases.size() == names.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      REQUIRE(cases[i].name == names[i]);
      for (int threads : {1, 2}) {
        for (auto& out : cases[i].outputs) out.got->poison();
        cases[i].run(threads);
        std::vector<Bits> bits = output_bits(cases[i]);
        if (first.size() <= i) {
          first.push_back(std::move(bits));
          continue;
        }
        INFO(cases[i].name << ": " << ops::isa_name(isa) << " on " << threads << " thread(s) against " << first_isa
                           << " on 1");
        CHECK(mismatches(bits, first[i]) == 0);
      }
    }
  }
}

}  // namespace

TEST_CASE("every ISA gives the same bits: the s8 GEMM", "[ops][isa-identity]") {
  check_identical_across_isas([](Rng& rng, ops::Isa isa) { return typed_gemm_cases(rng, ops::WeightType::s8, isa); },
                              91);
}

TEST_CASE("every ISA gives the same bits: attention", "[ops][isa-identity]") {
  check_identical_across_isas([](Rng& rng, ops::Isa) { return attention_cases(rng, CaseScale::test); }, 92);
}

TEST_CASE("every ISA gives the same bits: row ops", "[ops][isa-identity]") {
  check_identical_across_isas([](Rng& rng, ops::Isa) { return row_op_cases(rng, CaseScale::test); }, 93);
}

}  // namespace attend::test
