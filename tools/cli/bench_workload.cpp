#include "bench_workload.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <set>

#include "commands.hpp"
#include "text_input.hpp"

namespace attend::cli {

LengthRange parse_length_range(const std::string& text) {
  LengthRange r;
  const std::size_t colon = text.find(':');
  try {
    std::size_t used = 0;
    r.min = std::stoll(text.substr(0, colon), &used);
    if (used != (colon == std::string::npos ? text.size() : colon)) throw std::invalid_argument(text);
    r.max = r.min;
    if (colon != std::string::npos) {
      r.max = std::stoll(text.substr(colon + 1), &used);
      if (used != text.size() - colon - 1) throw std::invalid_argument(text);
    }
  } catch (const std::logic_error&) {
    throw UsageError("--src-len " + text + ": expected MIN:MAX or N (token counts)");
  }
  if (r.min < 1 || r.max < r.min) throw UsageError("--src-len " + text + ": need 1 ≤ MIN ≤ MAX");
  return r;
}

Sentences synthetic_sentences(const attend::Model& model, std::int64_t count, LengthRange lengths, std::uint64_t seed) {
  const auto special = model.special_ids();
  const std::set<std::int32_t> avoid = {special.pad, special.bos, special.eos, special.unk, special.decoder_start};
  const std::int64_t vocabulary = model.source_vocabulary_size();
  if (vocabulary <= static_cast<std::int64_t>(avoid.size())) throw attend::Error("the source vocabulary holds only special ids");
  // splitmix64: the same workload on every platform for a given seed.
  std::uint64_t state = seed;
  auto next = [&state] {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  Sentences out(static_cast<std::size_t>(count));
  for (auto& s : out) {
    const std::int64_t length = lengths.min + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(lengths.max - lengths.min + 1));
    while (static_cast<std::int64_t>(s.size()) < length) {
      const auto id = static_cast<std::int32_t>(next() % static_cast<std::uint64_t>(vocabulary));
      if (!avoid.count(id)) s.push_back(id);
    }
  }
  return out;
}

Sentences read_sentences(const attend::Model& model, const std::string& path, Format format, std::int64_t limit) {
  Sentences out;
  const std::int64_t positions = model.max_positions();
  SourceLines lines(model, format, false, {positions, "the model's limit of " + std::to_string(positions) + " source tokens"},
                    "attend bench");
  LineReader reader(path, "input");
  reader.cap_lines(std::max<std::size_t>(std::size_t{16} << 20, static_cast<std::size_t>(positions) << 14));  // as translate
  while (limit <= 0 || static_cast<std::int64_t>(out.size()) < limit) {
    const auto chunk = reader.read(1024, true);
    if (chunk.empty()) break;
    const auto& cut = reader.cut_lines();
    for (std::size_t i = 0; i < chunk.size() && (limit <= 0 || static_cast<std::int64_t>(out.size()) < limit); ++i) {
      const std::uint64_t number = reader.lines_read() - chunk.size() + i + 1;
      if (auto ids = lines.encode(chunk[i], number, std::find(cut.begin(), cut.end(), number) != cut.end()))
        out.push_back(std::move(*ids));
    }
  }
  reader.print_warnings(stderr, "attend bench");
  lines.print_warnings(stderr);
  if (out.empty()) throw attend::Error("the input " + path + " has no non-empty lines");
  return out;
}

std::vector<std::vector<std::size_t>> length_sorted_batches(const Sentences& sentences, std::int64_t batch_size) {
  std::vector<std::size_t> order(sentences.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sentences[a].size() < sentences[b].size(); });
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t i = 0; i < order.size(); i += static_cast<std::size_t>(batch_size))
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), i + static_cast<std::size_t>(batch_size))));
  return batches;
}

}  // namespace attend::cli
