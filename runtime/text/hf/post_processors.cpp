#include "text/hf/post_processors.hpp"

namespace attend::runtime::hf {
namespace {

TokenSequence special(const Token& t, std::int32_t type_id) { return {{t.id}, {type_id}, {t.value}}; }

void set_type_ids(TokenSequence& s, std::int32_t type_id) { s.type_ids.assign(s.size(), type_id); }

}  // namespace

void TokenSequence::append(const TokenSequence& other) {
  ids.insert(ids.end(), other.ids.begin(), other.ids.end());
  type_ids.insert(type_ids.end(), other.type_ids.begin(), other.type_ids.end());
  tokens.insert(tokens.end(), other.tokens.begin(), other.tokens.end());
}

void TokenSequence::truncate(std::size_t n) {
  if (n >= size()) return;
  ids.resize(n), type_ids.resize(n), tokens.resize(n);
}

std::size_t TemplateProcessing::added_tokens(bool is_pair) const {
  std::size_t n = 0;
  for (const Piece& p : is_pair ? pair : single)
    if (!p.is_sequence) n += special_tokens.at(p.special).ids.size();
  return n;
}

std::vector<TokenSequence> TemplateProcessing::process(std::vector<TokenSequence> sequences,
                                                       bool add_special_tokens) const {
  std::vector<TokenSequence> out;
  for (const Piece& p : sequences.size() == 2 ? pair : single) {
    if (p.is_sequence) {
      TokenSequence s = sequences[p.second ? 1 : 0];
      set_type_ids(s, p.type_id);
      out.push_back(std::move(s));
    } else if (add_special_tokens) {
      const SpecialTokens& t = special_tokens.at(p.special);
      out.push_back({t.ids, std::vector<std::int32_t>(t.ids.size(), p.type_id), t.tokens});
    }
  }
  return out;
}

std::string TemplateProcessing::describe() const {
  std::string d;
  for (const Piece& p : single) {
    if (!d.empty()) d += ' ';
    d += p.is_sequence ? (p.second ? "$B" : "$A") : p.special;
  }
  return "TemplateProcessing (" + d + ")";
}

std::vector<TokenSequence> BertProcessing::process(std::vector<TokenSequence> sequences, bool add_special_tokens) const {
  if (!add_special_tokens) return sequences;
  std::vector<TokenSequence> out{special(cls, 0), sequences[0], special(sep, 0)};
  if (sequences.size() == 2) out.push_back(sequences[1]), out.push_back(special(sep, 1));
  return out;
}

std::vector<TokenSequence> RobertaProcessing::process(std::vector<TokenSequence> sequences,
                                                      bool add_special_tokens) const {
  for (TokenSequence& s : sequences) set_type_ids(s, 0);  // RoBERTa has one token type
  if (!add_special_tokens) return sequences;
  std::vector<TokenSequence> out{special(cls, 0), sequences[0], special(sep, 0)};
  if (sequences.size() == 2) out.push_back(special(sep, 0)), out.push_back(sequences[1]), out.push_back(special(sep, 0));
  return out;
}

std::size_t PostProcessorSequence::added_tokens(bool is_pair) const {
  std::size_t n = 0;
  for (const auto& step : steps) n += step->added_tokens(is_pair);
  return n;
}

std::vector<TokenSequence> PostProcessorSequence::process(std::vector<TokenSequence> sequences,
                                                          bool add_special_tokens) const {
  for (const auto& step : steps) sequences = step->process(std::move(sequences), add_special_tokens);
  return sequences;
}

}  // namespace attend::runtime::hf
