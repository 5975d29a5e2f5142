// Grouping sentences into batches: sorted by length so a batch pads little, capped by
// sentences and by padded source tokens.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace attend::runtime {

struct BatchLimits {
  std::int64_t max_sentences = 32;
  std::int64_t max_tokens = 0;  // padded source tokens (sentences × longest); 0: no cap
  bool packed = false;          // max_tokens counts real tokens (the sum of the lengths): an
                                // encoder that packs its batches pads nothing
};

// Indices into `lengths`, grouped: sentences sorted by length (ties by index), each batch
// as long as it stays within the limits. A sentence longer than max_tokens still gets a
// batch of its own. Every index appears exactly once.
std::vector<std::vector<std::int64_t>> make_batches(std::span<const std::int64_t> lengths, const BatchLimits& limits);

}  // namespace attend::runtime
