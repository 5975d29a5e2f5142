#include "server/translation_service.hpp"

#include <sstream>

#include "thread_split.hpp"
#include "translator_internals.hpp"

namespace attend::server {

TranslationService::TranslationService(const ServedModel& spec, const runtime::RequestBatchLimits& limits)
    : ModelService(spec.name, spec.directory, limits), spec_(spec) {
  // --inter-threads given: that many lanes (as the encoder's, encoder_service.cpp), each
  // with its intra threads. Not given: one lane and the translator's own split, which
  // follows each call's work (a batch alone gets every thread) — with 16 one-sentence
  // clients of a Transformer-base int8 on 2 cores, two lanes of one thread left one idle
  // while the other decoded the batch of all 16 (1,900 generated tokens/s against 3,000–
  // 3,400 with one lane of two threads: docs/performance.md).
  const ThreadSplit split = split_threads(spec.translator.threads, spec.translator.inter_threads, spec.translator.intra_threads);
  if (spec.translator.inter_threads > 0) {
    set_lanes(split.inter, split.intra);
    spec_.translator.threads = spec_.translator.intra_threads = split.intra;
    spec_.translator.inter_threads = 1;
  } else {
    set_lanes(1, split.inter * split.intra);
  }
}

TranslationService::~TranslationService() { stop(); }

void TranslationService::load() {
  model_.emplace(Model::load(spec_.directory, spec_.load));
  translator_.emplace(*model_, spec_.translator);
}

std::string TranslationService::group_of(const TranslationOptions& o, bool prefixed) {
  if (o.sampling) return "solo " + std::to_string(++solo_);
  std::ostringstream key;
  key.precision(9);
#define ATTEND_KEY_OPTION(kind, name, ...) key << #name << '=' << o.name << ';';
  ATTEND_TRANSLATION_OPTIONS(ATTEND_KEY_OPTION)
#undef ATTEND_KEY_OPTION
  key << "prefixed=" << prefixed << ";suppress=";
  for (const auto& sequence : o.suppress_sequences) {
    for (const auto& t : sequence) key << t.size() << ':' << t;
    key << '|';
  }
  key << ";end=";
  if (o.end_token)
    for (const auto& t : *o.end_token) key << t.size() << ':' << t;
  else
    key << "default";
  return key.str();
}

void TranslationService::run_batch(const std::vector<std::shared_ptr<Job>>& jobs, int lane, int threads) {
  const auto& lead = static_cast<const TranslationJob&>(*jobs.front());
  std::vector<std::vector<std::int32_t>> sources, prefixes;
  std::int64_t tokens = 0;
  for (const auto& j : jobs) {
    const auto& job = static_cast<const TranslationJob&>(*j);
    for (const auto& s : job.sources) {
      tokens += static_cast<std::int64_t>(s.size());
      sources.push_back(s);
    }
    for (const auto& p : job.prefixes) prefixes.push_back(p);
  }
  const auto started = std::chrono::steady_clock::now();
  std::vector<TranslationResult> results;
  std::string error;
  try {
    // With lanes, the batch's threads (a lane's, or every idle lane's too); one lane:
    // the translator's own split, which follows the call's batches.
    results = TranslatorInternals::translate_ids(*translator_, sources, lead.options, prefixes, lanes() > 1 ? threads : 0);
  } catch (const std::exception& e) {
    error = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto sequences = static_cast<std::int64_t>(sources.size());
  const auto timing = batch_done(jobs, started, seconds, sequences, lane, threads);
  if (metrics()) {
    BatchRecord r;
    r.sequences = sequences, r.tokens = tokens, r.inference_seconds = seconds;
    for (const auto& t : timing) r.queue_seconds.push_back(t.queue_seconds);
    metrics()->batch(name(), r);
  }
  std::size_t at = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto job = std::static_pointer_cast<TranslationJob>(jobs[i]);
    TranslationOutcome outcome;
    outcome.error = error;
    outcome.timing = timing[i];
    const std::size_t n = job->sources.size();
    if (error.empty())
      for (std::size_t k = 0; k < n; ++k) outcome.results.push_back(std::move(results[at + k]));
    at += n;
    post([job, outcome = std::move(outcome)]() mutable { job->done(std::move(outcome)); });
  }
}

}  // namespace attend::server
