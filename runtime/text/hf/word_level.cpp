#include "attend/error.hpp"
#include "text/hf/models.hpp"

namespace attend::runtime::hf {

void WordLevel::tokenize(std::string_view word, std::vector<Token>& out) const {
  if (const std::int32_t id = vocab.find(word); id >= 0) {
    out.push_back({id, std::string(word)});
    return;
  }
  const std::int32_t unk = vocab.find(unk_token);
  if (unk < 0) throw error_of("WordLevel: a word needs unk_token \"", unk_token, "\", which is not in the vocabulary");
  out.push_back({unk, unk_token});
}

}  // namespace attend::runtime::hf
