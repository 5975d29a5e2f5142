// Blank text: nothing but white space and invisible format characters. Such a line is
// an empty line — it encodes to no tokens and translates to an empty line — rather than
// input a model would hallucinate from (SentencePiece keeps some of these characters,
// U+2060 and U+200D, as unknown pieces).
#pragma once

#include <string_view>

namespace attend::runtime {

// ASCII space and \t \n \v \f \r, NEL, NBSP, the Unicode spaces U+1680, U+2000–U+200A,
// U+2028, U+2029, U+202F, U+205F, U+3000, and the zero-width U+180E, U+200B, U+2060,
// U+FEFF (not the joiners U+200C, U+200D). Invalid UTF-8 is not blank.
bool is_blank_text(std::string_view text);

}  // namespace attend::runtime
