// The tokenizer of a Hugging Face encoder-decoder directory, built into attend: text to
// ids and ids to text exactly as the model's own transformers tokenizer does it
// (tokenizer(text)["input_ids"], tokenizer.decode(ids, skip_special_tokens=True)), with
// the family's language codes. One class per family (marian_tokenizer.hpp, …).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attend::runtime {

class Seq2SeqTokenizer {
 public:
  virtual ~Seq2SeqTokenizer() = default;

  // The source's ids, the special and language tokens placed as the family places them.
  // `source_lang` / `target_lang`: the model's own codes ("" for none); a code the model
  // lacks, or one it needs and is not given, is an attend::Error listing the valid ones.
  virtual std::vector<std::int32_t> encode_source(const std::string& text, const std::string& source_lang,
                                                  const std::string& target_lang) const = 0;
  // The forced first target tokens (the target language code of M2M100, NLLB, mBART-50),
  // or none.
  virtual std::vector<std::int32_t> target_prefix(const std::string& target_lang) const = 0;
  // decode(ids, skip_special_tokens=True).
  virtual std::string decode(const std::vector<std::int32_t>& ids) const = 0;

  // Tokens ↔ ids (no unknown fallback in find).
  virtual std::optional<std::int32_t> find(const std::string& token, bool target) const = 0;
  virtual std::string token(std::int32_t id, bool target) const = 0;
  virtual std::int32_t unk_id(bool target) const = 0;
  virtual std::string describe() const = 0;  // the files and the class, for `attend inspect`
};

// The tokenizer the directory's files and config.json's model_type call for; throws
// attend::Error naming a missing or broken file. `source_vocab`/`target_vocab`: the
// model's embedding rows (ids beyond them are an error).
std::shared_ptr<const Seq2SeqTokenizer> load_seq2seq_tokenizer(const std::string& dir, const std::string& family,
                                                                std::int64_t source_vocab, std::int64_t target_vocab);

}  // namespace attend::runtime
