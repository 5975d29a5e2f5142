// Greedy search: each row continues with its most likely token (the lowest id on ties).
#include "search.hpp"

namespace attend::runtime {

std::int64_t greedy_select(const SearchInput& in, Selection* next) {
  return select_one_token_per_row(in, next, [&](std::int64_t, const float* lp) {
    std::int64_t best = 0;
    for (std::int64_t v = 1; v < in.vocab; ++v)
      if (lp[v] > lp[best]) best = v;
    return static_cast<std::int32_t>(best);
  });
}

}  // namespace attend::runtime
