#include "text/hf/byte_level.hpp"

#include <array>

#include "text/hf/unicode_data.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

// GPT-2's map: the printable Latin-1 bytes stand for themselves, the others (controls,
// space, NBSP, soft hyphen) take the characters from U+0100 on, in byte order.
std::array<std::string, 256> byte_characters() {
  std::array<std::string, 256> table;
  char32_t next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    append_utf8(table[b], printable ? static_cast<char32_t>(b) : next++);
  }
  return table;
}

enum class Class { letter, number, space, other };

Class class_of(char32_t c) {
  if (c < 0x80) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return Class::letter;
    if (c >= '0' && c <= '9') return Class::number;
    return c == ' ' || (c >= '\t' && c <= '\r') ? Class::space : Class::other;
  }
  if (is_letter(c)) return Class::letter;
  if (is_number(c)) return Class::number;
  return is_white_space(c) ? Class::space : Class::other;
}

}  // namespace

std::vector<Range> gpt2_split(std::string_view text) {
  // Code points with their byte offsets (one past the end too).
  std::vector<char32_t> cps;
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < text.size();) {
    at.push_back(i);
    cps.push_back(next_code_point(text, i));
  }
  at.push_back(text.size());
  const std::size_t n = cps.size();
  const auto cls = [&](std::size_t k) { return class_of(cps[k]); };

  std::vector<Range> parts;
  const auto emit = [&](std::size_t from, std::size_t to) { parts.push_back({at[from], at[to] - at[from]}); };
  for (std::size_t pos = 0; pos < n;) {
    // 's 't 're 've 'm 'll 'd
    if (cps[pos] == '\'' && pos + 1 < n) {
      const char32_t a = cps[pos + 1], b = pos + 2 < n ? cps[pos + 2] : 0;
      if (a == 's' || a == 't' || a == 'm' || a == 'd') {
        emit(pos, pos + 2), pos += 2;
        continue;
      }
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        emit(pos, pos + 3), pos += 3;
        continue;
      }
    }
    // An optional ' ', then a run of letters, of numbers, or of other non-space characters.
    const std::size_t start = cps[pos] == ' ' && pos + 1 < n ? pos + 1 : pos;
    if (const Class c = cls(start); c != Class::space) {
      std::size_t end = start + 1;
      while (end < n && cls(end) == c) ++end;
      emit(pos, end), pos = end;
      continue;
    }
    // White space: all of it at the end of the text or if one character, else all but
    // its last character (which goes with the word after it).
    std::size_t end = pos + 1;
    while (end < n && cls(end) == Class::space) ++end;
    if (end < n && end - pos > 1) --end;
    emit(pos, end), pos = end;
  }
  return parts;
}

std::string bytes_to_unicode(std::string_view text) {
  static const std::array<std::string, 256> table = byte_characters();
  std::string out;
  out.reserve(text.size() * 2);
  for (unsigned char b : text) out.append(table[b]);
  return out;
}

void ByteLevel::pre_tokenize(std::vector<Split>& splits) const {
  for (Split& s : splits)
    if (s.token_id < 0 && add_prefix_space && s.text.front() != ' ') s.text.insert(0, 1, ' ');
  if (use_regex) split_each(splits, gpt2_split);
  for (Split& s : splits)
    if (s.token_id < 0) s.text = bytes_to_unicode(s.text);
}

}  // namespace attend::runtime::hf
