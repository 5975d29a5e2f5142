// attend embed, classify and tokenize: encoder-only models over a text file, one output
// row per input line, in input order. Lines are read in chunks (memory stays flat),
// each chunk tokenized (encoder_input.hpp: warnings, truncation) and run as one call,
// whose batches the library forms by tokens.
#include <charconv>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "attention_heads_output.hpp"
#include "commands.hpp"
#include "encoder_input.hpp"
#include "npy_writer.hpp"
#include "output_file.hpp"
#include "progress.hpp"
#include "text_input.hpp"

namespace attend::cli {
namespace {

constexpr std::size_t kChunkLines = 1024;
// Embed and tokenize read a line only this far (the rest is dropped as it arrives, with
// a warning): tokens far beyond any encoder's max_length, never a gigabyte held for one
// line. Classify, whose lines may be pairs, reads each text of a pair this far: a cut
// never drops the second text.
constexpr std::size_t kLineBytes = std::size_t{1} << 20;

struct EncoderCommandArgs {
  EncoderChoice encoder;
  PromptChoice prompt;  // embed, tokenize
  std::string input = "-", output = "-", output_format, input_format = "text";
  bool normalize = false, no_normalize = false, quiet = false;
  std::string attention_all, attention_lines;  // embed, classify: every head of the chosen lines
};

// --attention-all PATH --attention-lines LIST, checked before the model loads.
std::optional<AttentionHeadsOutput> attention_output(const EncoderCommandArgs& args) {
  if (args.attention_all.empty() != args.attention_lines.empty())
    throw UsageError(args.attention_all.empty() ? "--attention-lines needs --attention-all FILE_OR_DIRECTORY"
                                                : "--attention-all needs --attention-lines (e.g. 3,7 or 0-4 or all)");
  std::optional<AttentionHeadsOutput> attention;
  if (!args.attention_all.empty()) attention.emplace(args.attention_all, args.attention_lines);
  return attention;
}

// The chosen lines' every head, recomputed now (embedding and classifying never pay for
// it). Text goes through the tokenizer again, so that the file holds the text and which
// sentence (A or B of a pair) each token came from; `first` is lines[0]'s 0-based number.
void write_attention(std::optional<AttentionHeadsOutput>& attention, const attend::Encoder& encoder,
                     const std::vector<EncodedLine>& lines, std::uint64_t first) {
  for (std::size_t i = 0; attention && i < lines.size(); ++i) {
    if (!attention->wants(first + i)) continue;
    const EncodedLine& l = lines[i];
    attention->write(first + i, l.texts.empty()       ? encoder.attention_heads(l.ids, l.types)
                                : l.texts.size() == 1 ? encoder.text_attention_heads(l.texts[0])
                                                      : encoder.text_attention_heads(l.texts[0], l.texts[1]));
  }
}

// The shortest text that reads back as the same float.
void append_float(std::string& out, float v) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, ec == std::errc() ? end : buffer);
}

// Runs `per_chunk` on the input's lines, chunk by chunk, with the progress line, the
// warnings and the summary alike for every command.
template <class PerChunk>
int run_lines(const EncoderCommandArgs& args, const char* who, EncoderInput& input, const PerChunk& per_chunk,
              bool pairs = false) {
  LineReader reader(args.input, "input");
  reader.cap_lines(kLineBytes, pairs);
  const bool interactive = args.input == "-" && is_terminal(0);
  const bool show_progress = !args.quiet && is_terminal(2) && !interactive;
  Progress progress(show_progress, show_progress ? count_lines(args.input) : std::nullopt);
  std::uint64_t lines = 0;
  try {
    for (;;) {
      const std::uint64_t first = reader.lines_read();
      const std::vector<std::string> text = reader.read(kChunkLines);
      if (text.empty()) break;
      std::vector<EncodedLine> encoded;
      for (std::size_t i = 0; i < text.size(); ++i) encoded.push_back(input.encode(text[i], first + i + 1));
      per_chunk(encoded);
      lines += text.size();
      progress.update(lines, input.tokens());
    }
  } catch (...) {
    progress.finish();
    reader.print_warnings(stderr, who);
    input.print_warnings(stderr);
    throw;
  }
  progress.finish();
  reader.print_warnings(stderr, who);
  input.print_warnings(stderr);
  if (!args.quiet)
    std::fprintf(stderr, "%s: %llu lines (%llu tokens) in %.2f s: %.1f lines/s, %.0f tokens/s\n", who,
                 static_cast<unsigned long long>(lines), static_cast<unsigned long long>(input.tokens()), progress.seconds(),
                 static_cast<double>(lines) / std::max(progress.seconds(), 1e-9),
                 static_cast<double>(input.tokens()) / std::max(progress.seconds(), 1e-9));
  return 0;
}

std::vector<std::vector<std::int32_t>> ids_of(const std::vector<EncodedLine>& lines) {
  std::vector<std::vector<std::int32_t>> ids;
  for (const EncodedLine& l : lines) ids.push_back(l.ids);
  return ids;
}

int run_embed(const EncoderCommandArgs& args) {
  if (args.normalize && args.no_normalize) throw UsageError("--normalize and --no-normalize exclude each other");
  std::string format = args.output_format;
  if (format.empty()) format = std::filesystem::path(args.output).extension() == ".npy" ? "npy" : "jsonl";
  if (format == "npy" && args.output == "-" && is_terminal(1))
    throw UsageError("--output-format npy writes binary: give -o FILE.npy or redirect standard output");
  std::optional<AttentionHeadsOutput> attention = attention_output(args);
  OutputFile out(args.output);
  std::uint64_t written = 0;
  try {
    const attend::Encoder encoder = args.encoder.load();
    EncoderInput input(encoder, args.input_format, false, "attend embed", args.prompt.text(encoder, args.input_format));
    attend::EmbedOptions options;
    options.normalize = args.normalize ? 1 : args.no_normalize ? 0 : -1;
    std::optional<NpyWriter> npy;
    if (format == "npy") npy.emplace(out.stream(), encoder.encoder_info().embedding_dim, out.label()), out.keep_no_partial();
    run_lines(args, "attend embed", input, [&](const std::vector<EncodedLine>& lines) {
      const auto embeddings = encoder.embed_ids(ids_of(lines), options);
      std::string text;
      for (const auto& e : embeddings) {
        if (npy) {
          npy->add(e);
          continue;
        }
        text.clear();
        if (format == "jsonl") text += '[';
        for (std::size_t k = 0; k < e.size(); ++k) {
          if (k > 0) text += format == "jsonl" ? ", " : "\t";
          append_float(text, e[k]);
        }
        if (format == "jsonl") text += ']';
        text += '\n';
        std::fwrite(text.data(), 1, text.size(), out.stream());
      }
      write_attention(attention, encoder, lines, written);
      written += embeddings.size();
      std::fflush(out.stream());
    });
    if (npy) npy->finish();
    out.commit();
    if (attention) attention->finish(written);
  } catch (...) {
    out.abandon(format == "npy" ? 0 : written, "attend embed");
    throw;
  }
  return 0;
}

// Opens the output, runs `body(out, written)` and commits, or keeps what was written in
// FILE.partial on a failure.
template <class Body>
int with_output(const EncoderCommandArgs& args, const char* who, const Body& body) {
  OutputFile out(args.output);
  std::uint64_t written = 0;
  try {
    body(out, written);
    out.commit();
  } catch (...) {
    out.abandon(written, who);
    throw;
  }
  return 0;
}

int run_classify(const EncoderCommandArgs& args) {
  const std::string format = args.output_format.empty() ? "tsv" : args.output_format;
  std::optional<AttentionHeadsOutput> attention = attention_output(args);
  return with_output(args, "attend classify", [&](OutputFile& out, std::uint64_t& written) {
    const attend::Encoder encoder = args.encoder.load();
    EncoderInput input(encoder, args.input_format, true, "attend classify");
    const std::vector<std::string> labels = encoder.encoder_info().labels;
    if (labels.empty()) throw attend::Error(args.encoder.directory + ": the model has no classification head (a *ForSequenceClassification model has)");
    run_lines(args, "attend classify", input, [&](const std::vector<EncodedLine>& lines) {
      std::vector<std::vector<std::int32_t>> types;
      for (const EncodedLine& l : lines) types.push_back(l.types);
      write_attention(attention, encoder, lines, written);
      std::string text;
      for (const attend::Classification& c : encoder.classify_ids(ids_of(lines), types)) {
        text.clear();
        if (format == "jsonl") {
          nlohmann::ordered_json j;
          j["label"] = c.label_name, j["score"] = c.score;
          nlohmann::ordered_json scores;
          for (std::size_t k = 0; k < c.scores.size(); ++k) scores[labels[k]] = c.scores[k];
          j["scores"] = scores;
          text = j.dump() + "\n";
        } else {
          text = c.label_name + "\t";
          append_float(text, c.score);
          text += '\n';
        }
        std::fwrite(text.data(), 1, text.size(), out.stream());
        ++written;
      }
      std::fflush(out.stream());
    }, true);
    if (attention) attention->finish(written);
  });
}

int run_tokenize(const EncoderCommandArgs& args) {
  const std::string format = args.output_format.empty() ? "ids" : args.output_format;
  return with_output(args, "attend tokenize", [&](OutputFile& out, std::uint64_t& written) {
    const attend::Encoder encoder = args.encoder.load();
    EncoderInput input(encoder, "text", false, "attend tokenize", args.prompt.text(encoder, "text"));
    run_lines(args, "attend tokenize", input, [&](const std::vector<EncodedLine>& lines) {
      std::string text;
      for (const EncodedLine& l : lines) {
        text.clear();
        for (std::size_t k = 0; k < l.ids.size(); ++k) {
          if (k > 0) text += ' ';
          text += format == "ids" ? std::to_string(l.ids[k]) : l.tokens[k];
        }
        text += '\n';
        std::fwrite(text.data(), 1, text.size(), out.stream());
        ++written;
      }
      std::fflush(out.stream());
    });
  });
}

void add_attention_flags(CLI::App* app, EncoderCommandArgs& args) {
  app->add_option("--attention-all", args.attention_all,
                  "Write every layer and head's self-attention of the --attention-lines to PATH: a directory of "
                  "line-N.npz, or one FILE.npz for one line; tools/plot_attention.py and tools/attention_view.py draw them");
  app->add_option("--attention-lines", args.attention_lines,
                  "The 0-based input lines --attention-all writes: 3,7 or 0-4,9 or all");
}

CLI::App* add_io_flags(CLI::App* app, EncoderCommandArgs& args) {
  app->add_option("-i,--input", args.input, "Input file, one text per line ('-': standard input)")->capture_default_str();
  app->add_option("-o,--output", args.output, "Output file, one row per input line ('-': standard output)")->capture_default_str();
  app->add_flag("-q,--quiet", args.quiet, "No progress line and no summary on stderr");
  return app;
}

}  // namespace

Command add_embed_command(CLI::App& parent) {
  auto args = std::make_shared<EncoderCommandArgs>();
  CLI::App* app = parent.add_subcommand(
      "embed", "Sentence embeddings of a text file with an encoder (sentence-transformers' vectors), one row per line");
  args->encoder.add_flags(*app, true);
  add_io_flags(app, *args);
  app->add_option("--output-format", args->output_format,
                  "npy (float32 [lines, dim]), jsonl (a JSON array per line) or tsv (default: npy for -o *.npy, else jsonl)")
      ->check(CLI::IsMember({"npy", "jsonl", "tsv"}));
  app->add_option("--input-format", args->input_format, "text, or ids (token ids separated by spaces)")
      ->check(CLI::IsMember({"text", "ids"}))
      ->capture_default_str();
  args->prompt.add_flags(*app);
  app->add_flag("--normalize", args->normalize, "L2-normalise every embedding (default: as the model, its Normalize module)");
  app->add_flag("--no-normalize", args->no_normalize, "Never normalise, even if the model has a Normalize module");
  add_attention_flags(app, *args);
  return {app, [args] { return run_embed(*args); }};
}

Command add_classify_command(CLI::App& parent) {
  auto args = std::make_shared<EncoderCommandArgs>();
  CLI::App* app = parent.add_subcommand(
      "classify", "Labels and scores of each line with a sequence classifier or cross-encoder (tab-separated pairs)");
  args->encoder.add_flags(*app, false);
  add_io_flags(app, *args);
  app->add_option("--output-format", args->output_format, "tsv (label<TAB>score, the default) or jsonl (every label's score)")
      ->check(CLI::IsMember({"tsv", "jsonl"}));
  app->add_option("--input-format", args->input_format, "text (a tab splits a sentence pair), or ids")
      ->check(CLI::IsMember({"text", "ids"}))
      ->capture_default_str();
  add_attention_flags(app, *args);
  return {app, [args] { return run_classify(*args); }};
}

Command add_tokenize_command(CLI::App& parent) {
  auto args = std::make_shared<EncoderCommandArgs>();
  CLI::App* app = parent.add_subcommand(
      "tokenize", "An encoder's tokens of each line, special tokens included, truncated as embed truncates");
  args->encoder.add_flags(*app, false);
  add_io_flags(app, *args);
  app->add_option("--output-format", args->output_format, "ids (the default) or tokens")
      ->check(CLI::IsMember({"ids", "tokens"}));
  args->prompt.add_flags(*app);
  return {app, [args] { return run_tokenize(*args); }};
}

}  // namespace attend::cli
