// Character classes of the Hugging Face `tokenizers` release attend matches, each at the
// Unicode version its dependency has there (unicode_data.hpp lists them), as range
// tables generated from ICU 78's data by make_unicode_tables.py into unicode_tables.cpp.
#pragma once

#include <span>

namespace attend::runtime::hf::tables {

struct CodePointRange {
  char32_t first, last;  // inclusive
};

// A character whose lowercase is another string (up to 3 characters; unused ones 0).
struct Lowercase {
  char32_t c;
  char32_t to[3];
};

extern const std::span<const CodePointRange> letter_16;    // \p{L} of Oniguruma, Unicode 16.0
extern const std::span<const CodePointRange> number_16;    // \p{N} of Oniguruma, Unicode 16.0
extern const std::span<const CodePointRange> word_16;      // \w of the regex crate, Unicode 16.0
extern const std::span<const CodePointRange> numeric_17;   // char::is_numeric, Unicode 17.0
extern const std::span<const CodePointRange> white_space;  // White_Space
extern const std::span<const Lowercase> lowercase_17;      // char::to_lowercase, Unicode 17.0, sorted by c

// Whether c is in the sorted ranges (binary search).
bool contains(std::span<const CodePointRange> ranges, char32_t c);

}  // namespace attend::runtime::hf::tables
