// Hugging Face tokenizers, read from a model's tokenizer.json and run as the `tokenizers`
// library runs them (the same ids, type ids and token strings): added tokens split out,
// then the normalizer, pre-tokenizer, model and post-processor the file names. The
// pieces live in text/hf/ (pipeline.hpp shows how they fit); docs/tokenizers.md lists
// what is supported and how it is checked against `tokenizers`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attend::runtime {

struct Encoding {
  std::vector<std::int32_t> ids;       // special tokens included, as the post-processor places them
  std::vector<std::int32_t> type_ids;  // token type (segment) ids, same length
  std::vector<std::string> tokens;     // the token strings, same length
  std::vector<std::int32_t> sequence_ids;  // the text each token came from: 0, 1 (a pair's second), -1 a special token
  bool truncated = false;              // cut to max_length
  bool invalid_utf8 = false;           // the text had invalid UTF-8, replaced by U+FFFD
};

struct TokenizeOptions {
  std::int64_t max_length = 0;  // 0: no truncation; else total length incl. special tokens (HF "longest_first" for pairs)
  bool add_special_tokens = true;
  bool truncate_left = false;   // cut from the start, keeping the end (tokenizers' TruncationDirection::Left)
};

class HfTokenizer {
 public:
  // Reads a tokenizer.json — or, for a directory without one, its vocab.txt or
  // sentencepiece.bpe.model (with tokenizer_config.json), built as transformers builds
  // them (text/hf/vocab_files.hpp; `model_type`, config.json's, picks the class when
  // tokenizer_config.json names none). Throws attend::Error naming the file and the
  // field for anything missing or unsupported.
  static HfTokenizer load(const std::filesystem::path& file, const std::string& model_type = "");

  // Text in any bytes: invalid UTF-8 is replaced by U+FFFD (Encoding::invalid_utf8 says
  // so). A max_length below the number of special tokens is an error. With a max_length,
  // a long text is read only as far as truncation keeps (text_pieces.hpp), where the
  // pipeline allows it: the same ids, in memory that does not grow with the text.
  Encoding encode(std::string_view text, const TokenizeOptions& = {}) const;
  Encoding encode_pair(std::string_view a, std::string_view b, const TokenizeOptions& = {}) const;

  // Ids back to text, as tokenizers' Tokenizer.decode: the tokens (special added tokens
  // left out when asked) through tokenizer.json's decoder, or joined by spaces without
  // one. Throws attend::Error for an id the tokenizer lacks, or a decoder attend lacks.
  std::string decode(const std::vector<std::int32_t>& ids, bool skip_special_tokens = true) const;
  std::int32_t token_to_id(std::string_view token) const;  // -1 if absent
  std::int32_t unknown_id() const;                         // the model's unknown token; -1 if it has none
  const std::string& id_to_token(std::int32_t id) const;   // throws attend::Error for an unknown id
  std::int64_t vocab_size() const;  // model and added tokens: one more than the highest id
  std::int32_t pad_id() const;      // from tokenizer.json's padding / the model's pad token; -1 if none
  std::int64_t truncation_max_length() const;  // tokenizer.json's truncation.max_length; 0 if none
  bool reads_in_pieces() const;  // whether a truncated long text is read only as far as it is kept
  std::string describe() const;     // "WordPiece (BertNormalizer lowercase, …)" for `attend inspect`

  HfTokenizer(const HfTokenizer&) = default;
  HfTokenizer& operator=(const HfTokenizer&) = default;
  HfTokenizer(HfTokenizer&&) noexcept = default;
  HfTokenizer& operator=(HfTokenizer&&) noexcept = default;
  ~HfTokenizer();

  struct Pipeline;  // text/hf/tokenizer_json.hpp

 private:
  explicit HfTokenizer(std::shared_ptr<const Pipeline> pipeline);
  Encoding encode_sequences(std::string_view a, const std::string_view* b, const TokenizeOptions& options) const;

  std::shared_ptr<const Pipeline> pipeline_;  // immutable: copies share it, threads encode concurrently
};

}  // namespace attend::runtime
