// M2M100Tokenizer (transformers' tokenization_m2m_100): sentencepiece.bpe.model cuts the
// text into pieces, vocab.json (fairseq's dictionary: <s> <pad> </s> <unk>, then the
// pieces) maps them to ids, unknown pieces to <unk>; the language tokens __xx__ follow
// the vocabulary (ids from tokenizer_config.json's added_tokens_decoder where it has
// them, else len(vocab.json) + their place in fairseq's list, as transformers counts).
// A source is [__src__] X </s>; the target language is forced as the first generated
// token. Decoding drops the special ids (the special tokens and the additional special
// tokens tokenizer_config.json lists — the hub's list the language tokens), maps ids to
// tokens (an id the vocabulary lacks is <unk>, written as such), joins the pieces with
// SentencePiece and strips the result.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "attend/error.hpp"
#include "formats/json_file.hpp"
#include "text/seq2seq/seq2seq_tokenizer.hpp"
#include "text/seq2seq/spm_vocab.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

// transformers' FAIRSEQ_LANGUAGE_CODES: the order fixes the ids.
const std::vector<std::string>& fairseq_codes(const std::string& set, const JsonFile& config) {
  static const std::vector<std::string> m2m100 = {
      "af", "am", "ar", "ast", "az", "ba", "be", "bg", "bn", "br", "bs", "ca", "ceb", "cs", "cy", "da", "de", "el", "en", "es",
      "et", "fa", "ff", "fi", "fr", "fy", "ga", "gd", "gl", "gu", "ha", "he", "hi", "hr", "ht", "hu", "hy", "id", "ig", "ilo",
      "is", "it", "ja", "jv", "ka", "kk", "km", "kn", "ko", "lb", "lg", "ln", "lo", "lt", "lv", "mg", "mk", "ml", "mn", "mr",
      "ms", "my", "ne", "nl", "no", "ns", "oc", "or", "pa", "pl", "ps", "pt", "ro", "ru", "sd", "si", "sk", "sl", "so", "sq",
      "sr", "ss", "su", "sv", "sw", "ta", "th", "tl", "tn", "tr", "uk", "ur", "uz", "vi", "wo", "xh", "yi", "yo", "zh", "zu"};
  static const std::vector<std::string> wmt21 = {"en", "ha", "is", "ja", "cs", "ru", "zh", "de"};
  if (set == "m2m100") return m2m100;
  if (set == "wmt21") return wmt21;
  config.bad("language_codes", "is '" + set + "' — M2M100Tokenizer knows m2m100 and wmt21");
}

class M2M100Tokenizer final : public Seq2SeqTokenizer {
 public:
  M2M100Tokenizer(const std::string& dir, std::int64_t rows) : dir_(dir) {
    const fs::path d(dir);
    const fs::path config_path = d / "tokenizer_config.json";
    if (!fs::exists(config_path)) throw error_of(config_path.string(), ": missing (M2M100Tokenizer's settings)");
    const JsonFile config(config_path.string());
    spm_ = load_spm(d / "sentencepiece.bpe.model", "M2M100Tokenizer needs sentencepiece.bpe.model and vocab.json");
    vocab_ = load_vocab_json(d / "vocab.json", rows, "M2M100Tokenizer's vocabulary");
    for (const auto& [token, id] : vocab_) tokens_[id] = token;
    clean_up_ = config.flag_or("clean_up_tokenization_spaces", false);
    unk_ = config.text_or("unk_token", "<unk>"), eos_ = config.text_or("eos_token", "</s>");
    std::set<std::string> special_tokens = {config.text_or("bos_token", "<s>"), eos_, config.text_or("sep_token", "</s>"),
                                            config.text_or("pad_token", "<pad>"), unk_};
    for (const std::string& t : special_tokens)
      if (!vocab_.count(t)) throw error_of((d / "vocab.json").string(), ": lacks the special token '", t, "'");

    // The language tokens: their ids as the directory records them, else transformers' count.
    std::map<std::string, std::int32_t> recorded;
    if (config.has("added_tokens_decoder"))
      for (const auto& [id, entry] : config.value()["added_tokens_decoder"].items())
        if (entry.is_object() && entry.contains("content") && entry["content"].is_string())
          recorded[entry["content"].get<std::string>()] = static_cast<std::int32_t>(std::stol(id));
    const auto& codes = fairseq_codes(config.text_or("language_codes", "m2m100"), config);
    for (std::size_t i = 0; i < codes.size(); ++i) {
      const std::string token = "__" + codes[i] + "__";
      const auto it = recorded.find(token);
      const std::int64_t id = it != recorded.end() ? it->second : static_cast<std::int64_t>(vocab_.size() + i);
      if (id < 0 || id >= rows)
        throw error_of(config_path.string(), ": the language token ", token, " has id ", id, ", outside the model's ", rows, " rows");
      lang_ids_[codes[i]] = static_cast<std::int32_t>(id);
      tokens_[static_cast<std::int32_t>(id)] = token;
      split_[token] = static_cast<std::int32_t>(id);
    }
    for (const std::string& t : special_tokens) split_[t] = vocab_.at(t);
    for (const auto& [content, id] : recorded) split_.emplace(content, id);
    // all_special_tokens: the named ones and the additional ones listed (the hub's: the language tokens).
    for (const char* field : {"additional_special_tokens", "extra_special_tokens"})
      if (config.has(field) && config.value()[field].is_array())
        if (const auto listed = config.strings(field)) special_tokens.insert(listed->begin(), listed->end());
    for (const std::string& t : special_tokens)
      if (const auto it = split_.find(t); it != split_.end()) special_ids_.insert(it->second), special_strings_.insert(t);
    for (const auto& [token, _] : split_) split_tokens_.insert(token);
    default_source_ = config.text_or("src_lang", "en");
  }

  std::vector<std::int32_t> encode_source(const std::string& text, const std::string& source_lang,
                                          const std::string& target_lang) const override {
    if (!target_lang.empty()) lang_id(target_lang);  // checked: it is forced on the target side
    std::vector<std::int32_t> ids = {lang_id(source_lang.empty() ? default_source_ : source_lang)};
    split_specials(text, split_tokens_, [&](const std::string& chunk) { encode_chunk(chunk, ids); },
                   [&](const std::string& special) { ids.push_back(split_.at(special)); });
    ids.push_back(vocab_.at(eos_));
    return ids;
  }

  std::vector<std::int32_t> target_prefix(const std::string& target_lang) const override {
    if (target_lang.empty()) return {};
    return {lang_id(target_lang)};
  }

  // convert_tokens_to_string after skipping the special ids: special token strings (an
  // id the vocabulary lacks becomes <unk>) are written as they are, the runs of pieces
  // between them joined by SentencePiece.
  std::string decode(const std::vector<std::int32_t>& ids) const override {
    std::string out;
    std::vector<std::string> run;
    for (const std::int32_t id : ids) {
      if (special_ids_.count(id)) continue;
      const std::string t = token(id, true);
      if (special_strings_.count(t)) {
        out += spm_decode(*spm_, run) + t;
        run.clear();
      } else {
        run.push_back(t);
      }
    }
    out = strip(out + spm_decode(*spm_, run));
    return clean_up_ ? clean_up_tokenization(out) : out;
  }

  std::optional<std::int32_t> find(const std::string& token, bool) const override {
    if (const auto it = split_.find(token); it != split_.end()) return it->second;
    const auto it = vocab_.find(token);
    return it == vocab_.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
  }
  std::string token(std::int32_t id, bool) const override {
    const auto it = tokens_.find(id);
    return it != tokens_.end() ? it->second : unk_;
  }
  std::int32_t unk_id(bool) const override { return vocab_.at(unk_); }
  std::string describe() const override {
    return "M2M100Tokenizer (sentencepiece.bpe.model, vocab.json), " + std::to_string(lang_ids_.size()) + " language codes";
  }

 private:
  std::int32_t lang_id(const std::string& lang) const {
    const std::string code = lang.size() > 4 && lang.rfind("__", 0) == 0 && lang.ends_with("__") ? lang.substr(2, lang.size() - 4) : lang;
    if (const auto it = lang_ids_.find(code); it != lang_ids_.end()) return it->second;
    std::string list;
    for (const auto& [c, _] : lang_ids_) list += (list.empty() ? "" : ", ") + c;
    throw error_of(dir_, ": '", lang, "' is not a language of this model; its codes are ", list);
  }
  void encode_chunk(const std::string& text, std::vector<std::int32_t>& ids) const {
    std::vector<std::string> pieces;
    const auto status = spm_->Encode(text, &pieces);
    if (!status.ok()) throw error_of("SentencePiece could not encode the text: ", status.ToString());
    for (const std::string& p : pieces) {
      const auto it = vocab_.find(p);
      ids.push_back(it != vocab_.end() ? it->second : vocab_.at(unk_));
    }
  }

  std::string dir_;
  bool clean_up_ = false;
  std::shared_ptr<sentencepiece::SentencePieceProcessor> spm_;
  std::map<std::string, std::int32_t> vocab_, lang_ids_, split_;
  std::map<std::int32_t, std::string> tokens_;
  std::set<std::string> split_tokens_, special_strings_;
  std::set<std::int32_t> special_ids_;
  std::string unk_, eos_, default_source_;
};

}  // namespace

std::shared_ptr<const Seq2SeqTokenizer> make_m2m100_tokenizer(const std::string& dir, std::int64_t rows) {
  return std::make_shared<M2M100Tokenizer>(dir, rows);
}

}  // namespace attend::runtime
