#include "text/tokenizers.hpp"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

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

// Whether no piece holds a word mark ("▁", or a space where the model keeps spaces)
// past its first byte: then every space of a text starts a new piece, and the pieces
// before a space are those its words alone give — for Unigram (the best path to a
// piece boundary does not depend on what follows it) and BPE (merges never cross it).
bool word_local(const sentencepiece::SentencePieceProcessor& spm) {
  for (int i = 0; i < spm.GetPieceSize(); ++i) {
    const std::string& piece = spm.IdToPiece(i);
    if (piece.find("\xE2\x96\x81", 1) != std::string::npos || piece.find(' ', 1) != std::string::npos) return false;
  }
  return true;
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
    t.source_word_local_ = word_local(*t.source_spm_);
    t.target_word_local_ = t.target_spm_ == t.source_spm_ ? t.source_word_local_ : word_local(*t.target_spm_);
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

namespace {

constexpr std::size_t kContextBytes = 256;  // text kept after a cut, beyond any normalization rule's reach

bool is_space(char c) { return c == ' '; }

// The first space at or after `from` that ends a word (the start of a run of spaces),
// or npos.
std::size_t word_end_at_or_after(const std::string& text, std::size_t from) {
  for (std::size_t i = text.find(' ', from); i != std::string::npos; i = text.find(' ', i + 1))
    if (i > 0 && !is_space(text[i - 1])) return i;
  return std::string::npos;
}

// The end of a window that holds `cut` and a word after it, beyond kContextBytes of
// text: the next word end after some non-space there, or the text's end.
std::size_t window_end(const std::string& text, std::size_t cut) {
  std::size_t i = cut + kContextBytes;
  while (i < text.size() && is_space(text[i])) ++i;
  const std::size_t end = i < text.size() ? word_end_at_or_after(text, i) : std::string::npos;
  return end == std::string::npos ? text.size() : end;
}

}  // namespace

LeadingPieces Tokenizers::leading_pieces(const std::string& text, Side side, std::int64_t count, bool cut) const {
  if (!has_text()) throw error_of("the model has no SentencePiece model (source.spm + target.spm, or vocab.spm)");
  LeadingPieces out;
  if (is_blank_text(text) || count < 0) return out;
  const sentencepiece::SentencePieceProcessor& model = spm(side);
  // Bytes that usually hold `count` pieces several times over (a piece is a few bytes).
  const std::size_t first_window =
      std::max<std::size_t>(std::size_t{1} << 14, static_cast<std::size_t>(std::min<std::int64_t>(count, 1 << 24)) * 32);
  auto take = [&](std::vector<std::int32_t> ids, std::int64_t seen, bool more) {
    if (static_cast<std::int64_t>(ids.size()) > count) ids.resize(static_cast<std::size_t>(count));
    out.ids = std::move(ids), out.seen = seen, out.more = more;
    return out;
  };
  if (pieces_stop_at_spaces(side) && count < (1 << 24) && text.size() > 2 * first_window) {
    for (std::size_t window = first_window; window < text.size(); window *= 2) {
      const std::size_t at = word_end_at_or_after(text, window);
      if (at == std::string::npos) break;
      const std::size_t end = window_end(text, at);
      if (end == text.size() && !cut) break;  // as well the whole text
      const sentencepiece::ImmutableSentencePieceText pieces = model.EncodeAsImmutableProto(std::string_view(text).substr(0, end));
      std::vector<std::int32_t> ids;
      bool split = true;  // a piece boundary at `at`, as the whole text has
      for (const auto& piece : pieces.pieces()) {
        if (piece.end() <= at) ids.push_back(static_cast<std::int32_t>(piece.id()));
        else split = split && piece.begin() >= at;
      }
      const auto trusted = static_cast<std::int64_t>(ids.size());
      if (split && trusted >= count) return take(std::move(ids), static_cast<std::int64_t>(pieces.pieces_size()), true);
      if (end == text.size()) break;
    }
  }
  if (!cut || !pieces_stop_at_spaces(side)) {
    std::vector<int> ids;
    const auto status = model.Encode(text, &ids);
    if (!status.ok()) throw error_of("SentencePiece could not encode the text: ", status.ToString());
    out.exact = !cut || count == 0;
    const auto seen = static_cast<std::int64_t>(ids.size());
    return take({ids.begin(), ids.end()}, seen, cut);
  }
  // A text cut short: the ids of its last words may change with what followed the cut.
  // They are trusted up to a word end kContextBytes before it.
  const std::size_t last = text.size() > kContextBytes ? text.rfind(' ', text.size() - kContextBytes) : std::string::npos;
  const sentencepiece::ImmutableSentencePieceText pieces = model.EncodeAsImmutableProto(text);
  std::vector<std::int32_t> ids;
  std::int64_t trusted = 0;
  for (const auto& piece : pieces.pieces()) {
    ids.push_back(static_cast<std::int32_t>(piece.id()));
    trusted += last != std::string::npos && piece.end() <= last;
  }
  out.exact = trusted >= count;
  return take(std::move(ids), static_cast<std::int64_t>(pieces.pieces_size()), true);
}

bool Tokenizers::text_never_gives(std::int32_t id, Side side) const {
  if (!has_text()) return true;
  const sentencepiece::SentencePieceProcessor& model = spm(side);
  return id < 0 || id >= model.GetPieceSize() || model.IsControl(id);
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
