#include "text/hf/normalizers.hpp"

#include "text/hf/literal_regex.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

// The CJK ideograph blocks BERT puts spaces around (its own list, not a Unicode class).
bool is_chinese_character(char32_t c) {
  return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x20000 && c <= 0x2a6df) ||
         (c >= 0x2a700 && c <= 0x2b73f) || (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b920 && c <= 0x2ceaf) ||
         (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

// `text` with each character c replaced by what `map(c, out)` appends.
template <class F>
std::string map_characters(std::string_view text, F&& map) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) map(next_code_point(text, i), out);
  return out;
}

std::string lowercase(std::string_view text) {
  return map_characters(text, [](char32_t c, std::string& out) { append_lowercase(out, c); });
}

}  // namespace

std::string BertNormalizer::normalize(std::string_view text) const {
  std::string s(text);
  if (clean_text) {
    s = map_characters(s, [](char32_t c, std::string& out) {
      const bool control = c != '\t' && c != '\n' && c != '\r' && is_other_v8(c);
      if (c == 0 || c == 0xfffd || control) return;
      append_utf8(out, is_white_space(c) ? U' ' : c);
    });
  }
  if (handle_chinese_chars) {
    s = map_characters(s, [](char32_t c, std::string& out) {
      if (!is_chinese_character(c)) return append_utf8(out, c);
      out.push_back(' ');
      append_utf8(out, c);
      out.push_back(' ');
    });
  }
  if (strip_accents.value_or(lowercase)) {
    s = map_characters(hf::normalize(s, NormalForm::nfd), [](char32_t c, std::string& out) {
      if (!is_nonspacing_mark_v8(c)) append_utf8(out, c);
    });
  }
  if (lowercase) s = hf::lowercase(s);
  return s;
}

std::string BertNormalizer::describe() const {
  std::string d = "BertNormalizer (";
  d += lowercase ? "lowercase" : "cased";
  d += strip_accents.value_or(lowercase) ? ", accents stripped" : ", accents kept";
  if (!clean_text) d += ", no text cleaning";
  if (!handle_chinese_chars) d += ", CJK characters not split";
  return d + ")";
}

std::string UnicodeNormalizer::describe() const {
  switch (form) {
    case NormalForm::nfc: return "NFC";
    case NormalForm::nfd: return "NFD";
    case NormalForm::nfkc: return "NFKC";
    case NormalForm::nfkd: return "NFKD";
  }
  return "?";
}

std::string Lowercase::normalize(std::string_view text) const { return lowercase(text); }

std::string StripAccents::normalize(std::string_view text) const {
  return map_characters(text, [](char32_t c, std::string& out) {
    if (!is_combining_mark_v9(c)) append_utf8(out, c);
  });
}

std::string Strip::normalize(std::string_view text) const {
  std::size_t begin = 0, end = text.size();
  if (left) {
    while (begin < end) {
      std::size_t i = begin;
      if (!is_white_space(next_code_point(text, i))) break;
      begin = i;
    }
  }
  if (right) {
    while (end > begin) {
      std::size_t start = end - 1;
      while ((static_cast<unsigned char>(text[start]) & 0xc0) == 0x80) --start;
      std::size_t i = start;
      if (!is_white_space(next_code_point(text, i))) break;
      end = start;
    }
  }
  return std::string(text.substr(begin, end - begin));
}

std::string Strip::describe() const {
  return left && right ? "Strip" : left ? "Strip (left)" : right ? "Strip (right)" : "Strip (nothing)";
}

std::string Replace::normalize(std::string_view text) const {
  if (!is_regex) {
    if (pattern.empty()) return std::string(text);
    std::string out;
    std::size_t last = 0;
    for (std::size_t at = text.find(pattern); at != std::string_view::npos; at = text.find(pattern, last)) {
      out.append(text.substr(last, at - last)).append(content);
      last = at + pattern.size();
    }
    return out.append(text.substr(last));
  }
  return std::regex_replace(std::string(text), regex, escape_regex_replacement(content));
}

std::string Replace::describe() const { return "Replace (" + pattern + " → " + content + ")"; }

bool Replace::local() const {
  // A string without a space cannot span a cut; a pattern of spaces alone (" {2,}",
  // XLM-R's) matches a run that starts at the cut, on its right.
  if (!is_regex) return pattern.find(' ') == std::string::npos;
  static const std::regex spaces_only(R"( (\+|\*|\{[0-9]+,[0-9]*\})?)");
  return std::regex_match(pattern, spaces_only);
}

std::string Prepend::normalize(std::string_view text) const {
  return text.empty() ? std::string() : prefix + std::string(text);
}

std::string NormalizerSequence::normalize(std::string_view text) const {
  std::string s(text);
  for (const auto& step : steps) s = step->normalize(s);
  return s;
}

}  // namespace attend::runtime::hf
