// Input lines to token ids for the encoder commands (embed, classify, tokenize), one
// policy for every line: exactly one sequence per line, never dropped —
//   text     through the model's tokenizer, with its special tokens, cut to max_length;
//            an empty or blank line is the empty text ("[CLS] [SEP]"), as the model
//            embeds it; with `pairs`, a tab splits the line into a sentence pair;
//   ids      integers separated by spaces, given as they are (at most max_length); an
//            empty or blank line is the model's empty input, as for text;
//   invalid UTF-8  replaced by U+FFFD, with a warning naming the line;
//   too long       truncated, with one warning at the end counting such lines.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attend/attend.hpp"
#include "line_warnings.hpp"

namespace attend::cli {

// embed's and tokenize's sentence-transformers prompt: --prompt TEXT, or --prompt-name
// NAME (one of the model's), else the model's default prompt.
struct PromptChoice {
  std::optional<std::string> prompt;
  std::string prompt_name;

  void add_flags(CLI::App& app);
  // The text to put before each line; a usage error for a prompt with ids input.
  std::string text(const attend::Encoder& encoder, const std::string& input_format) const;
};

// The flags every encoder command shares, and the Encoder they load.
struct EncoderChoice {
  std::string directory, isa, compute_type = "default", pooling;
  std::int64_t max_length = 0, max_batch_size = 32, max_batch_tokens = 8192;
  int threads = 0, inter_threads = 0, intra_threads = 0;

  void add_flags(CLI::App& app, bool pooling_flag);
  attend::Encoder load() const;
};

struct EncodedLine {
  std::vector<std::int32_t> ids, types;
  std::vector<std::string> tokens;  // text input only
  std::vector<std::string> texts;   // text input only: the line, or a pair's two texts
};

class EncoderInput {
 public:
  // `who` prefixes warnings ("attend embed"); `format` is "text" or "ids"; `prompt` is
  // put before every text line (sentence-transformers' prompts; not before ids).
  EncoderInput(const attend::Encoder& encoder, std::string format, bool pairs, std::string who, std::string prompt = {});
  // Input line `number` (1-based).
  EncodedLine encode(const std::string& line, std::uint64_t number);
  void print_warnings(std::FILE* to) const;
  std::uint64_t tokens() const { return tokens_; }

 private:
  void check(const EncodedLine& line, std::uint64_t number) const;

  const attend::Encoder& encoder_;
  std::string format_;
  bool pairs_;
  std::string prompt_;
  std::int64_t max_length_;
  LineWarnings warnings_;
  std::uint64_t truncated_ = 0, first_truncated_ = 0, tokens_ = 0;
};

}  // namespace attend::cli
