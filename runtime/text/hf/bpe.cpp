#include <cstdio>
#include <queue>

#include "attend/error.hpp"
#include "text/hf/models.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32 | static_cast<std::uint32_t>(right);
}

// A symbol of the word being merged: a token id over `size` bytes, linked to its
// neighbours (size 0: merged into the one on its left).
struct Symbol {
  std::int32_t id;
  std::ptrdiff_t prev, next;
  std::size_t size;
};

}  // namespace

void Bpe::set_merges(const std::vector<std::pair<std::string, std::string>>& merges) {
  const std::size_t prefix = continuing_subword_prefix ? continuing_subword_prefix->size() : 0;
  merges_.clear();
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    const std::int32_t left = vocab.find(a), right = vocab.find(b);
    if (left < 0) throw error_of("BPE merge ", rank, ": \"", a, "\" is not in the vocabulary");
    if (right < 0) throw error_of("BPE merge ", rank, ": \"", b, "\" is not in the vocabulary");
    const std::string merged = a + b.substr(std::min(prefix, b.size()));
    const std::int32_t id = vocab.find(merged);
    if (id < 0) throw error_of("BPE merge ", rank, ": \"", merged, "\" is not in the vocabulary");
    merges_[pair_key(left, right)] = {static_cast<std::uint32_t>(rank), id};
  }
}

void Bpe::tokenize(std::string_view word, std::vector<Token>& out) const {
  if (ignore_merges)
    if (const std::int32_t id = vocab.find(word); id >= 0) {
      out.push_back({id, std::string(word)});
      return;
    }

  // The characters as symbols (with the prefix and suffix the vocabulary uses), unknown
  // ones as bytes (byte_fallback) or unk_token, fused if fuse_unk.
  std::vector<Symbol> symbols;
  const auto add = [&](std::int32_t id, std::size_t size) {
    const auto k = static_cast<std::ptrdiff_t>(symbols.size());
    if (!symbols.empty()) symbols.back().next = k;
    symbols.push_back({id, k - 1, -1, size});
  };
  std::int32_t pending_unk = -1;
  std::size_t pending_size = 0;
  std::string piece;
  for (std::size_t i = 0; i < word.size();) {
    const std::size_t begin = i, size = utf8_sequence_length(static_cast<unsigned char>(word[i]));
    i += size;
    piece.assign(begin > 0 && continuing_subword_prefix ? *continuing_subword_prefix : "");
    piece.append(word.substr(begin, size));
    if (i == word.size() && end_of_word_suffix) piece.append(*end_of_word_suffix);
    if (const std::int32_t id = vocab.find(piece); id >= 0) {
      if (pending_unk >= 0) add(pending_unk, pending_size), pending_unk = -1;
      add(id, size);
      continue;
    }
    if (byte_fallback) {
      std::vector<std::int32_t> bytes;
      for (unsigned char b : piece) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        if (const std::int32_t id = vocab.find(name); id >= 0) bytes.push_back(id);
      }
      if (bytes.size() == piece.size()) {
        for (const std::int32_t id : bytes) add(id, 1);
        continue;
      }
    }
    if (!unk_token) continue;  // no unk_token: the character is dropped
    const std::int32_t unk = vocab.find(*unk_token);
    if (unk < 0) throw error_of("BPE: unk_token \"", *unk_token, "\" is not in the vocabulary");
    if (pending_unk >= 0 && fuse_unk) {
      pending_size += size;
    } else {
      if (pending_unk >= 0) add(pending_unk, pending_size);
      pending_unk = unk, pending_size = size;
    }
  }
  if (pending_unk >= 0) add(pending_unk, pending_size);

  // Merge the pair of lowest rank (leftmost among equals) until none is left, as
  // tokenizers' Word::merge_all, skipping queue entries that merges made stale.
  struct Candidate {
    std::uint32_t rank;
    std::size_t pos;
    std::int32_t new_id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto offer = [&](std::size_t pos) {
    const std::ptrdiff_t next = symbols[pos].next;
    if (next < 0) return;
    const auto it = merges_.find(pair_key(symbols[pos].id, symbols[static_cast<std::size_t>(next)].id));
    if (it != merges_.end()) queue.push({it->second.rank, pos, it->second.new_id});
  };
  for (std::size_t pos = 0; pos + 1 < symbols.size(); ++pos) offer(pos);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.size == 0 || left.next < 0) continue;
    const Symbol right = symbols[static_cast<std::size_t>(left.next)];
    const auto it = merges_.find(pair_key(left.id, right.id));
    if (it == merges_.end() || it->second.new_id != top.new_id) continue;
    symbols[static_cast<std::size_t>(left.next)].size = 0;
    left.id = top.new_id, left.size += right.size, left.next = right.next;
    if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = static_cast<std::ptrdiff_t>(top.pos);
    if (left.prev >= 0) offer(static_cast<std::size_t>(left.prev));
    offer(top.pos);
  }
  for (const Symbol& s : symbols) {
    if (s.size == 0) continue;
    const std::string* token = vocab.token(s.id);
    out.push_back({s.id, token ? *token : std::string()});
  }
}

std::string Bpe::describe() const { return "BPE (" + std::to_string(vocab.size()) + " tokens)"; }

}  // namespace attend::runtime::hf
