// attend bench: throughput of a model (a preset with random weights by default) on a
// synthetic or real workload: generated and source tokens/s, sentences/s, batch
// latency percentiles, peak RSS, and where the time goes by plan step.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "bench_workload.hpp"
#include "commands.hpp"
#include "encoder_breakdown.hpp"
#include "flag_checks.hpp"
#include "model_choice.hpp"
#include "process_stats.hpp"
#include "text_input.hpp"

namespace attend::cli {

// Sentences a bench pass holds, at most (in memory at once).
constexpr long long kMaxBenchSentences = 10'000'000;
namespace {

struct BenchArgs {
  ModelChoice model;
  std::string input, input_format, src_len = "10:50", machine_limits;
  std::int64_t sentences = 256, batch = 32, tgt_len = 48, beam = 1, warmup = 1, repeat = 1;
  int threads = 0, inter_threads = 0, intra_threads = 0;
  bool json = false, sentences_given = false;
};

struct Share {
  std::string phase, kind, name;
  int steps = 0;
  double seconds = 0;
};

// Resident memory on 2 MiB pages at the end of the run, and the kernel's THP mode: with
// "never" the weights stay on 4 KiB pages and decoding runs 5–15% slower.
void print_huge_pages(double mib, const std::string& mode) {
  std::printf("  on 2 MiB pages (MiB) %9.1f   (transparent huge pages: %s)\n", mib,
              mode.empty() ? "unknown" : mode == "never" ? "never — weights on 4 KiB pages, decoding slower" : mode.c_str());
}

double percentile(std::vector<double> values, double p) {  // nearest rank
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// Plan steps grouped across layers: "decoder gemm fc1" sums fc1 of every layer.
std::vector<Share> time_shares(const std::vector<attend::StepProfile>& profile) {
  std::map<std::string, Share> groups;
  for (const auto& p : profile) {
    const std::string role = p.name.substr(p.name.rfind('.') + 1);
    Share& s = groups[p.phase + " " + p.kind + " " + role];
    s.phase = p.phase, s.kind = p.kind, s.name = role;
    ++s.steps;
    s.seconds += p.seconds;
  }
  std::vector<Share> out;
  for (auto& [key, share] : groups) out.push_back(share);
  std::sort(out.begin(), out.end(), [](const Share& a, const Share& b) { return a.seconds > b.seconds; });
  return out;
}

// An encoder-only model (attend::Encoder): sentences embedded in batches formed by
// tokens (packed, sorted by length), sentences/s and tokens/s, where the time goes.
// With --input, each timed pass tokenizes the lines too (as `attend embed` does).
int run_encoder_bench(const BenchArgs& args) {
  const LengthRange lengths = parse_length_range(args.src_len);
  attend::EncoderOptions o;
  o.isa = args.model.isa, o.compute_type = args.model.compute_type;
  o.threads = args.threads, o.inter_threads = args.inter_threads, o.intra_threads = args.intra_threads;
  o.max_batch_size = args.batch;
  o.max_batch_tokens = 1 << 20;  // batches by --batch sentences, as sentence-transformers forms them
  const auto load_start = std::chrono::steady_clock::now();
  const attend::Encoder encoder(args.model.directory, o);
  const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  const attend::EncoderInfo info = encoder.encoder_info();
  Sentences sentences;
  std::vector<std::string> lines;  // --input: tokenized again in each timed pass
  if (args.input.empty()) {
    if (lengths.max > info.max_length)
      throw UsageError("--src-len " + args.src_len + ": at most the model's " + std::to_string(info.max_length) + " tokens");
    std::mt19937_64 rng(args.model.seed);
    std::uniform_int_distribution<std::int64_t> length(lengths.min, lengths.max);
    std::uniform_int_distribution<std::int32_t> id(0, static_cast<std::int32_t>(info.vocabulary_size - 1));
    for (std::int64_t i = 0; i < args.sentences; ++i) {
      std::vector<std::int32_t> s(static_cast<size_t>(length(rng)));
      for (auto& t : s) t = id(rng);
      sentences.push_back(std::move(s));
    }
  } else {
    LineReader reader(args.input, "input");
    for (std::vector<std::string> read; !(read = reader.read(4096)).empty();)
      for (std::string& line : read)
        if (!args.sentences_given || static_cast<std::int64_t>(lines.size()) < args.sentences)
          lines.push_back(std::move(line));
    for (const std::string& line : lines) sentences.push_back(encoder.tokenize(line).ids);
  }
  std::string no_peak_why = "no --machine-limits (the JSON of bench/machine_limits --json)";
  std::optional<ArithmeticPeak> peak;
  if (!args.machine_limits.empty()) {
    const attend::ModelInfo m = encoder.info();
    peak = read_machine_limits(args.machine_limits, m.isa, m.compute_type, no_peak_why);
  }
  std::int64_t tokens = 0;
  for (const auto& s : sentences) tokens += static_cast<std::int64_t>(s.size());
  for (std::int64_t i = 0; i < args.warmup; ++i)
    encoder.embed_ids(Sentences(sentences.begin(), sentences.begin() + std::min<std::ptrdiff_t>(args.batch, sentences.size())));
  encoder.reset_profile();
  encoder.set_profiling(true);
  double tokenize_seconds = 0, model_seconds = 0;
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  for (std::int64_t pass = 0; pass < args.repeat; ++pass) {
    auto t0 = std::chrono::steady_clock::now();
    if (!lines.empty()) {
      std::vector<attend::TokenizedText> tokenized = encoder.tokenize(lines);  // as embed(texts) does
      for (size_t i = 0; i < lines.size(); ++i) sentences[i] = std::move(tokenized[i].ids);
      tokenize_seconds += since(t0);
      t0 = std::chrono::steady_clock::now();
    }
    encoder.embed_ids(sentences);
    model_seconds += since(t0);
  }
  const double seconds = tokenize_seconds + model_seconds;
  encoder.set_profiling(false);
  const auto steps = encoder.profile();
  std::vector<attend::StepProfile> profile;
  for (const auto& p : steps) profile.push_back({p.phase, p.kind, p.name, p.seconds});
  const auto shares = time_shares(profile);
  const double passes = static_cast<double>(args.repeat), worker_seconds = model_seconds * encoder.inter_threads();
  const attend::ModelInfo model = encoder.info();

  nlohmann::ordered_json j;
  j["model"] = args.model.directory, j["architecture"] = info.architecture, j["parameters"] = model.parameters;
  j["isa"] = model.isa, j["compute_type"] = model.compute_type, j["compute_type_reason"] = model.compute_type_reason;
  j["threads"] = encoder.inter_threads() * encoder.intra_threads();
  j["inter_threads"] = encoder.inter_threads(), j["intra_threads"] = encoder.intra_threads();
  j["workload"] = {{"sentences", sentences.size()}, {"source", args.input.empty() ? "synthetic ids, lengths " + args.src_len : args.input},
                   {"tokens", tokens}, {"batch", args.batch}, {"passes", args.repeat}};
  j["load_seconds"] = load_seconds;
  j["seconds"] = seconds;
  j["sentences_per_second"] = static_cast<double>(sentences.size()) * passes / seconds;
  j["tokens_per_second"] = static_cast<double>(tokens) * passes / seconds;
  j["peak_rss_mib"] = peak_rss_mib();
  j["huge_page_rss_mib"] = huge_page_rss_mib();
  j["transparent_huge_pages"] = transparent_huge_pages_mode();
  auto& breakdown = j["time_by_step"] = nlohmann::ordered_json::array();
  double profiled = 0;
  for (const auto& s : shares) {
    profiled += s.seconds;
    breakdown.push_back({{"phase", s.phase}, {"kind", s.kind}, {"name", s.name}, {"steps", s.steps}, {"seconds", s.seconds},
                         {"percent", 100 * s.seconds / worker_seconds}});
  }
  const double other = std::max(0.0, worker_seconds - profiled);
  breakdown.push_back({{"phase", "other"}, {"kind", "other"}, {"name", "batching and API overhead"},
                       {"steps", 0}, {"seconds", other}, {"percent", 100 * other / worker_seconds}});
  const int threads = encoder.inter_threads() * encoder.intra_threads();
  j["breakdown"] = breakdown_json(encoder_breakdown(steps, tokenize_seconds, model_seconds, encoder.inter_threads()), peak,
                                  no_peak_why, threads);
  if (args.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("attend bench: %s (%s) — %.1f M parameters, %s kernels, %s, %d thread(s): %d batch(es) at once × %d\n",
              args.model.directory.c_str(), info.architecture.c_str(), static_cast<double>(model.parameters) / 1e6,
              model.isa.c_str(), model.compute_type.c_str(), encoder.inter_threads() * encoder.intra_threads(),
              encoder.inter_threads(), encoder.intra_threads());
  std::printf("workload: %zu sentences (%s, %lld tokens), batches of %lld sorted by length, packed; %lld pass(es)\n",
              sentences.size(), j["workload"]["source"].get<std::string>().c_str(), static_cast<long long>(tokens),
              static_cast<long long>(args.batch), static_cast<long long>(args.repeat));
  std::printf("compute type: %s — %s\n", model.compute_type.c_str(), model.compute_type_reason.c_str());
  std::printf("model loaded in %.3f s\n\n", load_seconds);
  std::printf("  sentences/s         %10.1f\n", j["sentences_per_second"].get<double>());
  std::printf("  tokens/s            %10.0f\n", j["tokens_per_second"].get<double>());
  std::printf("  peak RSS (MiB)      %10.1f\n", peak_rss_mib());
  print_huge_pages(huge_page_rss_mib(), transparent_huge_pages_mode());
  std::printf("  measured time (s)   %10.2f\n\ntime by plan step (summed over layers, %% of the model's time × batches at once):\n",
              seconds);
  for (const auto& b : breakdown) {
    const double percent = b["percent"].get<double>();
    if (percent < 0.1) continue;
    std::printf("  %5.1f%%  %-10s %-17s %s\n", percent, b["phase"].get<std::string>().c_str(), b["kind"].get<std::string>().c_str(),
                b["name"].get<std::string>().c_str());
  }
  print_breakdown(j["breakdown"]);
  return 0;
}

int run_bench(const BenchArgs& args) {
  if (!args.model.directory.empty() && attend::is_encoder_model(args.model.directory)) return run_encoder_bench(args);
  const LengthRange lengths = parse_length_range(args.src_len);
  if (args.tgt_len < 1) throw UsageError("--tgt-len must be ≥ 1");

  const auto load_start = std::chrono::steady_clock::now();
  const attend::Model model = args.model.load();
  const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();

  // Checked before anything is sized from them: absurd values are usage errors.
  if (args.sentences > kMaxBenchSentences)  // (the flag's check says so too; a default may not)
    throw UsageError("--sentences " + std::to_string(args.sentences) + ": at most " + std::to_string(kMaxBenchSentences));
  if (lengths.max > model.max_positions())
    throw UsageError("--src-len " + args.src_len + ": at most the model's " + std::to_string(model.max_positions()) +
                     " positions");

  Sentences sentences;
  if (args.input.empty()) {
    sentences = synthetic_sentences(model, args.sentences, lengths, args.model.seed);
  } else {
    const Format format = parse_format(!args.input_format.empty() ? args.input_format
                                       : model.has_text_tokenizer() ? "text" : "ids");
    sentences = read_sentences(model, args.input, format, args.sentences_given ? args.sentences : 0);
  }
  std::int64_t longest = 1, source_tokens = 0;
  for (const auto& s : sentences) {
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(s.size()));
    source_tokens += static_cast<std::int64_t>(s.size());
  }

  attend::TranslatorOptions topt;
  topt.threads = args.threads, topt.inter_threads = args.inter_threads, topt.intra_threads = args.intra_threads;
  topt.max_batch_size = args.batch, topt.max_batch_tokens = 0;
  topt.max_source_length = longest, topt.max_target_length = args.tgt_len, topt.max_beam_size = args.beam;
  std::optional<attend::Translator> built;
  try {
    built.emplace(model, topt);
  } catch (const attend::Error& e) {  // limits the flags asked for that the model cannot take
    throw UsageError(e.what());
  }
  const attend::Translator& translator = *built;
  attend::TranslationOptions options;
  options.beam_size = args.beam, options.min_length = options.max_length = args.tgt_len;  // exactly tgt_len tokens

  const auto batches = length_sorted_batches(sentences, args.batch);
  // One call per batch gives each batch's latency; with several batches at once
  // (inter-threads > 1) a call must hold many batches, and only the pass is timed.
  // The split this workload runs: a split that follows the work puts min(batches, threads)
  // batches side by side, the threads shared among them.
  const int all_threads = translator.inter_threads() * translator.intra_threads();
  const int inter = translator.split_follows_work()
                        ? static_cast<int>(std::min<std::size_t>(translator.inter_threads(), batches.size()))
                        : translator.inter_threads();
  const int intra = translator.split_follows_work() ? std::max(1, all_threads / inter) : translator.intra_threads();
  auto run_batches = [&](std::size_t first, std::size_t count, std::int64_t& generated) {
    Sentences sources;
    for (std::size_t b = first; b < first + count; ++b)
      for (std::size_t i : batches[b % batches.size()]) sources.push_back(sentences[i]);
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = translator.translate_ids(sources, options);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& r : results) generated += static_cast<std::int64_t>(r.hypotheses.at(0).ids.size());
    return s;
  };

  std::int64_t ignored = 0;
  if (inter == 1) {
    for (std::int64_t i = 0; i < args.warmup; ++i) run_batches(static_cast<std::size_t>(i), 1, ignored);
  } else if (args.warmup > 0) {  // every worker warms up its own workspace
    run_batches(0, static_cast<std::size_t>(args.warmup * inter), ignored);
  }
  translator.reset_profile();
  translator.set_profiling(true);
  std::vector<double> latencies;
  std::int64_t generated = 0;
  double seconds = 0;
  for (std::int64_t pass = 0; pass < args.repeat; ++pass) {
    if (inter == 1) {
      for (std::size_t b = 0; b < batches.size(); ++b) latencies.push_back(run_batches(b, 1, generated));
    } else {
      seconds += run_batches(0, batches.size(), generated);
    }
  }
  translator.set_profiling(false);
  for (double s : latencies) seconds += s;
  const double passes = static_cast<double>(args.repeat);
  const auto info = model.info();
  const int threads = inter * intra;
  const auto shares = time_shares(translator.profile());
  double profiled = 0;
  for (const auto& s : shares) profiled += s.seconds;

  nlohmann::ordered_json j;
  j["model"] = args.model.describe();
  j["parameters"] = info.parameters;
  j["isa"] = info.isa;
  j["compute_type"] = info.compute_type;
  j["compute_type_reason"] = info.compute_type_reason;
  j["kv_cache_type"] = info.kv_cache_type;
  j["threads"] = threads;
  j["inter_threads"] = inter;
  j["intra_threads"] = intra;
  j["split_follows_work"] = translator.split_follows_work();
  j["workload"] = {{"sentences", sentences.size()},
                   {"source", args.input.empty() ? "synthetic" : args.input},
                   {"source_tokens", source_tokens},
                   {"source_length", args.input.empty() ? args.src_len : "from input"},
                   {"generated_tokens_per_sentence", args.tgt_len},
                   {"beam", args.beam},
                   {"batch", args.batch},
                   {"batches_per_pass", batches.size()},
                   {"warmup_batches", args.warmup},
                   {"passes", args.repeat}};
  j["load_seconds"] = load_seconds;
  j["arena_mib"] = static_cast<double>(translator.arena_bytes()) / (1 << 20);
  j["seconds"] = seconds;
  j["generated_tokens"] = generated;
  j["generated_tokens_per_second"] = static_cast<double>(generated) / seconds;
  j["source_tokens_per_second"] = static_cast<double>(source_tokens) * passes / seconds;
  j["sentences_per_second"] = static_cast<double>(sentences.size()) * passes / seconds;
  if (latencies.empty()) {
    j["batch_latency_ms"] = nullptr;  // batches overlapped (inter-threads > 1)
  } else {
    j["batch_latency_ms"] = {{"p50", 1e3 * percentile(latencies, 50)},
                             {"p90", 1e3 * percentile(latencies, 90)},
                             {"p99", 1e3 * percentile(latencies, 99)}};
  }
  j["peak_rss_mib"] = peak_rss_mib();
  j["huge_page_rss_mib"] = huge_page_rss_mib();
  j["transparent_huge_pages"] = transparent_huge_pages_mode();
  auto& breakdown = j["time_by_step"] = nlohmann::ordered_json::array();
  // Step times are summed over the workers: shares are of worker time (wall × inter).
  const double worker_seconds = seconds * inter;
  for (const auto& s : shares)
    breakdown.push_back({{"phase", s.phase}, {"kind", s.kind}, {"name", s.name}, {"steps", s.steps},
                         {"seconds", s.seconds}, {"percent", 100 * s.seconds / worker_seconds}});
  const double other = std::max(0.0, worker_seconds - profiled);
  breakdown.push_back({{"phase", "other"}, {"kind", "other"}, {"name", "batching and API overhead"}, {"steps", 0},
                       {"seconds", other}, {"percent", 100 * other / worker_seconds}});

  if (args.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("attend bench: %s — %.1f M parameters, %s kernels, %d thread(s): %d batch(es) at once × %d%s\n",
              args.model.describe().c_str(), static_cast<double>(info.parameters) / 1e6, info.isa.c_str(), threads, inter,
              intra, translator.split_follows_work() ? " (the split follows the work)" : "");
  std::printf("workload: %zu sentences (%s, %lld source tokens), %lld generated tokens each, %s, batches of %lld "
              "(%zu per pass), %lld warm-up batch(es), %lld pass(es)\n",
              sentences.size(), args.input.empty() ? ("synthetic, lengths " + args.src_len).c_str() : args.input.c_str(),
              static_cast<long long>(source_tokens), static_cast<long long>(args.tgt_len),
              args.beam == 1 ? "greedy" : ("beam " + std::to_string(args.beam)).c_str(), static_cast<long long>(args.batch),
              batches.size(), static_cast<long long>(args.warmup), static_cast<long long>(args.repeat));
  std::printf("compute type: %s — %s; attention caches %s\n", info.compute_type.c_str(), info.compute_type_reason.c_str(),
              info.kv_cache_type.c_str());
  std::printf("model loaded in %.2f s; plan arena %.1f MiB\n\n", load_seconds, j["arena_mib"].get<double>());
  std::printf("  generated tokens/s  %10.1f\n", j["generated_tokens_per_second"].get<double>());
  std::printf("  source tokens/s     %10.1f\n", j["source_tokens_per_second"].get<double>());
  std::printf("  sentences/s         %10.2f\n", j["sentences_per_second"].get<double>());
  if (!latencies.empty())
    std::printf("  batch latency (ms)  p50 %.1f   p90 %.1f   p99 %.1f   (%zu batches)\n", 1e3 * percentile(latencies, 50),
                1e3 * percentile(latencies, 90), 1e3 * percentile(latencies, 99), latencies.size());
  else
    std::printf("  batch latency       (%d batches overlapped: --inter-threads 1 measures it)\n", inter);
  std::printf("  peak RSS (MiB)      %10.1f\n", peak_rss_mib());
  print_huge_pages(huge_page_rss_mib(), transparent_huge_pages_mode());
  std::printf("  measured time (s)   %10.2f\n\ntime by plan step (summed over layers, %% of measured time × batches at once):\n", seconds);
  for (const auto& b : breakdown) {
    const double percent = b["percent"].get<double>();
    if (percent < 0.1) continue;
    std::printf("  %5.1f%%  %-8s %-17s %s\n", percent, b["phase"].get<std::string>().c_str(),
                b["kind"].get<std::string>().c_str(), b["name"].get<std::string>().c_str());
  }
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& parent) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* app = parent.add_subcommand("bench", "Measure translation throughput (default: the base preset, synthetic input)");
  app->footer(
      "Every sentence generates exactly --tgt-len tokens (end of sequence suppressed until then), so runs compare.\n"
      "Batches are formed as `attend translate` forms them: sentences sorted by source length.\n");
  args->model.add_flags(*app, "base");
  app->add_option("--input", args->input, "Benchmark these sentences instead of synthetic ones");
  app->add_option("--input-format", args->input_format, "text, tokens or ids (default: text if the model has a tokenizer)")
      ->check(CLI::IsMember({"text", "tokens", "ids"}));
  app->add_option("--sentences", args->sentences, "Sentences per pass (with --input: at most this many lines)")
      ->check(in_range(1, kMaxBenchSentences))->capture_default_str()->each([args](const std::string&) { args->sentences_given = true; });
  app->add_option("--batch", args->batch, "Sentences per batch")->check(batch_size_range())->capture_default_str();
  app->add_option("--src-len", args->src_len, "Synthetic source lengths MIN:MAX (uniform) or N")->capture_default_str();
  app->add_option("--tgt-len", args->tgt_len, "Generated tokens per sentence (exactly; at most the model's positions)")->check(at_least(1))->capture_default_str();
  app->add_option("--beam", args->beam, "Beam size (1: greedy)")->check(beam_range())->capture_default_str();
  app->add_option("-t,--threads", args->threads, "Compute threads in all (0: one per core)")->check(threads_range())->capture_default_str();
  app->add_option("--inter-threads", args->inter_threads, "Batches translated at once (0, with --intra-threads 0: as many as the work has, up to the threads)")->check(threads_each_range())->capture_default_str();
  app->add_option("--intra-threads", args->intra_threads, "Compute threads per batch (0: threads / inter-threads)")->check(threads_each_range())->capture_default_str();
  app->add_option("--warmup", args->warmup, "Untimed batches before measuring")->check(at_least(0))->capture_default_str();
  app->add_option("--repeat", args->repeat, "Timed passes over the workload")->check(at_least(1))->capture_default_str();
  app->add_option("--machine-limits", args->machine_limits,
                  "Encoders: the JSON of bench/machine_limits --json, for the fraction of the arithmetic's peak");
  app->add_flag("--json", args->json, "Print the results as one JSON object");
  return {app, [args] { return run_bench(*args); }};
}

}  // namespace attend::cli
