#include "text/hf/unicode_data.hpp"

#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uset.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>

#include <algorithm>
#include <memory>

#include "attend/error.hpp"
#include "text/hf/unicode_tables.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

// Whether c was assigned by Unicode major.minor (an unassigned code point never was).
bool assigned_by(char32_t c, int major, int minor) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  if (age[0] == 0 && age[1] == 0) return false;
  return age[0] < major || (age[0] == major && age[1] <= minor);
}

bool in_categories(char32_t c, std::uint32_t mask) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & mask) != 0; }

// The characters whose General_Category changed after Unicode 8.0 among those the classes
// below test, with their categories of Unicode 8.0 and 9.0 (ICU knows only today's).
// Found by comparing every code point's class with tokenizers 0.23.3's
// (tests/text/probe_unicode_classes.py); a change that moves no character in or out of a
// tested class is left out.
struct CategoryChange {
  char32_t c;
  std::uint32_t v8, v9;
};
constexpr CategoryChange category_changes[] = {
    {0x166d, U_GC_PO_MASK, U_GC_PO_MASK},   // CANADIAN SYLLABICS CHI SIGN, So since 12.0
    {0x1734, U_GC_MN_MASK, U_GC_MN_MASK},   // HANUNOO SIGN PAMUDPOD, Mc since 14.0
    {0x1885, U_GC_LO_MASK, U_GC_MN_MASK},   // MONGOLIAN LETTER ALI GALI BALUDA, Mn since 9.0
    {0x1886, U_GC_LO_MASK, U_GC_MN_MASK},   // MONGOLIAN LETTER ALI GALI THREE BALUDA, Mn since 9.0
    {0x1cf2, U_GC_MC_MASK, U_GC_MC_MASK},   // VEDIC SIGN ARDHAVISARGA, Lo since 10.0
    {0x1cf3, U_GC_MC_MASK, U_GC_MC_MASK},   // VEDIC SIGN ROTATED ARDHAVISARGA, Lo since 10.0
    {0xa9bd, U_GC_MC_MASK, U_GC_MC_MASK},   // JAVANESE CONSONANT SIGN KERET, Mn since 12.0
    {0x111c9, U_GC_PO_MASK, U_GC_PO_MASK},  // SHARADA SANDHI MARK, Mn since 11.0
};

// Whether c was in one of the categories `mask` in Unicode `major`.0 (8 or 9).
bool in_categories_of(char32_t c, std::uint32_t mask, int major) {
  if (!assigned_by(c, major, 0)) return false;
  for (const CategoryChange& change : category_changes)
    if (change.c == c) return ((major == 8 ? change.v8 : change.v9) & mask) != 0;
  return in_categories(c, mask);
}

void check(UErrorCode status, const char* what) {
  if (U_FAILURE(status)) throw error_of("ICU: ", what, ": ", u_errorName(status));
}

// A normalizer that leaves alone the characters assigned after Unicode 9.0, as tables of
// that version do (they are not in the set, so they pass unchanged and bound segments).
class DatedNormalizer {
 public:
  explicit DatedNormalizer(NormalForm form) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* base = form == NormalForm::nfc    ? unorm2_getNFCInstance(&status)
                               : form == NormalForm::nfd  ? unorm2_getNFDInstance(&status)
                               : form == NormalForm::nfkc ? unorm2_getNFKCInstance(&status)
                                                          : unorm2_getNFKDInstance(&status);
    check(status, "normalizer data");
    const std::u16string pattern = u"[:age=9.0:]";  // ICU's age sets are cumulative: ≤ 9.0
    set_ = uset_openPattern(pattern.data(), static_cast<int32_t>(pattern.size()), &status);
    check(status, "the Unicode 9.0 character set");
    uset_freeze(set_);
    normalizer_ = unorm2_openFiltered(base, set_, &status);
    check(status, "filtered normalizer");
  }
  ~DatedNormalizer() {
    unorm2_close(normalizer_);
    uset_close(set_);
  }
  DatedNormalizer(const DatedNormalizer&) = delete;
  DatedNormalizer& operator=(const DatedNormalizer&) = delete;

  const UNormalizer2* get() const { return normalizer_; }

 private:
  USet* set_ = nullptr;
  UNormalizer2* normalizer_ = nullptr;
};

std::u16string to_utf16(std::string_view s) {
  std::u16string out;
  for (std::size_t i = 0; i < s.size();) {
    const char32_t c = next_code_point(s, i);
    if (c < 0x10000) {
      out.push_back(static_cast<char16_t>(c));
    } else {
      out.push_back(static_cast<char16_t>(0xd800 + ((c - 0x10000) >> 10)));
      out.push_back(static_cast<char16_t>(0xdc00 + ((c - 0x10000) & 0x3ff)));
    }
  }
  return out;
}

void append_utf16(std::string& out, const char16_t* s, std::int32_t n) {
  for (std::int32_t i = 0; i < n;) {
    UChar32 c;
    U16_NEXT(s, i, n, c);
    append_utf8(out, static_cast<char32_t>(c));
  }
}

bool is_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

}  // namespace

bool tables::contains(std::span<const CodePointRange> ranges, char32_t c) {
  const auto it = std::upper_bound(ranges.begin(), ranges.end(), c, [](char32_t x, const CodePointRange& r) { return x < r.first; });
  return it != ranges.begin() && c <= std::prev(it)->last;
}

bool is_white_space(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r');
  return tables::contains(tables::white_space, c);
}

bool is_other_v8(char32_t c) { return in_categories_of(c, U_GC_CC_MASK | U_GC_CF_MASK | U_GC_CO_MASK, 8); }

bool is_punctuation_v8(char32_t c) { return in_categories_of(c, U_GC_P_MASK, 8); }

bool is_nonspacing_mark_v8(char32_t c) { return in_categories_of(c, U_GC_MN_MASK, 8); }

bool is_combining_mark_v9(char32_t c) { return in_categories_of(c, U_GC_M_MASK, 9); }

bool is_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return tables::contains(tables::numeric_17, c);
}

bool is_word_character(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return tables::contains(tables::word_16, c);
}

bool is_letter(char32_t c) { return tables::contains(tables::letter_16, c); }

bool is_number(char32_t c) { return tables::contains(tables::number_16, c); }

void append_lowercase(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c));
    return;
  }
  const auto& table = tables::lowercase_17;
  const auto it = std::lower_bound(table.begin(), table.end(), c, [](const tables::Lowercase& l, char32_t x) { return l.c < x; });
  if (it == table.end() || it->c != c) return append_utf8(out, c);
  for (const char32_t to : it->to)
    if (to != 0) append_utf8(out, to);
}

std::string normalize(std::string_view text, NormalForm form) {
  if (is_ascii(text)) return std::string(text);  // ASCII is in every normal form
  static const DatedNormalizer nfc(NormalForm::nfc), nfd(NormalForm::nfd), nfkc(NormalForm::nfkc),
      nfkd(NormalForm::nfkd);
  const DatedNormalizer& n = form == NormalForm::nfc    ? nfc
                             : form == NormalForm::nfd  ? nfd
                             : form == NormalForm::nfkc ? nfkc
                                                        : nfkd;
  const std::u16string in = to_utf16(text);
  UErrorCode status = U_ZERO_ERROR;
  std::int32_t size = unorm2_normalize(n.get(), in.data(), static_cast<int32_t>(in.size()), nullptr, 0, &status);
  if (status != U_BUFFER_OVERFLOW_ERROR) check(status, "normalize");
  std::u16string out(static_cast<std::size_t>(size), u'\0');
  status = U_ZERO_ERROR;
  unorm2_normalize(n.get(), in.data(), static_cast<int32_t>(in.size()), out.data(), size, &status);
  check(status, "normalize");
  std::string result;
  result.reserve(text.size());
  append_utf16(result, out.data(), size);
  return result;
}

std::vector<std::size_t> grapheme_ends(std::string_view text) {
  // One character break iterator per thread: opening one loads the rules (slow), and an
  // iterator holds its text, so threads cannot share one.
  struct Iterator {
    UBreakIterator* it = nullptr;
    ~Iterator() { ubrk_close(it); }
  };
  thread_local Iterator iterator;
  UErrorCode status = U_ZERO_ERROR;
  if (!iterator.it) {
    iterator.it = ubrk_open(UBRK_CHARACTER, "", nullptr, 0, &status);
    check(status, "grapheme break iterator");
  }
  UText* ut = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
  check(status, "UTF-8 text");
  std::unique_ptr<UText, UText* (*)(UText*)> owned(ut, utext_close);
  ubrk_setUText(iterator.it, ut, &status);
  check(status, "grapheme break iterator text");
  std::vector<std::size_t> ends;
  ubrk_first(iterator.it);
  for (std::int32_t end = ubrk_next(iterator.it); end != UBRK_DONE; end = ubrk_next(iterator.it))
    ends.push_back(static_cast<std::size_t>(end));
  return ends;
}

}  // namespace attend::runtime::hf
