// The Unicode test's driver (test_unicode_classes.py): attend's character classes and
// per-character normalizations for every code point (surrogates excluded), in a form
// the test derives from Hugging Face `tokenizers` too:
//   class NAME FIRST-LAST FIRST-LAST …      (hex ranges of the members)
//   map NAME                                 then "HEX OUTPUT_HEX…" for each code point the
//   …                                        normalizer changes (OUTPUT_HEX: "-" if removed)
//   end
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "text/hf/normalizers.hpp"
#include "text/hf/pre_tokenizers.hpp"
#include "text/hf/unicode_data.hpp"
#include "text/hf/utf8.hpp"

namespace {

using namespace attend::runtime::hf;

bool is_code_point(char32_t c) { return c < 0xd800 || c >= 0xe000; }

void print_class(const char* name, const std::function<bool(char32_t)>& member) {
  std::printf("class %s", name);
  for (char32_t c = 0; c < 0x110000; ++c) {
    if (!is_code_point(c) || !member(c)) continue;
    char32_t last = c;
    while (last + 1 < 0x110000 && is_code_point(last + 1) && member(last + 1)) ++last;
    std::printf(" %x-%x", static_cast<unsigned>(c), static_cast<unsigned>(last));
    c = last;
  }
  std::printf("\n");
}

void print_map(const char* name, const Normalizer& n) {
  std::printf("map %s\n", name);
  std::string in;
  for (char32_t c = 0; c < 0x110000; ++c) {
    if (!is_code_point(c)) continue;
    in.clear();
    append_utf8(in, c);
    const std::string out = n.normalize(in);
    if (out == in) continue;
    std::printf("%x", static_cast<unsigned>(c));
    if (out.empty()) std::printf(" -");
    for (std::size_t i = 0; i < out.size();) std::printf(" %x", static_cast<unsigned>(next_code_point(out, i)));
    std::printf("\n");
  }
}

}  // namespace

int main() {
  print_class("letter", is_letter);
  print_class("number", is_number);
  print_class("word", is_word_character);
  print_class("numeric", is_numeric);
  print_class("white_space", is_white_space);
  print_class("bert_punctuation", is_bert_punctuation);
  BertNormalizer clean;
  clean.handle_chinese_chars = false, clean.lowercase = false, clean.strip_accents = false;
  print_map("bert_clean", clean);
  BertNormalizer chinese;
  chinese.clean_text = false, chinese.lowercase = false, chinese.strip_accents = false;
  print_map("bert_chinese", chinese);
  print_map("lowercase", Lowercase());
  print_map("strip_accents", StripAccents());
  print_map("nfd", UnicodeNormalizer(NormalForm::nfd));
  print_map("nfkd", UnicodeNormalizer(NormalForm::nfkd));
  print_map("nfc", UnicodeNormalizer(NormalForm::nfc));
  print_map("nfkc", UnicodeNormalizer(NormalForm::nfkc));
  std::printf("end\n");
  return 0;
}
