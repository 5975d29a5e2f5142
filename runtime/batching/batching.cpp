#include "batching/batching.hpp"

#include <algorithm>
#include <numeric>

namespace attend::runtime {

std::vector<std::vector<std::int64_t>> make_batches(std::span<const std::int64_t> lengths, const BatchLimits& limits) {
  std::vector<std::int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return lengths[a] < lengths[b]; });
  std::vector<std::vector<std::int64_t>> batches;
  std::vector<std::int64_t> current;
  std::int64_t packed = 0;  // the current batch's real tokens
  for (std::int64_t i : order) {
    // Sorted ascending, so the newcomer is the longest: the batch would pad to it
    // (packed: it adds its own tokens).
    const std::int64_t tokens = limits.packed ? packed + std::max<std::int64_t>(lengths[i], 1)
                                              : static_cast<std::int64_t>(current.size() + 1) * std::max<std::int64_t>(lengths[i], 1);
    const bool full = static_cast<std::int64_t>(current.size()) >= limits.max_sentences ||
                      (limits.max_tokens > 0 && tokens > limits.max_tokens);
    if (full && !current.empty()) batches.push_back(std::move(current)), current.clear(), packed = 0;
    current.push_back(i);
    packed += std::max<std::int64_t>(lengths[i], 1);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

}  // namespace attend::runtime
