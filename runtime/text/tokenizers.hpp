// The text and token front-ends of a model directory: SentencePiece models
// (source.spm + target.spm, or one vocab.spm) and token vocabularies
// (source_/target_vocabulary or shared_vocabulary, .txt or .json). Vocabularies fall
// back to the SentencePiece models' pieces, so tokens work wherever text does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/model_files.hpp"
#include "model/model_config.hpp"
#include "text/seq2seq/seq2seq_tokenizer.hpp"
#include "text/vocabulary.hpp"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attend::runtime {

enum class Side { source, target };

// The first pieces of a text, as encode_text gives them (Tokenizers::leading_pieces).
struct LeadingPieces {
  std::vector<std::int32_t> ids;  // at most the pieces asked for (no BOS/EOS)
  std::int64_t seen = 0;          // the text's pieces: all of them, or (more) a lower bound
  bool more = false;              // only part of the text was tokenized: it has more than `seen`
  bool exact = true;              // false: the text was given cut (`cut`) where its last ids may
                                  // differ from those of the whole, and these reach that far
};

class Tokenizers {
 public:
  Tokenizers() = default;
  ~Tokenizers();
  Tokenizers(Tokenizers&&) noexcept;
  Tokenizers& operator=(Tokenizers&&) noexcept;

  // Whatever `dir` holds; checked against the model's vocabulary sizes (errors name the
  // file). `unk` is the unknown token appended to vocabularies that lack it.
  static Tokenizers from_directory(const std::string& dir, const ModelConfig& config, const std::string& unk = "<unk>");
  // A Hugging Face directory's own tokenizer (text/seq2seq/), for text and tokens alike.
  static Tokenizers from_seq2seq(std::shared_ptr<const Seq2SeqTokenizer> tokenizer);
  static Tokenizers from_files(const ModelFiles& files, const ModelConfig& config, const std::string& unk = "<unk>");

  bool has_text() const { return source_spm_ != nullptr || seq2seq_ != nullptr; }
  bool has_seq2seq() const { return seq2seq_ != nullptr; }  // a Hugging Face directory's own tokenizer
  bool has_vocabulary() const { return source_vocab_.has_value() || seq2seq_ != nullptr; }
  // The source side's unknown token, if the directory has a source vocabulary.
  std::optional<std::int32_t> source_unk() const {
    if (seq2seq_) return seq2seq_->unk_id(false);
    return source_vocab_ ? std::optional<std::int32_t>(source_vocab_->unk_id()) : std::nullopt;
  }
  std::string describe_text() const { return seq2seq_ ? seq2seq_->describe() : text_files_; }
  std::string describe_vocabulary() const { return seq2seq_ ? seq2seq_->describe() : vocab_files_; }
  // Source text with the model's language codes (Hugging Face families; "" for none),
  // and the forced first target tokens the target language asks for.
  std::vector<std::int32_t> encode_source(const std::string& text, const std::string& source_lang,
                                          const std::string& target_lang) const;
  std::vector<std::int32_t> target_language_prefix(const std::string& target_lang) const;

  // Source text or tokens → ids, with the BOS/EOS the model asks for. Blank text
  // (text/blank_text.hpp) has no pieces.
  std::vector<std::int32_t> encode_text(const std::string& text, Side side) const;
  // The first `count` pieces of encode_text(text, side) — the same ids — tokenizing only
  // as much of a long text as they need, so that memory and time follow `count`, not
  // the text. `cut`: the text is the start of a longer one (a line read in part); its
  // ids near the cut are not trusted to be the whole's (`exact`).
  LeadingPieces leading_pieces(const std::string& text, Side side, std::int64_t count, bool cut = false) const;
  // Whether encode_text never gives `id` for a text's own pieces (a control id, as the
  // end-of-sequence): where it does, cutting a text's ids depends on its last pieces.
  bool text_never_gives(std::int32_t id, Side side) const;
  // The BOS/EOS encode_text adds around a source's pieces.
  std::int64_t source_specials() const { return (add_bos_ ? 1 : 0) + (add_eos_ ? 1 : 0); }
  std::vector<std::int32_t> with_specials(std::vector<std::int32_t> pieces, Side side) const {
    return with_source_specials(std::move(pieces), side);
  }
  std::vector<std::int32_t> encode_tokens(const std::vector<std::string>& tokens, Side side) const;
  std::string decode_text(const std::vector<std::int32_t>& ids) const;               // target side
  std::vector<std::string> decode_tokens(const std::vector<std::int32_t>& ids) const;  // target side
  // For the decoding options that name tokens (end_token, suppress_sequences) and
  // replace_unknowns: a token's id without the <unk> fallback, source ids as tokens,
  // target tokens (SentencePiece pieces) as text.
  std::optional<std::int32_t> find_token(const std::string& token, Side side) const;
  std::vector<std::string> source_tokens(const std::vector<std::int32_t>& ids) const;
  std::string decode_pieces(const std::vector<std::string>& pieces) const;

 private:
  std::vector<std::int32_t> with_source_specials(std::vector<std::int32_t> ids, Side side) const;
  const sentencepiece::SentencePieceProcessor& spm(Side side) const { return side == Side::source ? *source_spm_ : *target_spm_; }
  bool pieces_stop_at_spaces(Side side) const { return side == Side::source ? source_word_local_ : target_word_local_; }

  std::shared_ptr<sentencepiece::SentencePieceProcessor> source_spm_, target_spm_;
  std::shared_ptr<const Seq2SeqTokenizer> seq2seq_;
  std::optional<Vocabulary> source_vocab_, target_vocab_;
  std::string text_files_, vocab_files_;
  std::int32_t bos_ = 0, eos_ = 0;
  bool add_bos_ = false, add_eos_ = false;
  // Every piece with the word mark "▁" has it first only: a piece never spans a space,
  // so the pieces before a space do not depend on the text after it.
  bool source_word_local_ = false, target_word_local_ = false;
};

}  // namespace attend::runtime
