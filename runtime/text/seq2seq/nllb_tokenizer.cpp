// NllbTokenizer, MBart50Tokenizer and MBartTokenizer (transformers 5: tokenizers
// backends; the comments below say NLLB, the others differ where noted): the directory's tokenizer.json
// cuts the text (its BPE over SentencePiece's pieces, fairseq's offset and the added
// language codes and <mask> are the file's own ids — never arithmetic); the language
// codes are tokenizer_config.json's extra/additional special tokens. A source is
// [src_lang] X </s>, or X </s> [src_lang] with legacy_behaviour; the target language is
// forced as the first generated token. Decoding is tokenizer.json's, special tokens
// (the language codes among them) skipped. MBart50Tokenizer places the source as NLLB
// does ([en_XX] X </s>), MBartTokenizer (mBART-25, mbart-large-en-ro) as NLLB's legacy
// (X </s> [en_XX]).
#include <algorithm>
#include <filesystem>

#include "attend/error.hpp"
#include "formats/json_file.hpp"
#include "text/hf_tokenizer.hpp"
#include "text/seq2seq/seq2seq_tokenizer.hpp"
#include "text/seq2seq/spm_vocab.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

class NllbTokenizer final : public Seq2SeqTokenizer {
 public:
  NllbTokenizer(const std::string& dir, std::int64_t rows, const std::string& cls, const std::string& default_source)
      : dir_(dir), class_(cls), tokenizer_(load(dir, cls)) {
    const fs::path config_path = fs::path(dir) / "tokenizer_config.json";
    if (!fs::exists(config_path)) throw error_of(config_path.string(), ": missing (", cls, "'s settings and language codes)");
    const JsonFile config(config_path.string());
    legacy_ = cls == "MBartTokenizer" || config.flag_or("legacy_behaviour", false);
    clean_up_ = config.flag_or("clean_up_tokenization_spaces", false);
    eos_ = id_of(config, "eos_token", config.text_or("eos_token", "</s>"), rows);
    for (const char* field : {"extra_special_tokens", "additional_special_tokens"}) {
      if (!config.has(field) || !config.value()[field].is_array()) continue;
      const auto listed = config.strings(field);  // (kept alive for the loop)
      for (const std::string& code : *listed) {
        bool named = false;  // the named special tokens are no language codes
        for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"})
          named = named || config.text_or(key, "") == code;
        if (!named) codes_[code] = id_of(config, field, code, rows);
      }
      break;
    }
    if (codes_.empty())
      config.bad("extra_special_tokens", "lists no language codes (" + cls + "'s additional_special_tokens)");
    default_source_ = config.text_or("src_lang", default_source);
  }

  std::vector<std::int32_t> encode_source(const std::string& text, const std::string& source_lang,
                                          const std::string& target_lang) const override {
    if (!target_lang.empty()) lang_id(target_lang);  // checked: it is forced on the target side
    const std::int32_t source = lang_id(source_lang.empty() ? default_source_ : source_lang);
    std::vector<std::int32_t> ids = tokenizer_.encode(text, {.add_special_tokens = false}).ids;
    ids.push_back(eos_);
    if (legacy_) ids.push_back(source);
    else ids.insert(ids.begin(), source);
    return ids;
  }

  std::vector<std::int32_t> target_prefix(const std::string& target_lang) const override {
    if (target_lang.empty()) return {};
    return {lang_id(target_lang)};
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
  std::string describe() const override {
    return class_ + " (tokenizer.json: " + tokenizer_.describe() + ")" + (legacy_ ? ", legacy_behaviour" : "") + ", " +
           std::to_string(codes_.size()) + " language codes";
  }

 private:
  static HfTokenizer load(const std::string& dir, const std::string& cls) {
    const fs::path file = fs::path(dir) / "tokenizer.json";
    if (!fs::exists(file))
      throw error_of(file.string(), ": missing (", cls, " needs tokenizer.json, as the hub's directories have it; "
                     "attend does not build it from sentencepiece.bpe.model)");
    return HfTokenizer::load(file);
  }
  std::int32_t id_of(const JsonFile& config, const char* field, const std::string& token, std::int64_t rows) const {
    const std::int32_t id = tokenizer_.token_to_id(token);
    if (id < 0) config.bad(field, "names '" + token + "', which tokenizer.json lacks");
    if (id >= rows) config.bad(field, "names '" + token + "' of id " + std::to_string(id) + ", outside the model's " + std::to_string(rows) + " rows");
    return id;
  }
  std::int32_t lang_id(const std::string& lang) const {
    if (const auto it = codes_.find(lang); it != codes_.end()) return it->second;
    std::string list;
    std::size_t n = 0;
    for (const auto& [c, _] : codes_)
      if (n++ < 40) list += (list.empty() ? "" : ", ") + c;
    throw error_of(dir_, ": '", lang, "' is not a language of this model; its codes are ", list, codes_.size() > 40 ? ", …" : "");
  }

  std::string dir_, class_;
  HfTokenizer tokenizer_;
  bool legacy_ = false, clean_up_ = false;
  std::int32_t eos_ = 2;
  std::map<std::string, std::int32_t> codes_;
  std::string default_source_;
};

}  // namespace

std::shared_ptr<const Seq2SeqTokenizer> make_nllb_tokenizer(const std::string& dir, std::int64_t rows) {
  return std::make_shared<NllbTokenizer>(dir, rows, "NllbTokenizer", "eng_Latn");
}

std::shared_ptr<const Seq2SeqTokenizer> make_mbart_tokenizer(const std::string& dir, std::int64_t rows, const std::string& cls) {
  return std::make_shared<NllbTokenizer>(dir, rows, cls, "en_XX");
}

}  // namespace attend::runtime
