#include "encoder_input.hpp"

#include <charconv>

#include "commands.hpp"
#include "flag_checks.hpp"
#include "utf8.hpp"

namespace attend::cli {

void EncoderChoice::add_flags(CLI::App& app, bool pooling_flag) {
  app.add_option("-m,--model", directory,
                 "Encoder model directory: Hugging Face / sentence-transformers (BERT, RoBERTa, XLM-R, DistilBERT), or "
                 "CTranslate2's converted encoder")
      ->required();
  app.add_option("--isa", isa, "Kernels to use: avx512, avx2, sse2 (default: the best this CPU runs, or $ATTEND_ISA)")
      ->check(CLI::IsMember({"avx512_amx", "avx512_bf16", "avx512_vnni", "avx512", "avx2", "sse2"}));
  app.add_option("--compute-type", compute_type,
                 "Arithmetic of the matrix products: default (the model's stored type), auto (the fastest here), float32, "
                 "int8, bfloat16")
      ->capture_default_str()
      ->check(CLI::IsMember({"default", "auto", "float32", "int8", "int8_float32", "bfloat16", "int8_bfloat16"}));
  if (pooling_flag)
    app.add_option("--pooling", pooling, "Pooling of the embeddings (default: the model's 1_Pooling, else mean)")
        ->check(CLI::IsMember({"cls", "mean", "max", "mean_sqrt_len", "weightedmean", "lasttoken"}));
  app.add_option("--max-length", max_length,
                 "Tokens a line is cut to, special tokens included, at most the model's positions (0: the model's — "
                 "sentence-transformers' max_seq_length)")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("-t,--threads", threads, "Compute threads in all (0: one per core)")->check(threads_range())->capture_default_str();
  app.add_option("--inter-threads", inter_threads, "Batches run at once (0: chosen)")->check(threads_each_range())->capture_default_str();
  app.add_option("--intra-threads", intra_threads, "Compute threads per batch (0: threads / inter-threads)")
      ->check(threads_each_range())
      ->capture_default_str();
  app.add_option("--max-batch-size", max_batch_size, "Sequences per batch")->check(batch_size_range())->capture_default_str();
  app.add_option("--max-batch-tokens", max_batch_tokens,
                 "Tokens per batch (packed: no padding; cut further to 512 per compute thread)")
      ->check(batch_tokens_range(1))
      ->capture_default_str();
}

attend::Encoder EncoderChoice::load() const {
  attend::EncoderOptions o;
  o.isa = isa, o.compute_type = compute_type, o.pooling = pooling;
  o.threads = threads, o.inter_threads = inter_threads, o.intra_threads = intra_threads;
  o.max_length = max_length, o.max_batch_size = max_batch_size, o.max_batch_tokens = max_batch_tokens;
  return attend::Encoder(directory, o);
}

void PromptChoice::add_flags(CLI::App& app) {
  app.add_option("--prompt", prompt,
                 "Text put before every line, as sentence-transformers' encode(prompt=...) (\"\" for none; default: "
                 "the model's default prompt, config_sentence_transformers.json)");
  app.add_option("--prompt-name", prompt_name,
                 "The model's prompt to put before every line (config_sentence_transformers.json's prompts), as "
                 "encode(prompt_name=...)");
}

std::string PromptChoice::text(const attend::Encoder& encoder, const std::string& input_format) const {
  if (prompt && !prompt_name.empty()) throw UsageError("--prompt and --prompt-name exclude each other");
  if (input_format == "ids") {
    if (prompt || !prompt_name.empty()) throw UsageError("--prompt and --prompt-name apply to text, not to --input-format ids");
    return {};
  }
  attend::EmbedOptions o;
  o.prompt = prompt, o.prompt_name = prompt_name;
  try {
    return encoder.prompt_text(o);
  } catch (const attend::Error& e) {
    throw UsageError(std::string("--prompt-name: ") + e.what());
  }
}

EncoderInput::EncoderInput(const attend::Encoder& encoder, std::string format, bool pairs, std::string who, std::string prompt)
    : encoder_(encoder), format_(std::move(format)), pairs_(pairs), prompt_(std::move(prompt)),
      max_length_(encoder.encoder_info().max_length), warnings_(std::move(who)) {}

EncodedLine EncoderInput::encode(const std::string& raw, std::uint64_t number) {
  EncodedLine out;
  if (format_ == "ids") {
    for (std::size_t at = 0; at < raw.size();) {
      while (at < raw.size() && (raw[at] == ' ' || raw[at] == '\t')) ++at;
      if (at >= raw.size()) break;
      std::size_t end = at;
      while (end < raw.size() && raw[end] != ' ' && raw[end] != '\t') ++end;
      std::int32_t id = 0;
      const auto [p, ec] = std::from_chars(raw.data() + at, raw.data() + end, id);
      if (ec != std::errc() || p != raw.data() + end)
        throw attend::Error(at_line(number) + "'" + excerpt(raw.substr(at, end - at)) + "' is not a token id");
      out.ids.push_back(id);
      at = end;
    }
    if (out.ids.empty()) {  // the model's empty input, as an empty text line gives
      if (!encoder_.encoder_info().has_tokenizer)
        throw attend::Error(at_line(number) + "no token ids, and the model has no tokenizer to give its empty input");
      out.ids = encoder_.tokenize("").ids;
    }
    if (static_cast<std::int64_t>(out.ids.size()) > max_length_) {
      out.ids.resize(static_cast<size_t>(max_length_));
      if (truncated_++ == 0) first_truncated_ = number;
    }
    check(out, number);
    tokens_ += out.ids.size();
    return out;
  }
  // The tokenizer replaces invalid UTF-8 as Hugging Face's does (one U+FFFD per maximal
  // invalid subpart, as Python's decode(errors="replace")); the line is named here.
  if (const auto bad = first_invalid_utf8(raw))
    warnings_.add("lines with invalid UTF-8 (replaced by U+FFFD)", number,
                  "invalid UTF-8 at byte " + std::to_string(*bad + 1) + ", replaced by U+FFFD");
  const std::size_t tab = pairs_ ? raw.find('\t') : std::string::npos;
  out.texts = tab == std::string::npos ? std::vector<std::string>{prompt_ + raw}
                                       : std::vector<std::string>{raw.substr(0, tab), raw.substr(tab + 1)};
  attend::TokenizedText t =
      out.texts.size() == 1 ? encoder_.tokenize(out.texts[0]) : encoder_.tokenize_pair(out.texts[0], out.texts[1]);
  if (t.truncated && truncated_++ == 0) first_truncated_ = number;
  tokens_ += t.ids.size();
  out.ids = std::move(t.ids), out.types = std::move(t.type_ids), out.tokens = std::move(t.tokens);
  check(out, number);
  return out;
}

// A line the model cannot run is named here, before its chunk runs (the library would
// name its index within the chunk).
void EncoderInput::check(const EncodedLine& line, std::uint64_t number) const {
  if (const std::string why = encoder_.input_problem(line.ids, line.types); !why.empty())
    throw attend::Error(at_line(number) + why);
}

void EncoderInput::print_warnings(std::FILE* to) const {
  warnings_.summarize(to);
  if (truncated_ > 0)
    std::fprintf(to, "%s: warning: %llu line(s) longer than %lld tokens were truncated (first: line %llu)\n",
                 warnings_.who().c_str(), static_cast<unsigned long long>(truncated_), static_cast<long long>(max_length_),
                 static_cast<unsigned long long>(first_truncated_));
}

}  // namespace attend::cli
