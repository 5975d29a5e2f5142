// The sentences `attend bench` translates: synthetic (random ids with lengths drawn
// uniformly from a range, fixed by a seed) or read from a file, and the batches a
// pass runs them in (sorted by length, as `attend translate` forms them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attend/attend.hpp"
#include "source_lines.hpp"

namespace attend::cli {

using Sentences = std::vector<std::vector<std::int32_t>>;

struct LengthRange {
  std::int64_t min = 10, max = 50;
};
// "10:50", or "20" for exactly 20. Throws UsageError.
LengthRange parse_length_range(const std::string& text);

// `count` sentences of ids drawn from the source vocabulary minus the special ids.
Sentences synthetic_sentences(const attend::Model& model, std::int64_t count, LengthRange lengths, std::uint64_t seed);

// Non-empty lines of `path` in `format` (at most `limit` when > 0), truncated to the model's limit.
Sentences read_sentences(const attend::Model& model, const std::string& path, Format format, std::int64_t limit);

// Indices of `sentences` in batches of at most `batch_size`, in increasing length.
std::vector<std::vector<std::size_t>> length_sorted_batches(const Sentences& sentences, std::int64_t batch_size);

}  // namespace attend::cli
