#include <algorithm>
#include <cstdio>
#include <limits>

#include "attend/error.hpp"
#include "text/hf/models.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

constexpr double unknown_penalty = 10.0;  // tokenizers' K_UNK_PENALTY, as SentencePiece's

}  // namespace

Unigram::Unigram(std::vector<std::pair<std::string, double>> pieces, std::optional<std::int32_t> unk_id,
                 bool byte_fallback)
    : unk_id_(unk_id), byte_fallback_(byte_fallback) {
  if (unk_id && (pieces.empty() || *unk_id < 0 || static_cast<std::size_t>(*unk_id) >= pieces.size()))
    throw error_of("Unigram: unk_id ", *unk_id, " is not an id of its ", pieces.size(), " tokens");
  double min_score = std::numeric_limits<double>::infinity();
  scores_.reserve(pieces.size());
  for (std::size_t id = 0; id < pieces.size(); ++id) {
    min_score = std::min(min_score, pieces[id].second);
    scores_.push_back(pieces[id].second);
    max_token_bytes_ = std::max(max_token_bytes_, pieces[id].first.size());
    vocab.add(std::move(pieces[id].first), static_cast<std::int32_t>(id));
  }
  unk_score_ = min_score - unknown_penalty;
}

void Unigram::tokenize(std::string_view word, std::vector<Token>& out) const {
  // Viterbi over byte positions, as tokenizers' encode_optimized: best[e] is the best
  // path over word[0, e), its last token starting at best[e].start. Ties keep the first
  // path found, so the comparison is strict and the order of the loops matters.
  struct Node {
    double score = 0;
    std::int32_t id = -1;
    std::size_t start = 0;
    bool reached = false;
  };
  const std::size_t n = word.size();
  std::vector<Node> best(n + 1);
  best[0].reached = true;
  const auto offer = [&](std::size_t start, std::size_t end, std::int32_t id, double score) {
    Node& target = best[end];
    const double total = score + best[start].score;
    if (!target.reached || total > target.score) target = {total, id, start, true};
  };
  for (std::size_t start = 0; start < n;) {
    const std::size_t char_bytes = utf8_sequence_length(static_cast<unsigned char>(word[start]));
    bool single_character_token = false;
    for (std::size_t len = 1; len <= std::min(max_token_bytes_, n - start); ++len) {
      const std::int32_t id = vocab.find(word.substr(start, len));
      if (id < 0) continue;
      offer(start, start + len, id, scores_[static_cast<std::size_t>(id)]);
      single_character_token |= len == char_bytes;
    }
    if (!single_character_token) {
      if (!unk_id_) throw Error("Unigram: a character is in no token and the model has no unk_id");
      offer(start, start + char_bytes, *unk_id_, unk_score_);
    }
    start += char_bytes;
  }

  // Back from the end; consecutive unknown stretches fuse into one.
  std::vector<std::string_view> pieces;
  std::size_t fused_begin = 0, fused_end = 0;
  bool fusing = false;
  for (std::size_t end = n; end > 0;) {
    const Node& node = best[end];
    if (unk_id_ && node.id == *unk_id_) {
      if (!fusing) fusing = true, fused_end = end;
      fused_begin = node.start;
    } else {
      if (fusing) pieces.push_back(word.substr(fused_begin, fused_end - fused_begin)), fusing = false;
      pieces.push_back(word.substr(node.start, end - node.start));
    }
    end = node.start;
  }
  if (fusing) pieces.push_back(word.substr(fused_begin, fused_end - fused_begin));
  std::reverse(pieces.begin(), pieces.end());

  for (const std::string_view piece : pieces) {
    if (const std::int32_t id = vocab.find(piece); id >= 0) {
      out.push_back({id, std::string(piece)});
      continue;
    }
    if (byte_fallback_) {
      std::vector<Token> bytes;
      for (unsigned char b : piece) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        const std::int32_t id = vocab.find(name);
        if (id < 0) break;
        bytes.push_back({id, name});
      }
      if (bytes.size() == piece.size()) {
        out.insert(out.end(), bytes.begin(), bytes.end());
        continue;
      }
    }
    if (!unk_id_) throw Error("Unigram: an unknown piece and the model has no unk_id");
    out.push_back({*unk_id_, std::string(piece)});
  }
}

std::string Unigram::describe() const { return "Unigram (" + std::to_string(vocab.size()) + " tokens)"; }

}  // namespace attend::runtime::hf
