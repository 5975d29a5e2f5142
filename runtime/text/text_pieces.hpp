// Long texts read piece by piece, so that truncation costs what it keeps: a tokenizer
// whose words never span white space gives a text the tokens of its pieces one after
// another when the text is cut right before an ASCII space that follows an ASCII graphic
// character — a grapheme boundary, outside any word, where no per-character normalization
// reaches across, and where the space stays with the word after it (as SentencePiece's ▁
// and GPT-2's byte-level pieces take it). Such a tokenizer then reads only as many
// pieces as the tokens it must keep, whatever the text's length: the Hugging Face
// tokenizers whose pipeline allows it (hf_tokenizer.hpp) and SentencePiece models that
// split at spaces.
#pragma once

#include <cstddef>
#include <string_view>

namespace attend::runtime {

// The first cut of `text` at or after `from`, or text.size() if none.
std::size_t next_text_cut(std::string_view text, std::size_t from);

// Calls piece(begin, end) on consecutive pieces of `text` of at least `bytes` bytes each
// (the last may be shorter), each ending at a cut or at the text's end, while it returns
// true. A text without cuts is one piece.
template <class Piece>
void for_each_text_piece(std::string_view text, std::size_t bytes, Piece&& piece) {
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = next_text_cut(text, begin + bytes);
    if (!piece(begin, end)) return;
    begin = end;
  }
}

}  // namespace attend::runtime
