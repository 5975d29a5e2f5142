// The Unicode character data the Hugging Face `tokenizers` pipeline consults.
//
// `tokenizers` takes its character data from several libraries, each frozen at its own
// Unicode version: `unicode_categories` (Unicode 8.0) for BERT's control characters,
// punctuation and accents, `unicode-normalization-alignments` (Unicode 9.0) for the
// normalization forms, Oniguruma (16.0) for its regex classes (\p{L}, \p{N}), the
// `regex` crate (16.0) for \w, Rust's standard library (17.0 in the release attend
// matches, tests/data/tokenizers/VERSIONS) for numbers and case. To give identical
// results, each class here holds the characters assigned by that version: a character
// assigned later is, to that library, unassigned (category Cn, no decomposition). The
// 16.0 and 17.0 classes and white space are tables generated from ICU 78's data
// (make_unicode_tables.py → unicode_tables.cpp); the older ones and the normal forms
// come from the system's ICU, limited to their version.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attend::runtime::hf {

// Rust's char::is_whitespace: the White_Space property.
bool is_white_space(char32_t c);
// unicode_categories' is_other: categories Cc, Cf and Co, as of Unicode 8.0.
bool is_other_v8(char32_t c);
// unicode_categories' is_punctuation: categories Pc Pd Ps Pe Pi Pf Po, as of Unicode 8.0.
bool is_punctuation_v8(char32_t c);
// unicode_categories' is_mark_nonspacing: category Mn, as of Unicode 8.0.
bool is_nonspacing_mark_v8(char32_t c);
// unicode-normalization-alignments' is_combining_mark: categories Mn Mc Me, as of Unicode 9.0.
bool is_combining_mark_v9(char32_t c);
// Rust's char::is_numeric: categories Nd Nl No, as of Unicode 17.0.
bool is_numeric(char32_t c);
// The regex \w of Rust's `regex` crate (UTS #18): Alphabetic, marks, Nd, Pc, Join_Control,
// as of Unicode 16.0.
bool is_word_character(char32_t c);
// Oniguruma's \p{L} and \p{N}, as of Unicode 16.0.
bool is_letter(char32_t c);
bool is_number(char32_t c);

// Appends Rust's char::to_lowercase(c): the full lowercase mapping of one character, no
// context (U+0130 → "i̇", Σ → σ), as of Unicode 17.0.
void append_lowercase(std::string& out, char32_t c);

enum class NormalForm { nfc, nfd, nfkc, nfkd };
// `text` (valid UTF-8) in normal form `form`, with Unicode 9.0's decompositions.
std::string normalize(std::string_view text, NormalForm form);

// The byte offsets where `text`'s extended grapheme clusters end (the last is text.size()).
std::vector<std::size_t> grapheme_ends(std::string_view text);

}  // namespace attend::runtime::hf
