// Greedy search: each row continues with its most likely token (the lowest id on ties),
// found for all rows at once by the vectorised, threaded ops::row_argmax.
#include "attend/ops/argmax.hpp"
#include "decoding/search.hpp"

namespace attend::runtime {

std::int64_t greedy_select(const SearchInput& in, GreedyScratch& scratch, Selection* next) {
  ops::row_argmax(ops::ConstMatrix(in.log_probs, in.rows, in.vocab), scratch.best_.data(), scratch.threads_);
  return select_one_token_per_row(in, next, [&](std::int64_t r, const float*) { return scratch.best_[r]; });
}

}  // namespace attend::runtime
