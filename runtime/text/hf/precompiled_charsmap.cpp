#include "text/hf/precompiled_charsmap.hpp"

#include "attend/error.hpp"
#include "text/hf/unicode_data.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

// A darts-clone unit: label, offset to the children, leaf flag and value.
bool has_leaf(std::uint32_t u) { return (u >> 8) & 1; }
std::uint32_t value(std::uint32_t u) { return u & ((1u << 31) - 1); }
std::uint32_t label(std::uint32_t u) { return u & ((1u << 31) | 0xff); }
std::uint32_t offset(std::uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

}  // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string_view bytes) {
  if (bytes.size() < 4) throw Error("precompiled_charsmap: shorter than its 4-byte header");
  const auto byte = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])); };
  const std::uint32_t trie_bytes = byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24;
  if (trie_bytes % 4 != 0 || trie_bytes == 0 || trie_bytes > bytes.size() - 4)
    throw error_of("precompiled_charsmap: trie size ", trie_bytes, " does not fit its ", bytes.size(), " bytes");
  units_.resize(trie_bytes / 4);
  for (std::size_t i = 0; i < units_.size(); ++i) {
    const std::size_t at = 4 + 4 * i;
    units_[i] = byte(at) | byte(at + 1) << 8 | byte(at + 2) << 16 | byte(at + 3) << 24;
  }
  replacements_ = std::string(bytes.substr(4 + trie_bytes));
  bool replaced = false;
  valid_utf8(replacements_, replaced);
  if (replaced) throw Error("precompiled_charsmap: its replacements are not valid UTF-8");
}

std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view chunk) const {
  std::size_t node = offset(units_[0]);
  for (unsigned char c : chunk) {
    if (c == 0) break;
    node ^= c;
    if (node >= units_.size() || label(units_[node]) != c) return std::nullopt;
    const std::uint32_t unit = units_[node];
    node ^= offset(unit);
    if (node >= units_.size()) return std::nullopt;
    if (has_leaf(unit)) {
      const std::size_t begin = value(units_[node]);
      if (begin > replacements_.size()) return std::nullopt;
      const std::size_t end = replacements_.find('\0', begin);
      return std::string_view(replacements_).substr(begin, (end == std::string::npos ? replacements_.size() : end) - begin);
    }
  }
  return std::nullopt;
}

std::string PrecompiledCharsmap::normalize(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  std::size_t begin = 0;
  for (const std::size_t end : grapheme_ends(text)) {
    const std::string_view grapheme = text.substr(begin, end - begin);
    begin = end;
    if (grapheme.size() < 6)
      if (const auto whole = transform(grapheme)) {
        out.append(*whole);
        continue;
      }
    for (std::size_t i = 0; i < grapheme.size();) {
      const std::size_t n = utf8_sequence_length(static_cast<unsigned char>(grapheme[i]));
      const std::string_view character = grapheme.substr(i, n);
      i += n;
      const auto replacement = transform(character);
      out.append(replacement ? *replacement : character);
    }
  }
  return out;
}

std::string decode_base64(std::string_view text, std::string_view what) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t bits = 0;
  int count = 0;
  for (char ch : text) {
    int v;
    if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z') v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9') v = ch - '0' + 52;
    else if (ch == '+') v = 62;
    else if (ch == '/') v = 63;
    else if (ch == '=') break;
    else throw error_of(what, ": not base64 (character '", ch, "')");
    bits = bits << 6 | static_cast<std::uint32_t>(v);
    if ((count += 6) >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

}  // namespace attend::runtime::hf
