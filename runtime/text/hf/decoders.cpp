#include "text/hf/decoders.hpp"

#include <cctype>
#include <map>

#include "text/hf/byte_level.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

// tokenizers' decoders::wordpiece::cleanup.
std::string cleanup(std::string s) {
  static const std::pair<const char*, const char*> rules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : rules) replace_all(s, from, to);
  return s;
}

// GPT-2's printable character (as UTF-8) → the byte it stands for.
const std::map<std::string, unsigned char>& printable_bytes() {
  static const std::map<std::string, unsigned char> map = [] {
    std::map<std::string, unsigned char> m;
    for (int b = 0; b < 256; ++b) m[bytes_to_unicode(std::string(1, static_cast<char>(b)))] = static_cast<unsigned char>(b);
    return m;
  }();
  return map;
}

}  // namespace

std::vector<std::string> WordPieceDecoder::decode_chain(std::vector<std::string> tokens) const {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string& t = tokens[i];
    if (i != 0) {
      if (!prefix.empty() && t.rfind(prefix, 0) == 0) t.erase(0, prefix.size());
      else t = std::string(1, ' ').append(t);  // (not insert: GCC 12 warns of an overlap there)
    }
    if (cleanup) t = hf::cleanup(std::move(t));
  }
  return tokens;
}

std::vector<std::string> ByteLevelDecoder::decode_chain(std::vector<std::string> tokens) const {
  const auto& bytes = printable_bytes();
  std::string all;
  for (const std::string& t : tokens) {
    std::string mapped;
    bool every = true;
    for (std::size_t i = 0; i < t.size() && every;) {
      const std::size_t from = i;
      next_code_point(t, i);
      const auto it = bytes.find(t.substr(from, i - from));
      if (it == bytes.end()) every = false;
      else mapped += static_cast<char>(it->second);
    }
    all += every ? mapped : t;  // a token of other characters keeps its own bytes
  }
  bool replaced = false;
  return {valid_utf8(all, replaced)};
}

std::vector<std::string> MetaspaceDecoder::decode_chain(std::vector<std::string> tokens) const {
  for (std::size_t i = 0; i < tokens.size(); ++i) replace_all(tokens[i], replacement, i == 0 && prepended ? "" : " ");
  return tokens;
}

std::vector<std::string> ReplaceDecoder::decode_chain(std::vector<std::string> tokens) const {
  for (std::string& t : tokens) replace_all(t, pattern, content);
  return tokens;
}

std::vector<std::string> ByteFallbackDecoder::decode_chain(std::vector<std::string> tokens) const {
  std::vector<std::string> out;
  std::string pending;  // bytes of <0xHH> tokens in a row
  std::size_t count = 0;
  auto flush = [&] {
    if (count == 0) return;
    bool bad = false;
    valid_utf8(pending, bad);
    if (!bad) {
      out.push_back(pending);
    } else {
      std::string replacement;
      for (std::size_t k = 0; k < count; ++k) replacement += "\xEF\xBF\xBD";  // U+FFFD per byte, as tokenizers
      out.push_back(replacement);
    }
    pending.clear(), count = 0;
  };
  for (std::string& t : tokens) {
    const bool byte = t.size() == 6 && t.rfind("<0x", 0) == 0 && t.back() == '>' && std::isxdigit(static_cast<unsigned char>(t[3])) &&
                      std::isxdigit(static_cast<unsigned char>(t[4]));
    if (byte) {
      pending += static_cast<char>(std::stoi(t.substr(3, 2), nullptr, 16));
      ++count;
      continue;
    }
    flush();
    out.push_back(std::move(t));
  }
  flush();
  return out;
}

std::vector<std::string> FuseDecoder::decode_chain(std::vector<std::string> tokens) const {
  std::string all;
  for (const std::string& t : tokens) all += t;
  return {all};
}

std::vector<std::string> StripDecoder::decode_chain(std::vector<std::string> tokens) const {
  for (std::string& t : tokens) {
    for (std::size_t k = 0; k < start && !content.empty() && t.rfind(content, 0) == 0; ++k) t.erase(0, content.size());
    for (std::size_t k = 0; k < stop && !content.empty() && t.size() >= content.size() &&
                            t.compare(t.size() - content.size(), content.size(), content) == 0;
         ++k)
      t.erase(t.size() - content.size());
  }
  return tokens;
}

std::vector<std::string> BpeDecoder::decode_chain(std::vector<std::string> tokens) const {
  for (std::size_t i = 0; i < tokens.size(); ++i) replace_all(tokens[i], suffix, i + 1 == tokens.size() ? "" : " ");
  return tokens;
}

std::vector<std::string> DecoderSequence::decode_chain(std::vector<std::string> tokens) const {
  for (const auto& step : steps) tokens = step->decode_chain(std::move(tokens));
  return tokens;
}

}  // namespace attend::runtime::hf
