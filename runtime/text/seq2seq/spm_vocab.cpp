#include "text/seq2seq/spm_vocab.hpp"

#include "attend/error.hpp"
#include "formats/json_file.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;

std::shared_ptr<sentencepiece::SentencePieceProcessor> load_spm(const fs::path& path, const std::string& needed_by) {
  if (!fs::exists(path)) throw error_of(path.string(), ": missing (", needed_by, ")");
  auto spm = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = spm->Load(path.string());
  if (!status.ok()) throw error_of(path.string(), ": cannot load the SentencePiece model: ", status.ToString());
  return spm;
}

std::map<std::string, std::int32_t> load_vocab_json(const fs::path& path, std::int64_t rows, const std::string& needed_by) {
  if (!fs::exists(path)) throw error_of(path.string(), ": missing (", needed_by, ")");
  const JsonFile file(path.string());
  if (!file.value().is_object()) throw error_of(path.string(), ": must be a JSON object {token: id}");
  std::map<std::string, std::int32_t> out;
  for (const auto& [token, id] : file.value().items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() >= rows)
      throw error_of(path.string(), ": token '", token, "' has id ", id.dump(), ", outside the model's ", rows, " embedding rows");
    out[token] = static_cast<std::int32_t>(id.get<std::int64_t>());
  }
  return out;
}

void split_specials(const std::string& line, const std::set<std::string>& specials,
                    const std::function<void(const std::string&)>& text_chunk,
                    const std::function<void(const std::string&)>& special) {
  std::size_t at = 0;
  while (at <= line.size()) {
    std::size_t next = std::string::npos, length = 0;
    for (const std::string& s : specials)
      if (s.empty()) continue;
      else if (const std::size_t p = line.find(s, at); p != std::string::npos && (p < next || (p == next && s.size() > length)))
        next = p, length = s.size();
    text_chunk(line.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    special(line.substr(next, length));
    at = next + length;
  }
}

std::string spm_decode(const sentencepiece::SentencePieceProcessor& spm, const std::vector<std::string>& pieces) {
  std::string out;
  const auto status = spm.Decode(pieces, &out);
  if (!status.ok()) throw error_of("SentencePiece could not decode pieces: ", status.ToString());
  replace_all(out, "\xe2\x96\x81", " ");  // SPIECE_UNDERLINE
  return out;
}

std::string strip(const std::string& s) {
  auto space_at = [&](std::size_t i, bool backwards) -> std::size_t {  // bytes of the space at i, 0 if none
    static const char* spaces[] = {" ", "\t", "\n", "\r", "\v", "\f", "\xc2\xa0", "\xe3\x80\x80", "\xe2\x80\x83", "\xe2\x80\x82"};
    for (const char* sp : spaces) {
      const std::size_t n = std::char_traits<char>::length(sp);
      if (!backwards && s.compare(i, n, sp) == 0) return n;
      if (backwards && i + 1 >= n && s.compare(i + 1 - n, n, sp) == 0) return n;
    }
    return 0;
  };
  std::size_t begin = 0, end = s.size();
  while (begin < end)
    if (const std::size_t n = space_at(begin, false)) begin += n; else break;
  while (end > begin)
    if (const std::size_t n = space_at(end - 1, true)) end -= n; else break;
  return s.substr(begin, end - begin);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
}

std::string clean_up_tokenization(std::string out) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"},
           {" 've", "'ve"}, {" 're", "'re"}})
    replace_all(out, from, to);
  return out;
}

}  // namespace attend::runtime
