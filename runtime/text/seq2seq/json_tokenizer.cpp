// A tokenizer.json that places every special token itself (T5Tokenizer: X </s>; BART:
// <s> X </s>) and a model without language codes: encode with the file's post-processor,
// decode skipping the special tokens — as transformers 5's tokenizers backends do.
#include <filesystem>

#include "attend/error.hpp"
#include "formats/json_file.hpp"
#include "text/hf_tokenizer.hpp"
#include "text/seq2seq/seq2seq_tokenizer.hpp"
#include "text/seq2seq/spm_vocab.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

class JsonTokenizer final : public Seq2SeqTokenizer {
 public:
  JsonTokenizer(const std::string& dir, const std::string& cls) : dir_(dir), class_(cls), tokenizer_(load(dir, cls)) {
    const fs::path config_path = fs::path(dir) / "tokenizer_config.json";
    if (fs::exists(config_path)) clean_up_ = JsonFile(config_path.string()).flag_or("clean_up_tokenization_spaces", false);
  }

  std::vector<std::int32_t> encode_source(const std::string& text, const std::string& source_lang,
                                          const std::string& target_lang) const override {
    if (!source_lang.empty() || !target_lang.empty())
      throw error_of(dir_, ": this ", class_, " model has no language codes (--source-lang/--target-lang ",
                     source_lang.empty() ? target_lang : source_lang, "): write the task in the text, as its model card does");
    return tokenizer_.encode(text).ids;
  }
  std::vector<std::int32_t> target_prefix(const std::string& target_lang) const override {
    if (!target_lang.empty()) throw error_of(dir_, ": this ", class_, " model has no language codes (target language ", target_lang, ")");
    return {};
  }
  std::string decode(const std::vector<std::int32_t>& ids) const override {
    const std::string out = tokenizer_.decode(ids, true);
    return clean_up_ ? clean_up_tokenization(out) : out;
  }
  std::optional<std::int32_t> find(const std::string& token, bool) const override {
    const std::int32_t id = tokenizer_.token_to_id(token);
    return id < 0 ? std::nullopt : std::optional<std::int32_t>(id);
  }
  std::string token(std::int32_t id, bool) const override { return tokenizer_.id_to_token(id); }
  std::int32_t unk_id(bool) const override { return tokenizer_.unknown_id(); }
  std::string describe() const override { return class_ + " (tokenizer.json: " + tokenizer_.describe() + ")"; }

 private:
  static HfTokenizer load(const std::string& dir, const std::string& cls) {
    const fs::path file = fs::path(dir) / "tokenizer.json";
    if (!fs::exists(file))
      throw error_of(file.string(), ": missing (", cls, " needs tokenizer.json; attend does not build it from spiece.model or vocab.json + merges.txt)");
    return HfTokenizer::load(file);
  }

  std::string dir_, class_;
  HfTokenizer tokenizer_;
  bool clean_up_ = false;
};

}  // namespace

std::shared_ptr<const Seq2SeqTokenizer> make_json_tokenizer(const std::string& dir, const std::string& cls) {
  return std::make_shared<JsonTokenizer>(dir, cls);
}

}  // namespace attend::runtime
