// attend translate: batch inference over a text (or token, or id) file, streamed in
// chunks so memory stays flat whatever the input's size, output in input order and
// flushed as soon as it is ready.
#include <algorithm>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "attention_heads_output.hpp"
#include "commands.hpp"
#include "flag_checks.hpp"
#include "model_choice.hpp"
#include "option_flags.hpp"
#include "ordered_output.hpp"
#include "output_file.hpp"
#include "process_stats.hpp"
#include "progress.hpp"
#include "source_lines.hpp"
#include "text_input.hpp"
#include "utf8.hpp"

namespace attend::cli {
namespace {

// Chunks grow so that the first lines come out quickly and large inputs still fill
// long length-sorted batches. A chunk ends early when no more input is waiting (a
// coprocess, a slow producer, a terminal): what has arrived is answered at once.
constexpr std::size_t kFirstChunkLines = 64;
constexpr std::size_t kMaxChunkLines = 4096;
// A chunk also ends once its lines hold this many bytes, and a line is read only as far
// as the limit on source tokens could ever use (kLineBytesPerToken a token, at least
// kMinLineBytes: a 10 MB token in a line of ids is still read whole): memory stays
// bounded whatever the lines' lengths (only what the limit keeps is tokenized).
constexpr std::size_t kMaxChunkBytes = std::size_t{64} << 20;
constexpr std::size_t kLineBytesPerToken = std::size_t{16} << 10;
constexpr std::size_t kMinLineBytes = std::size_t{16} << 20;

struct TranslateArgs {
  ModelChoice model;
  std::string input = "-", output = "-", input_format = "text", output_format;
  std::string target_prefix, target_prefix_file, attention_file, attention_all, attention_lines;
  DecodingFlags decoding;
  bool scores = false, strict = false, quiet = false;
  int threads = 0, inter_threads = 0, intra_threads = 0;
  std::int64_t max_batch_size = 32, max_batch_tokens = 4096;
};

const std::string kNonFinite = "lines whose scores were not finite (written empty)";

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ' ';
    out += p;
  }
  return out;
}

std::string format_score(float score) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6f", static_cast<double>(score));
  return buffer;
}

class Translation {
 public:
  explicit Translation(const TranslateArgs& args) : args_(args) {}
  int run();

 private:
  struct Totals {
    std::uint64_t lines = 0, empty = 0, source_tokens = 0, generated = 0;
  };

  void check_usage() const;
  void check_options();
  void translate_all(LineReader& reader, LineReader* prefix_reader, SourceLines& lines, OrderedOutput& output,
                     OrderedOutput* attention, Progress& progress);
  void translate_chunk(const std::vector<std::string>& text, const std::vector<std::string>& prefix_text,
                       const std::vector<std::uint64_t>& cut, std::uint64_t first, SourceLines& lines,
                       OrderedOutput& output, OrderedOutput* attention, Progress& progress);
  SourceLimit source_limit() const;
  void check_prefix(const std::vector<std::int32_t>& prefix, std::uint64_t number) const;
  std::string hypothesis_text(const attend::Hypothesis& h) const;
  std::string output_for(std::uint64_t line, const attend::TranslationResult* result) const;
  std::string attention_for(std::uint64_t line, const std::vector<std::int32_t>& source,
                            const attend::TranslationResult* result) const;
  // --attention-all: the chosen line's every head, traced along its best hypothesis.
  void write_attention_heads(std::uint64_t line, const std::string& text, const std::vector<std::int32_t>& source,
                             const attend::TranslationResult* result);
  void print_summary(double seconds) const;

  const TranslateArgs& args_;
  std::optional<attend::Model> model_;
  std::optional<attend::Translator> translator_;
  std::optional<AttentionHeadsOutput> attention_heads_;
  attend::TranslationOptions options_;
  Format output_format_ = Format::text;
  std::vector<std::int32_t> common_prefix_;
  std::int64_t max_length_ = 0;  // the tokens a translation may have (--max-length, or the translator's)
  Totals totals_;
};

void Translation::check_usage() const {
  const attend::TranslationOptions& o = args_.decoding.options;
  if (o.sampling && o.beam_size > 1)
    throw UsageError("sampling (--sampling, --sample-topk, --sample-topp, --temperature) and --beam > 1 exclude each other");
  if (!args_.target_prefix.empty() && !args_.target_prefix_file.empty())
    throw UsageError("--target-prefix and --target-prefix-file exclude each other");
  if (o.replace_unknowns && output_format_ == Format::ids)
    throw UsageError("--replace-unknowns writes source tokens: use --output-format text or tokens");
  if (args_.attention_all.empty() != args_.attention_lines.empty())
    throw UsageError(args_.attention_all.empty() ? "--attention-lines needs --attention-all FILE_OR_DIRECTORY"
                                                 : "--attention-all needs --attention-lines (e.g. 3,7 or 0-4 or all)");
  if (args_.target_prefix_file == "-" && args_.input == "-")
    throw UsageError("--target-prefix-file - and the input would both read standard input: give one of them as a file (-i FILE)");
}

// Every option against the model and the translator, before any line is read: a bad
// value is a usage error naming its flag and what it accepts.
void Translation::check_options() {
  const std::int64_t positions = model_->max_positions();
  if (options_.max_length > positions)
    throw UsageError("--max-length " + std::to_string(options_.max_length) + ": must be in [0, " +
                     std::to_string(positions) + "] (the model has " + std::to_string(positions) + " positions; 0: " +
                     std::to_string(std::min<std::int64_t>(256, positions)) + ")");
  try {
    translator_->validate(options_);
  } catch (const attend::OptionError& e) {
    throw UsageError(usage_message(e));
  }
}

std::string Translation::hypothesis_text(const attend::Hypothesis& h) const {
  // With --replace-unknowns the library has put the replaced tokens in h.tokens.
  const bool replaced = options_.replace_unknowns && !h.tokens.empty();
  switch (output_format_) {
    case Format::text: return replaced ? model_->decode_pieces(h.tokens) : model_->decode_text(h.ids);
    case Format::tokens: return join(replaced ? h.tokens : model_->decode_tokens(h.ids));
    case Format::ids: {
      std::string out;
      for (std::int32_t id : h.ids) out.append(out.empty() ? "" : " ").append(std::to_string(id));
      return out;
    }
  }
  return {};
}

// The documented output formats (README.md, `attend translate --help`): one line per
// input line (--n-best N: N lines), whatever the result; an empty input line gives an
// empty line (N lines "INDEX |||  ||| 0.000000" with --n-best). Text and tokens are put
// on one line (utf8.hpp's one_line: a decoded newline is written `\n`).
std::string Translation::output_for(std::uint64_t line, const attend::TranslationResult* result) const {
  const std::int64_t n = options_.num_hypotheses;
  if (result == nullptr && n == 1) return "\n";
  std::string out;
  for (std::int64_t k = 0; k < n; ++k) {
    const bool present = result != nullptr && k < static_cast<std::int64_t>(result->hypotheses.size());
    const attend::Hypothesis* h = present ? &result->hypotheses[k] : nullptr;
    const std::string text = h != nullptr ? one_line(hypothesis_text(*h)) : "";
    const float missing = result != nullptr ? -std::numeric_limits<float>::infinity() : 0.0f;
    const std::string score = format_score(h != nullptr ? h->score : missing);
    if (n > 1) out.append(std::to_string(line)).append(" ||| ").append(text).append(" ||| ").append(score);
    else if (args_.scores) out.append(score).append(" ||| ").append(text);
    else out.append(text);
    out += '\n';
  }
  return out;
}

// One JSON line per input line (--attention FILE): the best hypothesis' attention, one
// row per target token over the source tokens the encoder saw (the model's BOS/EOS
// included), as tools/plot_attention.py reads it.
std::string Translation::attention_for(std::uint64_t line, const std::vector<std::int32_t>& source,
                                       const attend::TranslationResult* result) const {
  auto tokens = [&](const std::vector<std::int32_t>& ids, attend::Model::Side side) {
    if (model_->has_vocabulary()) return model_->decode_tokens(ids, side);
    std::vector<std::string> out;
    for (std::int32_t id : ids) out.push_back(std::to_string(id));
    return out;
  };
  nlohmann::json j;
  j["line"] = line;
  j["source"] = tokens(source, attend::Model::Side::source);
  const attend::Hypothesis* h = result != nullptr && !result->hypotheses.empty() ? &result->hypotheses[0] : nullptr;
  j["target"] = h != nullptr ? tokens(h->ids, attend::Model::Side::target) : std::vector<std::string>{};
  j["score"] = h != nullptr ? h->score : 0.0f;
  j["attention"] = h != nullptr ? h->attention : std::vector<std::vector<float>>{};
  return j.dump() + "\n";
}

// Only now, after the line is translated: ordinary translation never pays for it. The
// output it traces ends with the end token (the step that ended it); an empty line,
// which is not run, gets maps of 0 rows; a line whose scores were not finite, its
// encoder's only.
void Translation::write_attention_heads(std::uint64_t line, const std::string& text,
                                        const std::vector<std::int32_t>& source, const attend::TranslationResult* result) {
  std::vector<std::int32_t> target;
  if (result != nullptr && !result->non_finite) {
    const attend::Hypothesis& best = result->hypotheses.at(0);
    target = best.ids;
    if (best.finished && !options_.return_end_token) target.push_back(best.end_id);
  }
  attention_heads_->write(line, translator_->attention_heads(source, target), text);
}

int Translation::run() {
  const Format input_format = parse_format(args_.input_format);
  output_format_ = args_.output_format.empty() ? input_format : parse_format(args_.output_format);
  check_usage();
  LineReader reader(args_.input, "input");
  std::optional<LineReader> prefix_reader;
  if (!args_.target_prefix_file.empty()) prefix_reader.emplace(args_.target_prefix_file, "target prefix file");
  OutputFile out(args_.output);
  std::optional<OutputFile> attention_out;
  if (!args_.attention_file.empty()) attention_out.emplace(args_.attention_file, "attention file");
  OrderedOutput output(out.stream(), out.label());
  std::optional<OrderedOutput> attention;
  if (attention_out) attention.emplace(attention_out->stream(), attention_out->label());
  if (!args_.attention_all.empty()) attention_heads_.emplace(args_.attention_all, args_.attention_lines);
  try {
    model_ = args_.model.load();
    // A Hugging Face directory's generation_config.json gives the defaults; flags win.
    options_ = args_.decoding.over(model_->default_options());
    options_.seed = args_.model.seed;
    options_.return_attention = attention_out.has_value();
    // The translator is sized for what the options ask: as long an output, as many rows
    // per sentence (a beam, or independent draws and alternatives).
    attend::TranslatorOptions topt;
    topt.threads = args_.threads, topt.inter_threads = args_.inter_threads, topt.intra_threads = args_.intra_threads;
    topt.max_batch_size = args_.max_batch_size, topt.max_batch_tokens = args_.max_batch_tokens;
    const std::int64_t positions = model_->max_positions();
    topt.max_target_length = options_.max_length > 0 ? std::min(options_.max_length, positions) : 256;
    topt.max_beam_size = std::max(options_.beam_size, options_.sampling || options_.return_alternatives ? options_.num_hypotheses : 1);
    try {
      translator_.emplace(*model_, topt);
    } catch (const attend::OptionError& e) {  // a flag out of the translator's range: named as the flag
      throw UsageError(usage_message(e));
    } catch (const attend::Error& e) {  // limits the flags asked for that the model or the machine cannot take
      throw UsageError(e.what());
    }
    check_options();
    max_length_ = std::min(topt.max_target_length, positions);

    SourceLines lines(*model_, input_format, args_.strict, source_limit(), "attend translate");
    reader.cap_lines(std::max(kMinLineBytes, static_cast<std::size_t>(lines.limit().tokens) * kLineBytesPerToken));
    lines.set_languages(options_.source_lang, options_.target_lang);  // a bad code fails here, before any line
    (void)model_->forced_target_prefix(options_.target_lang);
    if (output_format_ == Format::text && !model_->has_text_tokenizer())
      throw attend::Error("the model has no SentencePiece model to write text: use --output-format ids or tokens");
    if (output_format_ == Format::tokens && !model_->has_vocabulary())
      throw attend::Error("the model has no vocabulary files to write tokens: use --output-format ids");
    if (!args_.target_prefix.empty()) {
      common_prefix_ = lines.encode_prefix(args_.target_prefix, 0);
      check_prefix(common_prefix_, 0);
    }

    // Someone typing at a terminal gets no progress line drawn over what they type.
    const bool interactive = args_.input == "-" && is_terminal(0);
    const bool show_progress = !args_.quiet && is_terminal(2) && !interactive;
    Progress progress(show_progress, show_progress ? count_lines(args_.input) : std::nullopt);
    try {
      translate_all(reader, prefix_reader ? &*prefix_reader : nullptr, lines, output, attention ? &*attention : nullptr,
                    progress);
    } catch (...) {
      progress.finish();
      reader.print_warnings(stderr, "attend translate");
      lines.print_warnings(stderr);
      throw;
    }
    progress.finish();
    reader.print_warnings(stderr, "attend translate");
    lines.print_warnings(stderr);
    out.commit();
    if (attention_out) attention_out->commit();
    if (attention_heads_) attention_heads_->finish(reader.lines_read());
    if (!args_.quiet) print_summary(progress.seconds());
  } catch (...) {
    out.abandon(output.written(), "attend translate");
    if (attention_out) attention_out->abandon(attention->written(), "attend translate");
    throw;
  }
  return 0;
}

void Translation::translate_all(LineReader& reader, LineReader* prefix_reader, SourceLines& lines, OrderedOutput& output,
                                OrderedOutput* attention, Progress& progress) {
  for (std::size_t chunk = kFirstChunkLines;; chunk = std::min(chunk * 2, kMaxChunkLines)) {
    const std::uint64_t first = reader.lines_read();
    std::vector<std::string> text = reader.read(chunk, false, kMaxChunkBytes);
    if (text.empty()) break;
    const std::vector<std::uint64_t> cut = reader.cut_lines();
    std::vector<std::string> prefix_text;
    if (prefix_reader != nullptr) {
      prefix_text = prefix_reader->read(text.size(), true);
      if (prefix_text.size() < text.size()) {  // translate the lines that have one, then stop
        const std::uint64_t missing = first + prefix_text.size() + 1;
        text.resize(prefix_text.size());
        if (!text.empty()) translate_chunk(text, prefix_text, cut, first, lines, output, attention, progress);
        throw attend::Error(prefix_reader->label() + " ends at line " + std::to_string(missing - 1) +
                            ": input line " + std::to_string(missing) + " has no target prefix");
      }
    }
    translate_chunk(text, prefix_text, cut, first, lines, output, attention, progress);
  }
  if (prefix_reader != nullptr && !prefix_reader->read(1).empty())
    std::fprintf(stderr, "attend translate: warning: %s has more lines than the input\n", prefix_reader->label().c_str());
}

// A forced prefix must fit in the output (a biasing one, --prefix-bias-beta, need not):
// checked here, per line, so that the message names the line and every line before it is
// still translated.
void Translation::check_prefix(const std::vector<std::int32_t>& prefix, std::uint64_t number) const {
  if (options_.prefix_bias_beta == 0 && static_cast<std::int64_t>(prefix.size()) > max_length_)
    throw attend::Error(at_line(number) + "the target prefix has " + std::to_string(prefix.size()) +
                        " tokens, more than the " + std::to_string(max_length_) + " a translation may have (--max-length)");
}

// Input lines first + 1 … first + text.size(). Every line, an empty one included, goes
// to the translator at its position in the input, so that sentence i of the call is
// input line first + i: a sampled line draws with its line number, whatever chunk or
// batch it arrives in (an empty source costs nothing there). A line rejected (under
// --strict, or a prefix that cannot be honoured) stops the run, but only after every
// line before it has been translated and written.
void Translation::translate_chunk(const std::vector<std::string>& text, const std::vector<std::string>& prefix_text,
                                  const std::vector<std::uint64_t>& cut, std::uint64_t first, SourceLines& lines,
                                  OrderedOutput& output, OrderedOutput* attention, Progress& progress) {
  std::vector<std::vector<std::int32_t>> sources, prefixes;
  std::vector<bool> empty;  // per line of the chunk: it gets an empty line, whatever the translator says
  const bool prefixed = !prefix_text.empty() || !common_prefix_.empty();
  std::exception_ptr rejected;
  for (std::size_t i = 0; i < text.size() && !rejected; ++i) {
    const std::uint64_t line = first + i;
    try {
      const bool read_in_part = std::find(cut.begin(), cut.end(), line + 1) != cut.end();
      auto ids = lines.encode(text[i], line + 1, read_in_part);
      std::vector<std::int32_t> prefix;
      if (ids) {
        prefix = prefix_text.empty() ? common_prefix_ : lines.encode_prefix(prefix_text[i], line + 1);
        check_prefix(prefix, line + 1);
        totals_.source_tokens += ids->size();
      }
      empty.push_back(!ids);
      sources.push_back(ids ? std::move(*ids) : std::vector<std::int32_t>{});
      if (prefixed) prefixes.push_back(std::move(prefix));
    } catch (const attend::Error&) {
      rejected = std::current_exception();
    }
  }
  // A sentence whose scores were not finite gets an empty line and a warning; under
  // --strict the run stops there, after the lines before it.
  std::uint64_t first_non_finite = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::pair<std::size_t, attend::TranslationResult>> chosen;  // --attention-all's lines of the chunk
  translator_->translate_ids(sources, options_, prefixes,
                             [&](std::size_t line, attend::TranslationResult&& r) {
                               const std::size_t i = line - first;
                               if (empty[i]) {  // empty in, empty out
                                 output.put(line, output_for(line, nullptr));
                                 if (attention) attention->put(line, attention_for(line, {}, nullptr));
                                 if (attention_heads_ && attention_heads_->wants(line)) chosen.emplace_back(i, std::move(r));
                                 ++totals_.lines, ++totals_.empty;
                                 return;
                               }
                               if (r.non_finite) {
                                 lines.warnings().add(kNonFinite, line + 1,
                                                      "the model produced NaN or infinite scores (an overflow in its "
                                                      "weights or activations): the output line is empty");
                                 first_non_finite = std::min<std::uint64_t>(first_non_finite, line);
                                 if (args_.strict) return;  // nothing from here on is written
                               }
                               totals_.generated += r.hypotheses[0].ids.size();
                               output.put(line, output_for(line, &r));
                               if (attention) attention->put(line, attention_for(line, sources[i], &r));
                               if (attention_heads_ && attention_heads_->wants(line)) chosen.emplace_back(i, std::move(r));
                               progress.update(++totals_.lines, totals_.generated);
                             },
                             first);
  progress.update(totals_.lines, totals_.generated);
  std::sort(chosen.begin(), chosen.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [i, r] : chosen) write_attention_heads(first + i, text[i], sources[i], empty[i] ? nullptr : &r);
  if (args_.strict && first_non_finite != std::numeric_limits<std::uint64_t>::max())
    throw attend::Error(at_line(first_non_finite + 1) + "the model produced NaN or infinite scores (--strict)");
  if (rejected) std::rethrow_exception(rejected);
}

// The limit sources are cut to, as the translator applies it: --max-input-length where
// it is the lower (0: none), else the model's positions.
SourceLimit Translation::source_limit() const {
  const std::int64_t model_limit = translator_->max_source_length();
  const std::int64_t asked = options_.max_input_length;
  if (asked > 0 && asked <= model_limit) return {asked, "--max-input-length " + std::to_string(asked)};
  return {model_limit, "the model's limit of " + std::to_string(model_limit) + " source tokens"};
}

void Translation::print_summary(double seconds) const {
  const double s = std::max(seconds, 1e-9);
  const Totals& t = totals_;
  std::fprintf(stderr,
               "attend translate: %llu lines (%llu empty) in %.2f s: %.1f lines/s, %llu source tokens (%.0f/s), "
               "%llu generated tokens (%.0f/s), peak RSS %.0f MiB\n",
               static_cast<unsigned long long>(t.lines), static_cast<unsigned long long>(t.empty), s, t.lines / s,
               static_cast<unsigned long long>(t.source_tokens), t.source_tokens / s,
               static_cast<unsigned long long>(t.generated), t.generated / s, peak_rss_mib());
}

}  // namespace

Command add_translate_command(CLI::App& parent) {
  auto args = std::make_shared<TranslateArgs>();
  CLI::App* app = parent.add_subcommand("translate", "Translate lines of text (or tokens, or ids), in input order");
  app->footer(
      "Output: one line per input line. --scores: 'SCORE ||| TEXT'. --n-best K: K lines per input,\n"
      "'INDEX ||| TEXT ||| SCORE' (INDEX: 0-based input line). Scores are log-probabilities, divided by\n"
      "length^penalty for beam search. Empty (or blank) input lines give empty output lines. Line breaks\n"
      "and control characters in a translation are escaped: \\n, \\r, \\xHH, \\u2028.\n");
  args->model.add_flags(*app, "");
  app->add_option("-i,--input", args->input, "Input file, one sentence per line ('-': stdin)")->capture_default_str();
  app->add_option("-o,--output", args->output, "Output file ('-': stdout)")->capture_default_str();
  const auto formats = CLI::IsMember({"text", "tokens", "ids"});
  app->add_option("--input-format", args->input_format,
                  "text (SentencePiece), tokens (vocabulary tokens separated by spaces) or ids (integers, given "
                  "to the encoder as they are)")
      ->check(formats)->capture_default_str();
  app->add_option("--output-format", args->output_format, "text, tokens or ids (default: the input format)")->check(formats);
  app->add_option("--target-prefix", args->target_prefix, "Force every output to start with this (in the input format)");
  app->add_option("--target-prefix-file", args->target_prefix_file, "One forced target prefix per input line");
  args->decoding.add_to(*app);
  app->add_option("--attention", args->attention_file,
                  "Write each line's attention (best hypothesis: target x source tokens) to FILE as JSON lines "
                  "{line, source, target, score, attention}; tools/plot_attention.py draws them");
  app->add_option("--attention-all", args->attention_all,
                  "Write every layer and head's attention (encoder self, decoder self, cross; best hypothesis) of the "
                  "--attention-lines to PATH: a directory of line-N.npz, or one FILE.npz for one line; "
                  "tools/plot_attention.py and tools/attention_view.py draw them");
  app->add_option("--attention-lines", args->attention_lines,
                  "The 0-based input lines --attention-all writes: 3,7 or 0-4,9 or all");
  app->add_flag("--scores", args->scores, "Prefix each output with its score");
  app->add_flag("--strict", args->strict, "Reject invalid UTF-8, out-of-vocabulary ids and over-long lines instead of repairing them");
  app->add_flag("-q,--quiet", args->quiet, "No progress bar and no summary");
  app->add_option("-t,--threads", args->threads, "Compute threads in all (0: one per core)")->check(threads_range())->capture_default_str();
  app->add_option("--inter-threads", args->inter_threads, "Batches translated at once (0, with --intra-threads 0: as many as the work has, up to the threads)")->check(threads_each_range())->capture_default_str();
  app->add_option("--intra-threads", args->intra_threads, "Compute threads per batch (0: threads / inter-threads)")->check(threads_each_range())->capture_default_str();
  app->add_option("--max-batch-size", args->max_batch_size, "Sentences per batch")->check(batch_size_range())->capture_default_str();
  app->add_option("--max-batch-tokens", args->max_batch_tokens, "Padded source tokens per batch (0: no cap)")->check(batch_tokens_range(0))->capture_default_str();
  return {app, [args, app] {
            args->decoding.finish_parsing(*app);
            return Translation(*args).run();
          }};
}

}  // namespace attend::cli
