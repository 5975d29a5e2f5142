#include "server/encoder_service.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "encoder_internals.hpp"
#include "server/api_error.hpp"
#include "text/hf_tokenizer.hpp"
#include "thread_split.hpp"

namespace attend::server {
namespace {

// sentence-transformers' prompts, read as its SentenceTransformer reads them; a file that
// is not what it should be is named.
void read_prompts(const std::string& directory, std::map<std::string, std::string>& prompts, std::string& default_name) {
  const std::filesystem::path path = std::filesystem::path(directory) / "config_sentence_transformers.json";
  std::ifstream in(path);
  if (!in) return;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": not valid JSON (" + e.what() + ")");
  }
  if (const auto p = j.find("prompts"); p != j.end() && p->is_object())
    for (const auto& [name, text] : p->items())
      if (text.is_string()) prompts[name] = text.get<std::string>();
  if (const auto d = j.find("default_prompt_name"); d != j.end() && d->is_string()) default_name = d->get<std::string>();
}

}  // namespace

EncoderService::EncoderService(const ServedModel& spec, const runtime::RequestBatchLimits& limits)
    : ModelService(spec.name, spec.directory, limits), spec_(spec), normalize_(spec.normalize) {
  // The model's split (as `attend embed` chooses it) becomes lanes: each runs its own
  // batches on an engine made with the threads of one (model_service.hpp says why).
  const ThreadSplit split = split_threads(spec.encoder.threads, spec.encoder.inter_threads, spec.encoder.intra_threads);
  // A lane's batch: at most four of the engine's own batches (512 tokens per thread,
  // encoder_runner.cpp: beyond that a batch runs no faster), so that lanes take turns
  // often and none idles long while another works through a large batch.
  set_lanes(split.inter, split.intra, std::int64_t{4} * 512 * split.intra);
  spec_.encoder.threads = spec_.encoder.intra_threads = split.intra;
  spec_.encoder.inter_threads = 1;
}

EncoderService::~EncoderService() { stop(); }

std::string EncoderService::kind() const {
  if (info_.labels.empty()) return "embedding";
  return info_.labels.size() == 1 ? "reranker" : "classifier";
}

void EncoderService::load() {
  encoder_.emplace(spec_.directory, spec_.encoder);
  info_ = encoder_->encoder_info();
  compute_type_ = encoder_->info().compute_type;
  tokenizer_ = EncoderInternals::tokenizer(*encoder_);
  if (tokenizer_) {
    for (std::int32_t id : tokenizer_->encode("").ids) special_ids_.insert(id);
    for (std::int32_t id : tokenizer_->encode_pair("", "").ids) special_ids_.insert(id);
  }
  read_prompts(spec_.directory, prompts_, default_prompt_name_);
}

// Not truncating, the tokenizer still stops one token past the limit: enough to refuse
// the input (422) without tokenizing a megabyte of text only to count it.
void EncoderService::tokenize_options(bool truncate, bool from_left, runtime::TokenizeOptions& o) const {
  o.max_length = info_.max_length + (truncate ? 0 : 1);
  o.truncate_left = truncate && from_left;
}

EncodedInput EncoderService::encoded(runtime::Encoding&& e, bool truncate, const std::string& what) const {
  if (!truncate && static_cast<std::int64_t>(e.ids.size()) > info_.max_length)
    throw too_long(what + " has more tokens than the model's limit of " + std::to_string(info_.max_length) +
                   " (send \"truncate\": true to cut it)");
  return {std::move(e.ids), std::move(e.type_ids), std::move(e.tokens)};
}

EncodedInput EncoderService::encode(const std::string& text, bool truncate, bool from_left, const std::string& what) const {
  if (!tokenizer_) throw bad_request("model '" + name() + "' has no tokenizer.json: send token ids instead of text");
  runtime::TokenizeOptions o;
  tokenize_options(truncate, from_left, o);
  return encoded(tokenizer_->encode(text, o), truncate, what);
}

EncodedInput EncoderService::encode_pair(const std::string& a, const std::string& b, bool truncate, bool from_left,
                                         const std::string& what) const {
  if (!tokenizer_) throw bad_request("model '" + name() + "' has no tokenizer.json: it cannot read text");
  runtime::TokenizeOptions o;
  tokenize_options(truncate, from_left, o);
  return encoded(tokenizer_->encode_pair(a, b, o), truncate, what);
}

EncodedInput EncoderService::check_ids(std::vector<std::int32_t> ids, bool truncate, bool from_left,
                                       const std::string& what) const {
  for (std::size_t k = 0; k < ids.size(); ++k)
    if (ids[k] >= info_.vocabulary_size)
      throw bad_request(what + ", token " + std::to_string(k) + ": id " + std::to_string(ids[k]) +
                        " is outside the model's vocabulary [0, " + std::to_string(info_.vocabulary_size) + ")");
  const auto limit = static_cast<std::size_t>(info_.max_length);
  if (ids.size() > limit) {
    if (!truncate)
      throw too_long(what + " has " + std::to_string(ids.size()) + " tokens, more than the model's limit of " +
                     std::to_string(limit) + " (send \"truncate\": true to cut it)");
    if (from_left) ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(limit));
    else ids.resize(limit);
  }
  return {std::move(ids), {}, {}};
}

EncodedInput EncoderService::tokens_of(const std::string& text, bool add_special_tokens, std::vector<bool>& special) const {
  if (!tokenizer_) throw bad_request("model '" + name() + "' has no tokenizer.json: it cannot tokenize text");
  runtime::TokenizeOptions o;
  o.add_special_tokens = add_special_tokens;
  runtime::Encoding e = tokenizer_->encode(text, o);
  special.assign(e.ids.size(), false);
  for (std::size_t k = 0; add_special_tokens && k < e.ids.size(); ++k) special[k] = special_ids_.count(e.ids[k]) > 0;
  return {std::move(e.ids), std::move(e.type_ids), std::move(e.tokens)};
}

std::string EncoderService::decode(const std::vector<std::int32_t>& ids, bool skip_special_tokens,
                                   const std::string& what) const {
  if (!tokenizer_) throw bad_request("model '" + name() + "' has no tokenizer.json: it cannot decode");
  for (std::size_t k = 0; k < ids.size(); ++k)
    if (ids[k] >= tokenizer_->vocab_size())
      throw bad_request("field '" + what + "', token " + std::to_string(k) + ": id " + std::to_string(ids[k]) +
                        " is outside the tokenizer's vocabulary [0, " + std::to_string(tokenizer_->vocab_size()) + ")");
  try {
    return tokenizer_->decode(ids, skip_special_tokens);
  } catch (const Error& e) {
    throw ApiError(422, "Tokenizer", e.what());
  }
}

namespace {

// The parts of one job coming back, each on some HTTP thread: the whole job's outcome,
// in order, once all are in.
class PartsJoin {
 public:
  PartsJoin(std::size_t parts, std::size_t inputs, bool embed, std::function<void(EncoderOutcome&&)> done)
      : parts_(static_cast<int>(parts)), left_(parts), done_(std::move(done)) {
    if (embed) whole_.embeddings.resize(inputs);
    else whole_.classes.resize(inputs);
  }

  void arrive(std::size_t first, EncoderOutcome&& part) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!part.error.empty()) whole_.error = part.error;
    for (std::size_t k = 0; k < part.embeddings.size(); ++k) whole_.embeddings[first + k] = std::move(part.embeddings[k]);
    for (std::size_t k = 0; k < part.classes.size(); ++k) whole_.classes[first + k] = std::move(part.classes[k]);
    // The log's timing: the part that waited and computed longest, the largest batch.
    whole_.timing.queue_seconds = std::max(whole_.timing.queue_seconds, part.timing.queue_seconds);
    whole_.timing.inference_seconds = std::max(whole_.timing.inference_seconds, part.timing.inference_seconds);
    whole_.timing.batch_sequences = std::max(whole_.timing.batch_sequences, part.timing.batch_sequences);
    whole_.timing.batch_requests = std::max(whole_.timing.batch_requests, part.timing.batch_requests);
    whole_.timing.lane = part.timing.lane;
    whole_.timing.threads = std::max(whole_.timing.threads, part.timing.threads);
    whole_.timing.parts = parts_;
    if (--left_ > 0) return;
    if (!whole_.error.empty()) whole_.embeddings.clear(), whole_.classes.clear();
    lock.unlock();
    done_(std::move(whole_));
  }

 private:
  std::mutex mutex_;
  const int parts_;
  std::size_t left_;
  EncoderOutcome whole_;
  std::function<void(EncoderOutcome&&)> done_;
};

}  // namespace

bool EncoderService::submit(std::shared_ptr<Job> job) {
  auto whole = std::static_pointer_cast<EncoderJob>(job);
  const std::size_t inputs = whole->ids.size();
  std::int64_t total = 0;
  for (const auto& s : whole->ids) total += std::max<std::int64_t>(1, static_cast<std::int64_t>(s.size()));
  // A part per lane, so that a lone request computes on every lane — and no part larger
  // than a batch, so that a request that times out or whose client leaves stops costing
  // compute after the batch that runs (its other parts are dropped from the queue).
  const std::int64_t batch_tokens = std::max<std::int64_t>(1, queue().max_batch_tokens());
  const std::size_t parts = std::min<std::size_t>(
      std::max<std::size_t>(static_cast<std::size_t>(lanes()), static_cast<std::size_t>((total + batch_tokens - 1) / batch_tokens)),
      inputs);
  if (parts <= 1) return ModelService::submit(std::move(job));
  auto join = std::make_shared<PartsJoin>(parts, inputs, whole->task == EncoderJob::Task::embed, std::move(whole->done));
  std::vector<std::shared_ptr<runtime::QueuedRequest>> queued;
  std::size_t at = 0;
  std::int64_t so_far = 0;
  for (std::size_t p = 0; p < parts; ++p) {
    auto part = std::make_shared<EncoderJob>();
    part->task = whole->task, part->normalize = whole->normalize, part->group = whole->group;
    part->exchange = whole->exchange, part->on_dropped = whole->on_dropped;
    const std::size_t first = at;
    // Contiguous inputs: the last part takes what is left; the others, one at least,
    // then the next while at least half of it fits under the p+1-th share of the tokens
    // (leaving an input for each part after).
    const std::int64_t bound = total * static_cast<std::int64_t>(p + 1) / static_cast<std::int64_t>(parts);
    const std::size_t end = p + 1 == parts ? inputs : inputs - (parts - 1 - p);
    while (at < end) {
      const std::int64_t t = std::max<std::int64_t>(1, static_cast<std::int64_t>(whole->ids[at].size()));
      if (at > first && p + 1 < parts && 2 * so_far + t > 2 * bound) break;
      part->ids.push_back(std::move(whole->ids[at]));
      if (at < whole->types.size()) part->types.push_back(std::move(whole->types[at]));
      part->tokens += static_cast<std::int64_t>(part->ids.back().size());
      so_far += t;
      ++at;
    }
    part->done = [join, first](EncoderOutcome&& o) { join->arrive(first, std::move(o)); };
    queued.push_back(std::move(part));
  }
  return queue().push_all(std::move(queued));
}

void EncoderService::run_batch(const std::vector<std::shared_ptr<Job>>& jobs, int lane, int threads) {
  const auto& lead = static_cast<const EncoderJob&>(*jobs.front());
  std::vector<std::vector<std::int32_t>> ids, types;
  std::int64_t tokens = 0;
  for (const auto& j : jobs) {
    const auto& job = static_cast<const EncoderJob&>(*j);
    for (const auto& s : job.ids) {
      tokens += static_cast<std::int64_t>(s.size());
      ids.push_back(s);
    }
    if (lead.task == EncoderJob::Task::classify)
      for (std::size_t k = 0; k < job.ids.size(); ++k) types.push_back(k < job.types.size() ? job.types[k] : std::vector<std::int32_t>{});
  }
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::vector<float>> embeddings;
  std::vector<Classification> classes;
  std::string error;
  try {
    if (lead.task == EncoderJob::Task::embed) {
      EmbedOptions o;
      o.normalize = lead.normalize;
      embeddings = EncoderInternals::embed_ids(*encoder_, ids, o, threads);
    } else {
      classes = EncoderInternals::classify_ids(*encoder_, ids, types, threads);
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto sequences = static_cast<std::int64_t>(ids.size());
  const auto timing = batch_done(jobs, started, seconds, sequences, lane, threads);
  if (metrics()) {
    BatchRecord r;
    r.sequences = sequences, r.tokens = tokens, r.inference_seconds = seconds;
    for (const auto& t : timing) r.queue_seconds.push_back(t.queue_seconds);
    metrics()->batch(name(), r);
  }
  std::size_t at = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto job = std::static_pointer_cast<EncoderJob>(jobs[i]);
    EncoderOutcome outcome;
    outcome.error = error;
    outcome.timing = timing[i];
    const std::size_t n = job->ids.size();
    if (error.empty()) {
      if (lead.task == EncoderJob::Task::embed)
        for (std::size_t k = 0; k < n; ++k) outcome.embeddings.push_back(std::move(embeddings[at + k]));
      else
        for (std::size_t k = 0; k < n; ++k) outcome.classes.push_back(std::move(classes[at + k]));
    }
    at += n;
    post([job, outcome = std::move(outcome)]() mutable { job->done(std::move(outcome)); });
  }
}

}  // namespace attend::server
