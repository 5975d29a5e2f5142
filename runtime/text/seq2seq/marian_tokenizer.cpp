// MarianTokenizer (transformers' tokenization_marian): source.spm and target.spm cut the
// text into pieces, vocab.json (Marian's own vocabulary, ordered unlike the pieces) maps
// them to ids, unknown pieces to <unk>; a leading ">>xx<<" is the target language code of
// a multilingual model; </s> ends every source. Decoding drops the special tokens (</s>,
// <unk>, <pad>), maps ids back through the vocabulary (a piece of the SentencePiece model
// for an id the vocabulary lacks), joins the pieces with the SentencePiece model — the
// source's unless separate_vocabs, as transformers does — and strips the result.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "attend/error.hpp"
#include "formats/json_file.hpp"
#include "text/seq2seq/seq2seq_tokenizer.hpp"
#include "text/seq2seq/spm_vocab.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

class MarianTokenizer final : public Seq2SeqTokenizer {
 public:
  MarianTokenizer(const std::string& dir, std::int64_t source_rows, std::int64_t target_rows) : dir_(dir) {
    const fs::path d(dir);
    std::optional<JsonFile> config;
    if (fs::exists(d / "tokenizer_config.json")) config.emplace((d / "tokenizer_config.json").string());
    auto text = [&](const char* key, const char* fallback) { return config ? config->text_or(key, fallback) : fallback; };
    separate_ = config && config->flag_or("separate_vocabs", false);
    clean_up_ = config && config->flag_or("clean_up_tokenization_spaces", false);
    source_spm_ = load_spm(d / "source.spm", "MarianTokenizer needs source.spm and target.spm");
    target_spm_ = load_spm(d / "target.spm", "MarianTokenizer needs source.spm and target.spm");
    source_vocab_ = load_vocab_json(d / "vocab.json", source_rows, "MarianTokenizer's vocabulary");
    target_vocab_ = separate_ ? load_vocab_json(d / "target_vocab.json", target_rows, "MarianTokenizer's vocabulary") : source_vocab_;
    if (!separate_)
      for (const auto& [token, id] : source_vocab_)
        if (id >= target_rows) throw error_of((d / "vocab.json").string(), ": token '", token, "' has id ", id, ", outside the target's ", target_rows, " rows");
    for (const auto& [token, id] : target_vocab_) target_tokens_[id] = token;
    for (const auto& [token, id] : source_vocab_) source_tokens_[id] = token;
    unk_token_ = text("unk_token", "<unk>"), eos_token_ = text("eos_token", "</s>"), pad_token_ = text("pad_token", "<pad>");
    for (const std::string* t : {&unk_token_, &eos_token_, &pad_token_})
      if (!source_vocab_.count(*t)) throw error_of((d / "vocab.json").string(), ": lacks the special token '", *t, "'");
    specials_ = {unk_token_, eos_token_, pad_token_};
    if (config && config->has("additional_special_tokens")) {
      const auto extra = config->strings("additional_special_tokens");
      specials_.insert(extra->begin(), extra->end());
    }
    for (const std::string& s : specials_) {
      if (const auto it = target_vocab_.find(s); it != target_vocab_.end()) special_target_ids_.insert(it->second);
    }
    if (!separate_)
      for (const auto& [token, _] : source_vocab_)
        if (token.size() > 4 && token.rfind(">>", 0) == 0 && token.ends_with("<<")) codes_.push_back(token);
  }

  std::vector<std::int32_t> encode_source(const std::string& text, const std::string& source_lang,
                                          const std::string& target_lang) const override {
    if (!source_lang.empty())
      throw error_of(dir_, ": a Marian model takes no source language (--source-lang ", source_lang,
                     "): it reads the language it was trained on");
    std::string line = text;
    if (!target_lang.empty()) line = code_of(target_lang) + " " + text;
    std::vector<std::int32_t> ids;
    // Special tokens written in the text are those tokens (transformers splits them out first).
    split_specials(line, specials_, [&](const std::string& chunk) { encode_chunk(chunk, ids); },
                   [&](const std::string& special) { ids.push_back(source_vocab_.at(special)); });
    ids.push_back(source_vocab_.at(eos_token_));
    return ids;
  }

  // Marian's target language is a source token (encode_source): nothing is forced, but a
  // code the model lacks is an error here too (translate_ids with target_lang).
  std::vector<std::int32_t> target_prefix(const std::string& target_lang) const override {
    if (!target_lang.empty()) code_of(target_lang);
    return {};
  }

  std::string decode(const std::vector<std::int32_t>& ids) const override {
    std::vector<std::string> pieces;
    for (const std::int32_t id : ids) {
      if (special_target_ids_.count(id)) continue;
      pieces.push_back(token(id, true));
    }
    std::string out = strip(spm_decode(separate_ ? *target_spm_ : *source_spm_, pieces));
    if (clean_up_) out = clean_up_tokenization(out);
    return out;
  }

  std::optional<std::int32_t> find(const std::string& token, bool target) const override {
    const auto& v = target ? target_vocab_ : source_vocab_;
    const auto it = v.find(token);
    return it == v.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
  }
  std::string token(std::int32_t id, bool target) const override {
    const auto& m = target ? target_tokens_ : source_tokens_;
    if (const auto it = m.find(id); it != m.end()) return it->second;
    const auto& spm = (target && separate_) ? *target_spm_ : *source_spm_;  // transformers' fallback
    const std::string piece = id >= 0 && id < spm.GetPieceSize() ? spm.IdToPiece(id) : "";
    return piece.empty() ? unk_token_ : piece;
  }
  std::int32_t unk_id(bool target) const override { return (target ? target_vocab_ : source_vocab_).at(unk_token_); }
  std::string describe() const override {
    return std::string("MarianTokenizer (source.spm, target.spm, vocab.json") + (separate_ ? ", target_vocab.json" : "") + ")" +
           (codes_.empty() ? "" : ", " + std::to_string(codes_.size()) + " target language codes");
  }

 private:
  // A code as given (">>fra<<" or "fra") as the vocabulary has it.
  std::string code_of(const std::string& lang) const {
    const std::string code = lang.rfind(">>", 0) == 0 ? lang : ">>" + lang + "<<";
    if (std::find(codes_.begin(), codes_.end(), code) != codes_.end()) return code;
    if (codes_.empty())
      throw error_of(dir_, ": the target language ", lang, " was given, but this Marian model has no >>xx<< language codes (it translates into one language)");
    std::string list;
    for (std::size_t i = 0; i < codes_.size() && i < 40; ++i) list += (i ? ", " : "") + codes_[i].substr(2, codes_[i].size() - 4);
    throw error_of(dir_, ": '", lang, "' is not a target language of this model; its codes are ", list, codes_.size() > 40 ? ", …" : "");
  }

  void encode_chunk(std::string text, std::vector<std::int32_t>& ids) const {
    if (text.rfind(">>", 0) == 0)
      if (const std::size_t end = text.find("<<"); end != std::string::npos) {
        ids.push_back(id_or_unk(text.substr(0, end + 2)));
        text = text.substr(end + 2);
      }
    std::vector<std::string> pieces;
    const auto status = source_spm_->Encode(text, &pieces);
    if (!status.ok()) throw error_of("SentencePiece could not encode the text: ", status.ToString());
    for (const std::string& p : pieces) ids.push_back(id_or_unk(p));
  }
  std::int32_t id_or_unk(const std::string& piece) const {
    const auto it = source_vocab_.find(piece);
    return it != source_vocab_.end() ? it->second : source_vocab_.at(unk_token_);
  }

  std::string dir_;
  bool separate_ = false, clean_up_ = false;
  std::shared_ptr<sentencepiece::SentencePieceProcessor> source_spm_, target_spm_;
  std::map<std::string, std::int32_t> source_vocab_, target_vocab_;
  std::map<std::int32_t, std::string> source_tokens_, target_tokens_;
  std::string unk_token_, eos_token_, pad_token_;
  std::set<std::string> specials_;
  std::set<std::int32_t> special_target_ids_;
  std::vector<std::string> codes_;
};

}  // namespace

std::shared_ptr<const Seq2SeqTokenizer> make_marian_tokenizer(const std::string& dir, std::int64_t source_rows, std::int64_t target_rows) {
  return std::make_shared<MarianTokenizer>(dir, source_rows, target_rows);
}

std::shared_ptr<const Seq2SeqTokenizer> make_m2m100_tokenizer(const std::string& dir, std::int64_t rows);
std::shared_ptr<const Seq2SeqTokenizer> make_nllb_tokenizer(const std::string& dir, std::int64_t rows);
std::shared_ptr<const Seq2SeqTokenizer> make_mbart_tokenizer(const std::string& dir, std::int64_t rows, const std::string& cls);
std::shared_ptr<const Seq2SeqTokenizer> make_json_tokenizer(const std::string& dir, const std::string& cls);

std::shared_ptr<const Seq2SeqTokenizer> load_seq2seq_tokenizer(const std::string& dir, const std::string& family,
                                                                std::int64_t source_vocab, std::int64_t target_vocab) {
  if (family == "marian") return make_marian_tokenizer(dir, source_vocab, target_vocab);
  if (family == "m2m_100") {
    // NLLB-200 and M2M100 share the architecture; their tokenizers differ: NLLB's is
    // tokenizer.json (NllbTokenizer), M2M100's vocab.json + sentencepiece.bpe.model.
    const fs::path d(dir);
    std::string cls;
    if (fs::exists(d / "tokenizer_config.json")) cls = JsonFile((d / "tokenizer_config.json").string()).text_or("tokenizer_class", "");
    if (cls.rfind("Nllb", 0) == 0 || (cls.empty() && fs::exists(d / "tokenizer.json"))) return make_nllb_tokenizer(dir, source_vocab);
    return make_m2m100_tokenizer(dir, source_vocab);
  }
  if (family == "mbart") {  // mBART-50 (MBart50Tokenizer), or mBART-25 (MBartTokenizer: the source language last)
    const fs::path d(dir);
    std::string cls;
    if (fs::exists(d / "tokenizer_config.json")) cls = JsonFile((d / "tokenizer_config.json").string()).text_or("tokenizer_class", "");
    if (cls.ends_with("Fast")) cls = cls.substr(0, cls.size() - 4);
    return make_mbart_tokenizer(dir, source_vocab, cls == "MBartTokenizer" ? cls : "MBart50Tokenizer");
  }
  if (family == "t5" || family == "mt5") return make_json_tokenizer(dir, "T5Tokenizer");
  if (family == "bart") return make_json_tokenizer(dir, "BartTokenizer");
  throw error_of(dir, ": no tokenizer for the family '", family, "'");
}

}  // namespace attend::runtime
