#include "attend/error.hpp"
#include "text/hf/models.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {

void WordPiece::unknown(std::vector<Token>& out) const {
  const std::int32_t id = vocab.find(unk_token);
  if (id < 0) throw error_of("WordPiece: a word needs unk_token \"", unk_token, "\", which is not in the vocabulary");
  out.push_back({id, unk_token});
}

void WordPiece::tokenize(std::string_view word, std::vector<Token>& out) const {
  if (count_code_points(word) > max_input_chars_per_word) return unknown(out);
  const std::size_t first = out.size();
  std::string candidate;
  for (std::size_t start = 0; start < word.size();) {
    // The longest piece from `start` in the vocabulary, shortened a character at a time.
    std::size_t end = word.size();
    std::int32_t id = -1;
    while (start < end) {
      candidate.assign(start > 0 ? continuing_subword_prefix : "");
      candidate.append(word.substr(start, end - start));
      if ((id = vocab.find(candidate)) >= 0) break;
      do --end;
      while ((static_cast<unsigned char>(word[end]) & 0xc0) == 0x80);
    }
    if (id < 0) {
      out.resize(first);
      return unknown(out);
    }
    out.push_back({id, candidate});
    start = end;
  }
}

std::string WordPiece::describe() const { return "WordPiece (" + std::to_string(vocab.size()) + " tokens)"; }

}  // namespace attend::runtime::hf
