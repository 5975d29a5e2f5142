#include "text/tokenizers.hpp"

#include <sentencepiece_processor.h>

#include <filesystem>

#include "attend/error.hpp"
#include "text/blank_text.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

std::shared_ptr<sentencepiece::SentencePieceProcessor> load_spm(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw error_of(path.string(), ": not a regular file (a SentencePiece model is one file)");
  auto spm = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = spm->Load(path.string());
  if (!status.ok()) throw error_of(path.string(), ": cannot load the SentencePiece model: ", status.ToString());
  return spm;
}

Vocabulary pieces_of(const sentencepiece::SentencePieceProcessor& spm, const std::string& unk) {
  std::vector<std::string> pieces;
  for (int i = 0; i < spm.GetPieceSize(); ++i) pieces.push_back(spm.IdToPiece(i));
  return Vocabulary(std::move(pieces), spm.IdToPiece(spm.unk_id()).empty() ? unk : spm.IdToPiece(spm.unk_id()));
}

std::string first_existing(const fs::path& dir, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (fs::exists(dir / n)) return (dir / n).string();
  return {};
}

void check_size(std::int64_t have, std::int64_t want, const std::string& file, const char* what, const char* side) {
  if (have != want)
    throw error_of(file, ": ", have, " ", what, " but the model's ", side, " embedding has ", want, " rows");
}

}  // namespace

Tokenizers::~Tokenizers() = default;
Tokenizers::Tokenizers(Tokenizers&&) noexcept = default;
Tokenizers& Tokenizers::operator=(Tokenizers&&) noexcept = default;

Tokenizers Tokenizers::from_directory(const std::string& dir, const ModelConfig& c, const std::string& unk) {
  Tokenizers t;
  t.bos_ = c.bos_id, t.eos_ = c.eos_id, t.add_bos_ = c.add_source_bos, t.add_eos_ = c.add_source_eos;
  const fs::path d(dir);
  if (fs::exists(d / "vocab.spm")) {
    t.source_spm_ = t.target_spm_ = load_spm(d / "vocab.spm");
    t.text_files_ = "SentencePiece (vocab.spm, shared)";
  } else if (fs::exists(d / "source.spm") || fs::exists(d / "target.spm")) {
    if (!fs::exists(d / "source.spm")) throw error_of((d / "source.spm").string(), ": missing (target.spm is present)");
    if (!fs::exists(d / "target.spm")) throw error_of((d / "target.spm").string(), ": missing (source.spm is present)");
    t.source_spm_ = load_spm(d / "source.spm");
    t.target_spm_ = load_spm(d / "target.spm");
    t.text_files_ = "SentencePiece (source.spm, target.spm)";
  }
  if (t.source_spm_) {
    check_size(t.source_spm_->GetPieceSize(), c.src_vocab_size, (d / (fs::exists(d / "vocab.spm") ? "vocab.spm" : "source.spm")).string(),
               "pieces", "source");
    check_size(t.target_spm_->GetPieceSize(), c.tgt_vocab_size, (d / (fs::exists(d / "vocab.spm") ? "vocab.spm" : "target.spm")).string(),
               "pieces", "target");
  }

  const std::string shared = first_existing(d, {"shared_vocabulary.json", "shared_vocabulary.txt"});
  const std::string source = shared.empty() ? first_existing(d, {"source_vocabulary.json", "source_vocabulary.txt"}) : shared;
  const std::string target = shared.empty() ? first_existing(d, {"target_vocabulary.json", "target_vocabulary.txt"}) : shared;
  if (!source.empty() && !target.empty()) {
    t.source_vocab_ = Vocabulary::from_file(source, unk);
    t.target_vocab_ = Vocabulary::from_file(target, unk);
    check_size(t.source_vocab_->size(), c.src_vocab_size, source, "tokens (<unk> included)", "source");
    check_size(t.target_vocab_->size(), c.tgt_vocab_size, target, "tokens (<unk> included)", "target");
    t.vocab_files_ = shared.empty() ? fs::path(source).filename().string() + ", " + fs::path(target).filename().string()
                                    : fs::path(shared).filename().string() + " (shared)";
  } else if (t.source_spm_) {
    t.source_vocab_ = pieces_of(*t.source_spm_, unk);
    t.target_vocab_ = pieces_of(*t.target_spm_, unk);
    t.vocab_files_ = "the SentencePiece pieces";
  }
  return t;
}

Tokenizers Tokenizers::from_seq2seq(std::shared_ptr<const Seq2SeqTokenizer> tokenizer) {
  Tokenizers t;
  t.seq2seq_ = std::move(tokenizer);
  return t;
}

std::vector<std::int32_t> Tokenizers::encode_source(const std::string& text, const std::string& source_lang,
                                                    const std::string& target_lang) const {
  if (seq2seq_) return seq2seq_->encode_source(text, source_lang, target_lang);
  if (!source_lang.empty() || !target_lang.empty())
    throw error_of("source and target languages apply to Hugging Face models with language codes; this model has none");
  return encode_text(text, Side::source);
}

std::vector<std::int32_t> Tokenizers::target_language_prefix(const std::string& target_lang) const {
  if (!seq2seq_ && !target_lang.empty())
    throw error_of("a target language (", target_lang, ") applies to Hugging Face models with language codes; this model has none");
  return seq2seq_ ? seq2seq_->target_prefix(target_lang) : std::vector<std::int32_t>{};
}

std::vector<std::int32_t> Tokenizers::with_source_specials(std::vector<std::int32_t> ids, Side side) const {
  if (side == Side::source) {
    if (add_bos_) ids.insert(ids.begin(), bos_);
    if (add_eos_) ids.push_back(eos_);
  }
  return ids;
}

std::vector<std::int32_t> Tokenizers::encode_text(const std::string& text, Side side) const {
  if (seq2seq_) {  // a target prefix: the pieces, without the end-of-sequence the source gets
    std::vector<std::int32_t> ids = seq2seq_->encode_source(text, "", "");
    if (side == Side::target && !ids.empty()) ids.pop_back();
    return ids;
  }
  if (!has_text()) throw error_of("the model has no SentencePiece model (source.spm + target.spm, or vocab.spm)");
  if (is_blank_text(text)) return with_source_specials({}, side);  // an empty line, not unknown pieces
  std::vector<int> ids;
  const auto status = (side == Side::source ? source_spm_ : target_spm_)->Encode(text, &ids);
  if (!status.ok()) throw error_of("SentencePiece could not encode the text: ", status.ToString());
  return with_source_specials({ids.begin(), ids.end()}, side);
}

std::vector<std::int32_t> Tokenizers::encode_tokens(const std::vector<std::string>& tokens, Side side) const {
  if (seq2seq_) {
    std::vector<std::int32_t> ids;
    for (const std::string& t : tokens) ids.push_back(seq2seq_->find(t, side == Side::target).value_or(seq2seq_->unk_id(side == Side::target)));
    return ids;
  }
  if (!has_vocabulary()) throw error_of("the model has no vocabulary (source_/target_vocabulary, shared_vocabulary or SentencePiece models)");
  const Vocabulary& v = side == Side::source ? *source_vocab_ : *target_vocab_;
  std::vector<std::int32_t> ids;
  for (const std::string& t : tokens) ids.push_back(v.id_or_unk(t));
  return with_source_specials(std::move(ids), side);
}

std::string Tokenizers::decode_text(const std::vector<std::int32_t>& ids) const {
  if (seq2seq_) return seq2seq_->decode(ids);
  if (!has_text()) throw error_of("the model has no SentencePiece model (source.spm + target.spm, or vocab.spm)");
  std::string out;
  const auto status = target_spm_->Decode(std::vector<int>(ids.begin(), ids.end()), &out);
  if (!status.ok()) throw error_of("SentencePiece could not decode ids: ", status.ToString());
  return out;
}

std::vector<std::string> Tokenizers::decode_tokens(const std::vector<std::int32_t>& ids) const {
  if (seq2seq_) {
    std::vector<std::string> out;
    for (std::int32_t id : ids) out.push_back(seq2seq_->token(id, true));
    return out;
  }
  if (!has_vocabulary()) throw error_of("the model has no vocabulary");
  std::vector<std::string> out;
  for (std::int32_t id : ids) out.push_back(target_vocab_->token(id));
  return out;
}

std::optional<std::int32_t> Tokenizers::find_token(const std::string& token, Side side) const {
  if (seq2seq_) return seq2seq_->find(token, side == Side::target);
  if (!has_vocabulary()) throw error_of("the model has no vocabulary to look up the token '", token, "' in");
  return (side == Side::source ? *source_vocab_ : *target_vocab_).find(token);
}

std::vector<std::string> Tokenizers::source_tokens(const std::vector<std::int32_t>& ids) const {
  if (seq2seq_) {
    std::vector<std::string> out;
    for (std::int32_t id : ids) out.push_back(seq2seq_->token(id, false));
    return out;
  }
  if (!has_vocabulary()) throw error_of("the model has no vocabulary");
  std::vector<std::string> out;
  for (std::int32_t id : ids) out.push_back(source_vocab_->token(id));
  return out;
}

std::string Tokenizers::decode_pieces(const std::vector<std::string>& pieces) const {
  if (seq2seq_) {
    std::vector<std::int32_t> ids;
    for (const std::string& p : pieces) ids.push_back(seq2seq_->find(p, true).value_or(seq2seq_->unk_id(true)));
    return seq2seq_->decode(ids);
  }
  if (!has_text()) throw error_of("the model has no SentencePiece model (source.spm + target.spm, or vocab.spm)");
  std::string out;
  const auto status = target_spm_->Decode(pieces, &out);
  if (!status.ok()) throw error_of("SentencePiece could not decode pieces: ", status.ToString());
  return out;
}

}  // namespace attend::runtime
