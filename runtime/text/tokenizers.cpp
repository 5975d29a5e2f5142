#include "text/tokenizers.hpp"

#include <sentencepiece_processor.h>

#include <filesystem>

#include "attend/error.hpp"
#include "text/blank_text.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

std::shared_ptr<sentencepiece::SentencePieceProcessor> load_spm(const ModelFiles& files, const std::string& name) {
  const std::string path = files.path(name);
  std::error_code ec;
  if (!files.in_memory() && !fs::is_regular_file(path, ec))
    throw error_of(path, ": not a regular file (a SentencePiece model is one file)");
  auto spm = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = spm->LoadFromSerializedProto(files.read(name));
  if (!status.ok()) throw error_of(path, ": cannot load the SentencePiece model: ", status.ToString());
  return spm;
}

Vocabulary pieces_of(const sentencepiece::SentencePieceProcessor& spm, const std::string& unk) {
  std::vector<std::string> pieces;
  for (int i = 0; i < spm.GetPieceSize(); ++i) pieces.push_back(spm.IdToPiece(i));
  return Vocabulary(std::move(pieces), spm.IdToPiece(spm.unk_id()).empty() ? unk : spm.IdToPiece(spm.unk_id()));
}

std::string first_existing(const ModelFiles& files, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (files.has(n)) return n;
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
  return from_files(ModelFiles::directory(dir), c, unk);
}

Tokenizers Tokenizers::from_files(const ModelFiles& files, const ModelConfig& c, const std::string& unk) {
  Tokenizers t;
  t.bos_ = c.bos_id, t.eos_ = c.eos_id, t.add_bos_ = c.add_source_bos, t.add_eos_ = c.add_source_eos;
  if (files.has("vocab.spm")) {
    t.source_spm_ = t.target_spm_ = load_spm(files, "vocab.spm");
    t.text_files_ = "SentencePiece (vocab.spm, shared)";
  } else if (files.has("source.spm") || files.has("target.spm")) {
    if (!files.has("source.spm")) throw error_of(files.path("source.spm"), ": missing (target.spm is present)");
    if (!files.has("target.spm")) throw error_of(files.path("target.spm"), ": missing (source.spm is present)");
    t.source_spm_ = load_spm(files, "source.spm");
    t.target_spm_ = load_spm(files, "target.spm");
    t.text_files_ = "SentencePiece (source.spm, target.spm)";
  }
  if (t.source_spm_) {
    const bool shared_spm = files.has("vocab.spm");
    check_size(t.source_spm_->GetPieceSize(), c.src_vocab_size, files.path(shared_spm ? "vocab.spm" : "source.spm"),
               "pieces", "source");
    check_size(t.target_spm_->GetPieceSize(), c.tgt_vocab_size, files.path(shared_spm ? "vocab.spm" : "target.spm"),
               "pieces", "target");
  }

  const std::string shared = first_existing(files, {"shared_vocabulary.json", "shared_vocabulary.txt"});
  const std::string source = shared.empty() ? first_existing(files, {"source_vocabulary.json", "source_vocabulary.txt"}) : shared;
  const std::string target = shared.empty() ? first_existing(files, {"target_vocabulary.json", "target_vocabulary.txt"}) : shared;
  if (!source.empty() && !target.empty()) {
    t.source_vocab_ = Vocabulary::from_text(files.read(source), files.path(source), unk);
    t.target_vocab_ = Vocabulary::from_text(files.read(target), files.path(target), unk);
    check_size(t.source_vocab_->size(), c.src_vocab_size, files.path(source), "tokens (<unk> included)", "source");
    check_size(t.target_vocab_->size(), c.tgt_vocab_size, files.path(target), "tokens (<unk> included)", "target");
    t.vocab_files_ = shared.empty() ? source + ", " + target : shared + " (shared)";
  } else if (t.source_spm_) {
    t.source_vocab_ = pieces_of(*t.source_spm_, unk);
    t.target_vocab_ = pieces_of(*t.target_spm_, unk);
    t.vocab_files_ = "the SentencePiece pieces";
  }
  return t;
}

std::vector<std::int32_t> Tokenizers::with_source_specials(std::vector<std::int32_t> ids, Side side) const {
  if (side == Side::source) {
    if (add_bos_) ids.insert(ids.begin(), bos_);
    if (add_eos_) ids.push_back(eos_);
  }
  return ids;
}

std::vector<std::int32_t> Tokenizers::encode_text(const std::string& text, Side side) const {
  if (!has_text()) throw error_of("the model has no SentencePiece model (source.spm + target.spm, or vocab.spm)");
  if (is_blank_text(text)) return with_source_specials({}, side);  // an empty line, not unknown pieces
  std::vector<int> ids;
  const auto status = (side == Side::source ? source_spm_ : target_spm_)->Encode(text, &ids);
  if (!status.ok()) throw error_of("SentencePiece could not encode the text: ", status.ToString());
  return with_source_specials({ids.begin(), ids.end()}, side);
}

std::vector<std::int32_t> Tokenizers::encode_tokens(const std::vector<std::string>& tokens, Side side) const {
  if (!has_vocabulary()) throw error_of("the model has no vocabulary (source_/target_vocabulary, shared_vocabulary or SentencePiece models)");
  const Vocabulary& v = side == Side::source ? *source_vocab_ : *target_vocab_;
  std::vector<std::int32_t> ids;
  for (const std::string& t : tokens) ids.push_back(v.id_or_unk(t));
  return with_source_specials(std::move(ids), side);
}

std::string Tokenizers::decode_text(const std::vector<std::int32_t>& ids) const {
  if (!has_text()) throw error_of("the model has no SentencePiece model (source.spm + target.spm, or vocab.spm)");
  std::string out;
  const auto status = target_spm_->Decode(std::vector<int>(ids.begin(), ids.end()), &out);
  if (!status.ok()) throw error_of("SentencePiece could not decode ids: ", status.ToString());
  return out;
}

std::vector<std::string> Tokenizers::decode_tokens(const std::vector<std::int32_t>& ids) const {
  if (!has_vocabulary()) throw error_of("the model has no vocabulary");
  std::vector<std::string> out;
  for (std::int32_t id : ids) out.push_back(target_vocab_->token(id));
  return out;
}

std::optional<std::int32_t> Tokenizers::find_token(const std::string& token, Side side) const {
  if (!has_vocabulary()) throw error_of("the model has no vocabulary to look up the token '", token, "' in");
  return (side == Side::source ? *source_vocab_ : *target_vocab_).find(token);
}

std::vector<std::string> Tokenizers::source_tokens(const std::vector<std::int32_t>& ids) const {
  if (!has_vocabulary()) throw error_of("the model has no vocabulary");
  std::vector<std::string> out;
  for (std::int32_t id : ids) out.push_back(source_vocab_->token(id));
  return out;
}

std::string Tokenizers::decode_pieces(const std::vector<std::string>& pieces) const {
  if (!has_text()) throw error_of("the model has no SentencePiece model (source.spm + target.spm, or vocab.spm)");
  std::string out;
  const auto status = target_spm_->Decode(pieces, &out);
  if (!status.ok()) throw error_of("SentencePiece could not decode pieces: ", status.ToString());
  return out;
}

}  // namespace attend::runtime
