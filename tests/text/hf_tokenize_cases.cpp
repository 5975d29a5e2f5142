// The differential test's driver: encodes cases with attend's Hugging Face tokenizer.
//   hf_tokenize_cases TOKENIZER_FILE [MODEL_TYPE] < cases.jsonl > results.jsonl
// (a tokenizer.json, or a vocab.txt / sentencepiece.bpe.model read as transformers reads
// it for a model of MODEL_TYPE).
// A case: {"a": text, "b": text (a pair; optional), "a_base64"/"b_base64": raw bytes
// instead (invalid UTF-8), "max_length": n (optional), "add_special_tokens": bool
// (optional)}. A result: {"ids", "type_ids", "tokens", "truncated", "invalid_utf8"}, or
// {"error": message}. One line in, one line out.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "attend/error.hpp"
#include "text/hf/precompiled_charsmap.hpp"
#include "text/hf_tokenizer.hpp"

namespace {

std::string text_of(const nlohmann::json& c, const char* key, const std::string& base64_key) {
  if (c.contains(base64_key)) return attend::runtime::hf::decode_base64(c[base64_key].get<std::string>(), base64_key);
  return c[key].get<std::string>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::cerr << "usage: hf_tokenize_cases TOKENIZER_FILE [MODEL_TYPE] < cases.jsonl\n";
    return 2;
  }
  try {
    const auto tokenizer = attend::runtime::HfTokenizer::load(argv[1], argc == 3 ? argv[2] : "");
    std::string line;
    while (std::getline(std::cin, line)) {
      const auto c = nlohmann::json::parse(line);
      nlohmann::json out;
      try {
        attend::runtime::TokenizeOptions o;
        o.max_length = c.value("max_length", 0);
        o.add_special_tokens = c.value("add_special_tokens", true);
        const std::string a = text_of(c, "a", "a_base64");
        const bool pair = c.contains("b") || c.contains("b_base64");
        const auto e = pair ? tokenizer.encode_pair(a, text_of(c, "b", "b_base64"), o) : tokenizer.encode(a, o);
        out = {{"ids", e.ids}, {"type_ids", e.type_ids}, {"tokens", e.tokens}, {"truncated", e.truncated},
               {"invalid_utf8", e.invalid_utf8}};
      } catch (const attend::Error& e) {
        out = {{"error", e.what()}};
      }
      std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
  } catch (const std::exception& e) {
    std::cerr << "hf_tokenize_cases: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
