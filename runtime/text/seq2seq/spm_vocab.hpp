// What the SentencePiece-plus-vocabulary tokenizers of the encoder-decoders share
// (MarianTokenizer, M2M100Tokenizer: transformers' Python tokenizers over a
// SentencePiece model whose pieces a vocab.json maps to ids): loading the files, the
// special tokens written in a text split out before SentencePiece sees it (as
// PreTrainedTokenizer.tokenize does), and decode's text clean-up.
#pragma once

#include <sentencepiece_processor.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace attend::runtime {

// `needed_by` names the class in the error for a missing file.
std::shared_ptr<sentencepiece::SentencePieceProcessor> load_spm(const std::filesystem::path& path, const std::string& needed_by);
// vocab.json: {token: id}, every id inside `rows`.
std::map<std::string, std::int32_t> load_vocab_json(const std::filesystem::path& path, std::int64_t rows, const std::string& needed_by);

// The text cut at the special tokens it contains (the longest at a place): `text_chunk`
// for the text between them, `special` for each.
void split_specials(const std::string& text, const std::set<std::string>& specials,
                    const std::function<void(const std::string&)>& text_chunk,
                    const std::function<void(const std::string&)>& special);

// SentencePiece pieces joined as sp_model.decode does.
std::string spm_decode(const sentencepiece::SentencePieceProcessor& spm, const std::vector<std::string>& pieces);
// Python's str.strip().
std::string strip(const std::string& s);
void replace_all(std::string& s, const std::string& from, const std::string& to);
// transformers' clean_up_tokenization (" ." → ".", " n't" → "n't", …).
std::string clean_up_tokenization(std::string s);

}  // namespace attend::runtime
