// Tokenizers of model directories that have no tokenizer.json, built as transformers
// builds them from the files it has (its slow-to-fast conversion, transformers 5's
// tokenizer classes), so that the ids are the same:
//   vocab.txt                  BertTokenizer: BertNormalizer (tokenizer_config.json's
//                              do_lower_case, strip_accents, tokenize_chinese_chars),
//                              BertPreTokenizer, WordPiece, [CLS] A [SEP] B [SEP]
//   sentencepiece.bpe.model    XLMRobertaTokenizer / CamembertTokenizer: the model's
//                              pieces and scores as a Unigram in fairseq's id layout,
//                              its precompiled charsmap, WhitespaceSplit + Metaspace,
//                              <s> A </s> </s> B </s>
// with the special tokens, added_tokens_decoder and extra_special_tokens of
// tokenizer_config.json as added tokens.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "text/hf/tokenizer_json.hpp"

namespace attend::runtime::hf {

// `file` is the vocab.txt or the sentencepiece model; its directory's
// tokenizer_config.json (if any) is read too. `model_type` (config.json's) picks the
// tokenizer class when tokenizer_config.json names none. Throws attend::Error naming the
// file and the field.
std::shared_ptr<const HfTokenizer::Pipeline> read_vocab_files(const std::filesystem::path& file,
                                                              const std::string& model_type);

}  // namespace attend::runtime::hf
