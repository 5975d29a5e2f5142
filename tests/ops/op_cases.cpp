// What the cases share: the error measure, and the full list.
#include "op_cases.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attend::test {

double OpCase::error() const {
  double worst = 0;
  for (const CaseOutput& o : outputs) {
    if (o.scale == nullptr) {
      worst = std::max(worst, max_relative_error(o.got->view(), o.expected->view()));
      continue;
    }
    for (index_t r = 0; r < o.got->rows(); ++r)
      for (index_t c = 0; c < o.got->cols(); ++c) {
        const double g = o.got->at(r, c), e = o.expected->at(r, c);
        if (!std::isfinite(g)) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, std::abs(g - e) / o.scale->at(r, c));
      }
  }
  return worst;
}

std::vector<OpCase> all_op_cases(Rng& rng, CaseScale scale, ops::Isa isa) {
  std::vector<OpCase> out = gemm_cases(rng, scale, isa);
  for (auto* more : {&attention_cases, &row_op_cases})
    for (OpCase& c : (*more)(rng, scale)) out.push_back(std::move(c));
  return out;
}

}  // namespace attend::test
