// The C++ API of encoder-only models (include/attend/encoder.hpp) over the runtime's
// EncoderRunner, with the model's Hugging Face tokenizer (text/hf_tokenizer.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "attend/attend.hpp"
#include "attend/ops/isa.hpp"
#include "attend/ops/parallel_tasks.hpp"
#include "attention_maps.hpp"
#include "encoder/encoder_runner.hpp"
#include "encoder_internals.hpp"
#include "formats/encoder_io.hpp"
#include "text/vocabulary.hpp"
#include "text/hf_tokenizer.hpp"
#include "option_limits.hpp"
#include "thread_split.hpp"

namespace attend {

struct Encoder::State {
  std::string directory;
  std::shared_ptr<const runtime::EncoderModel> model;
  std::unique_ptr<runtime::EncoderRunner> runner;
  ThreadSplit split;
  std::optional<runtime::HfTokenizer> tokenizer;  // tokenizer.json
  std::string tokenizer_path;
  std::optional<runtime::Vocabulary> vocabulary;  // CTranslate2's vocabulary.{json,txt}
  std::int64_t max_length = 0;

  const runtime::EncoderConfig& config() const { return model->config(); }
};

namespace {

runtime::LoadOptions load_options(const EncoderOptions& o) {
  runtime::LoadOptions r;
  r.compute_type = o.compute_type;
  if (!o.isa.empty()) r.isa = ops::parse_isa(o.isa);
  if (!ops::isa_available(r.isa)) throw Error("this CPU cannot run " + o.isa + " kernels");
  return r;
}

// Scores from logits as the model's head defines them (encoder_config.hpp).
Classification classification(std::vector<float> logits, const runtime::EncoderConfig& c) {
  Classification out;
  out.scores = logits;
  if (c.scores == runtime::ScoreFunction::softmax) {
    const float top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float& s : out.scores) sum += (s = std::exp(s - top));
    for (float& s : out.scores) s = static_cast<float>(s / sum);
  } else if (c.scores == runtime::ScoreFunction::sigmoid) {
    for (float& s : out.scores) s = 1.0f / (1.0f + std::exp(-s));
  }
  out.label = static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  out.label_name = out.label < static_cast<std::int32_t>(c.labels.size()) ? c.labels[out.label] : std::to_string(out.label);
  out.score = out.scores[out.label];
  out.logits = std::move(logits);
  return out;
}

const runtime::EncoderRunner& runner_of(const std::unique_ptr<Encoder::State>& s) { return *s->runner; }

}  // namespace

Encoder::Encoder(const std::string& directory, const EncoderOptions& options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.directory = directory;
  runtime::HfEncoderFiles files = runtime::read_encoder(directory);
  if (!options.pooling.empty()) files.config.pooling = {runtime::parse_pooling(options.pooling)};
  s.tokenizer_path = files.tokenizer;
  if (!files.vocabulary.empty()) s.vocabulary = runtime::Vocabulary::from_file(files.vocabulary, "[UNK]");
  // Before the model: the heap its parse frees goes back to the system with the model's
  // (return_freed_memory), and a bad tokenizer.json is named before the weights load.
  if (!s.tokenizer_path.empty()) s.tokenizer = runtime::HfTokenizer::load(s.tokenizer_path, files.config.family);
  s.model = runtime::EncoderModel::build(std::move(files.config), std::move(files.tensors), std::move(files.report),
                                         load_options(options));
  limits::check_encoder(options, s.config().max_positions());
  s.max_length = options.max_length > 0 ? options.max_length : s.config().max_length();
  s.split = split_threads(options.threads, options.inter_threads, options.intra_threads);
  runtime::EncoderRunnerConfig rc;
  rc.threads = s.split.intra, rc.inter_threads = s.split.inter;
  rc.max_batch_size = options.max_batch_size;
  // Ids run up to the positions (as CTranslate2's forward_batch), or the max_length asked
  // for; sentence-transformers' max_seq_length cuts texts only.
  rc.max_length = options.max_length > 0 ? s.max_length : s.config().max_positions();
  rc.max_batch_tokens = std::max(options.max_batch_tokens, rc.max_length);
  s.runner = std::make_unique<runtime::EncoderRunner>(s.model, rc);
}

Encoder::~Encoder() = default;
Encoder::Encoder(Encoder&&) noexcept = default;
Encoder& Encoder::operator=(Encoder&&) noexcept = default;

namespace {

// A text, or a pair (second non-null), through the model's tokenizer.
TokenizedText tokenized(const Encoder::State& s, const std::string& first, const std::string* second) {
  if (!s.tokenizer)
    throw Error(s.directory + ": no tokenizer (tokenizer.json, vocab.txt or sentencepiece.bpe.model) — give token ids instead");
  runtime::TokenizeOptions o;
  o.max_length = s.max_length;
  runtime::Encoding e = second ? s.tokenizer->encode_pair(first, *second, o) : s.tokenizer->encode(first, o);
  TokenizedText t;
  t.ids = std::move(e.ids), t.type_ids = std::move(e.type_ids), t.tokens = std::move(e.tokens);
  t.sequence_ids = std::move(e.sequence_ids);
  t.truncated = e.truncated;
  t.invalid_utf8 = e.invalid_utf8;
  return t;
}

// An id as the model's own token, for attention labels: CTranslate2's vocabulary where
// the directory has one (its ids are the model's), else tokenizer.json's; the decimal id
// where neither names it (an embedding row past the tokenizer's vocabulary).
std::string token_name(const Encoder::State& s, std::int32_t id) {
  if (s.vocabulary) return s.vocabulary->token(id);
  if (s.tokenizer && id >= 0 && id < s.tokenizer->vocab_size()) try {
      return s.tokenizer->id_to_token(id);
    } catch (const Error&) {  // an id tokenizer.json skips (its added tokens may leave gaps)
    }
  return std::to_string(id);
}

AttentionHeads heads_of(const Encoder::State& s, const std::vector<std::int32_t>& ids,
                        const std::vector<std::int32_t>& token_type_ids) {
  runtime::AttentionCapture capture = s.runner->trace_attention(ids, token_type_ids);
  AttentionHeads h;
  h.model = s.directory;
  h.source_ids = ids;
  h.source_type_ids = token_type_ids;
  for (const std::int32_t id : ids) h.source_tokens.push_back(token_name(s, id));
  h.encoder_self = maps_of(std::move(capture.encoder_self));
  return h;
}

AttentionHeads text_heads(const Encoder::State& s, std::vector<std::string> texts) {
  TokenizedText t = tokenized(s, texts[0], texts.size() > 1 ? &texts[1] : nullptr);
  AttentionHeads h = heads_of(s, t.ids, t.type_ids);
  h.source_tokens = std::move(t.tokens);  // the tokenizer's own strings for what it produced
  h.source_sequence_ids = std::move(t.sequence_ids);
  h.source_texts = std::move(texts);
  return h;
}

}  // namespace

AttentionHeads Encoder::attention_heads(const std::vector<std::int32_t>& ids,
                                       const std::vector<std::int32_t>& token_type_ids) const {
  return heads_of(*state_, ids, token_type_ids);
}

AttentionHeads Encoder::text_attention_heads(const std::string& text) const { return text_heads(*state_, {text}); }

AttentionHeads Encoder::text_attention_heads(const std::string& first, const std::string& second) const {
  return text_heads(*state_, {first, second});
}

std::string Encoder::input_problem(const std::vector<std::int32_t>& ids,
                                   const std::vector<std::int32_t>& token_type_ids) const {
  return state_->runner->problem(ids, token_type_ids);
}

TokenizedText Encoder::tokenize(const std::string& text) const { return tokenized(*state_, text, nullptr); }

std::vector<TokenizedText> Encoder::tokenize(const std::vector<std::string>& texts, const std::string& prompt) const {
  std::vector<TokenizedText> out(texts.size());
  // Contiguous shares, at least kTextsPerThread texts each, on the encoder's threads:
  // a BERT text takes ~50 µs, which on one thread was 3% of a 2-thread embed's time,
  // the other thread idle. A share stops at its first error; the lowest share's is
  // rethrown, which is the first failing text's, as one thread would have thrown.
  constexpr std::size_t kTextsPerThread = 16;
  const auto threads = static_cast<std::size_t>(std::max(1, state_->split.inter * state_->split.intra));
  const int nt = static_cast<int>(std::clamp<std::size_t>(texts.size() / kTextsPerThread, 1, threads));
  ops::parallel_tasks(nt, [&](int t) {
    const std::size_t begin = texts.size() * t / nt, end = texts.size() * (t + 1) / nt;
    for (std::size_t i = begin; i < end; ++i)
      out[i] = prompt.empty() ? tokenized(*state_, texts[i], nullptr) : tokenized(*state_, prompt + texts[i], nullptr);
  });
  return out;
}

TokenizedText Encoder::tokenize_pair(const std::string& first, const std::string& second) const {
  return tokenized(*state_, first, &second);
}

std::int32_t Encoder::token_to_id(const std::string& token) const {
  if (state_->vocabulary) return state_->vocabulary->id_or_unk(token);
  if (state_->tokenizer) {  // an unknown token is the unknown token, as CTranslate2 maps it
    const std::int32_t id = state_->tokenizer->token_to_id(token);
    if (id >= 0) return id;
    if (const std::int32_t unk = state_->tokenizer->unknown_id(); unk >= 0) return unk;
    for (const char* unk : {"<unk>", "[UNK]"})  // a BPE model without one: the special token (CTranslate2's unk)
      if (const std::int32_t id = state_->tokenizer->token_to_id(unk); id >= 0) return id;
    throw Error("token '" + token + "' is not in " + state_->tokenizer_path + ", which has no unknown token");
  }
  throw Error(state_->directory + ": no vocabulary to look tokens up in");
}

std::string Encoder::prompt_text(const EmbedOptions& options) const {
  const runtime::EncoderConfig& c = state_->config();
  if (options.prompt) return *options.prompt;
  const std::string& name = options.prompt_name.empty() ? c.default_prompt_name : options.prompt_name;
  if (name.empty()) return {};
  if (const std::string* text = c.prompt(name)) return *text;
  if (runtime::is_standard_prompt_name(name)) return {};  // as sentence-transformers: defined for every model
  std::string names;
  for (const auto& [n, text] : c.prompts) names += (names.empty() ? "'" : ", '") + n + "'";
  throw Error("prompt name '" + name + "' is not one of the model's prompts (" +
              (names.empty() ? "it has none: config_sentence_transformers.json" : names) + ")");
}

std::vector<std::vector<float>> Encoder::embed(const std::vector<std::string>& texts, const EmbedOptions& options,
                                               const EmbeddingCallback& on_embedding) const {
  const std::string prompt = prompt_text(options);
  std::vector<std::vector<std::int32_t>> ids;
  ids.reserve(texts.size());
  for (TokenizedText& t : tokenize(texts, prompt)) ids.push_back(std::move(t.ids));
  return embed_ids(ids, options, on_embedding);
}

namespace {

// embed_ids and classify_ids with each batch on `threads` compute threads (0: the
// encoder's split).
std::vector<std::vector<float>> embed_ids_on(const Encoder::State& s, const std::vector<std::vector<std::int32_t>>& ids,
                                             const EmbedOptions& options, const Encoder::EmbeddingCallback& on_embedding,
                                             int threads) {
  if (options.normalize < -1 || options.normalize > 1)
    throw OptionError("normalize", std::to_string(options.normalize), "must be -1 (as the model), 0 or 1");
  runtime::EncoderRunOptions o;
  o.heads.embedding = true;
  o.heads.normalize = options.normalize;
  o.threads = threads;
  std::vector<std::vector<float>> out;
  runtime::EncoderRunner::Sink sink;
  if (on_embedding) sink = [&](std::size_t i, runtime::SequenceOutput&& r) { on_embedding(i, std::move(r.embedding)); };
  for (auto& r : s.runner->run(ids, {}, o, sink)) out.push_back(std::move(r.embedding));
  return out;
}

std::vector<Classification> classify_ids_on(const Encoder::State& s, const std::vector<std::vector<std::int32_t>>& ids,
                                            const std::vector<std::vector<std::int32_t>>& token_type_ids, int threads) {
  const runtime::EncoderConfig& c = s.config();
  if (c.classifier == runtime::ClassifierHead::none)
    throw Error(s.directory + ": " + c.architecture + " has no classification head (a *ForSequenceClassification model has)");
  runtime::EncoderRunOptions o;
  o.heads.logits = true;
  o.threads = threads;
  std::vector<Classification> out;
  for (auto& r : s.runner->run(ids, token_type_ids, o)) out.push_back(classification(std::move(r.logits), c));
  return out;
}

}  // namespace

std::vector<std::vector<float>> Encoder::embed_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                                   const EmbedOptions& options,
                                                   const EmbeddingCallback& on_embedding) const {
  return embed_ids_on(*state_, ids, options, on_embedding, 0);
}

std::vector<EncoderOutput> Encoder::forward_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                                const std::vector<std::vector<std::int32_t>>& token_type_ids) const {
  runtime::EncoderRunOptions o;
  o.hidden = true;
  o.heads.pooler = state_->config().pooler;
  std::vector<EncoderOutput> out;
  for (auto& r : runner_of(state_).run(ids, token_type_ids, o)) {
    EncoderOutput e;
    e.length = r.length, e.hidden_size = state_->config().d_model;
    e.last_hidden_state = std::move(r.hidden);
    e.pooler_output = std::move(r.pooler);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<Classification> Encoder::classify_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                                  const std::vector<std::vector<std::int32_t>>& token_type_ids) const {
  return classify_ids_on(*state_, ids, token_type_ids, 0);
}

std::vector<Classification> Encoder::classify(const std::vector<std::string>& texts) const {
  std::vector<std::vector<std::int32_t>> ids, types;
  for (const std::string& t : texts) {
    TokenizedText e = tokenize(t);
    ids.push_back(std::move(e.ids)), types.push_back(std::move(e.type_ids));
  }
  return classify_ids(ids, types);
}

std::vector<Classification> Encoder::classify_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) const {
  std::vector<std::vector<std::int32_t>> ids, types;
  for (const auto& [a, b] : pairs) {
    TokenizedText e = tokenize_pair(a, b);
    ids.push_back(std::move(e.ids)), types.push_back(std::move(e.type_ids));
  }
  return classify_ids(ids, types);
}

EncoderInfo Encoder::encoder_info() const {
  const runtime::EncoderConfig& c = state_->config();
  EncoderInfo i;
  i.architecture = c.architecture;
  i.hidden_size = c.d_model, i.embedding_dim = c.embedding_dim(), i.max_length = state_->max_length;
  i.vocabulary_size = c.vocab_size;
  for (runtime::Pooling p : c.pooling) i.pooling.append(i.pooling.empty() ? "" : "+").append(runtime::pooling_name(p));
  i.normalize = c.normalize, i.has_pooler = c.pooler;
  i.has_tokenizer = state_->tokenizer.has_value();
  i.labels = c.labels;
  i.prompts = c.prompts;
  i.default_prompt_name = c.default_prompt_name;
  i.similarity = runtime::similarity_name(c.similarity);
  return i;
}

ModelInfo Encoder::info() const {
  const auto& r = state_->model->report();
  ModelInfo i;
  i.directory = state_->directory, i.format = r.format, i.file_bytes = r.file_bytes, i.parameters = r.parameters;
  i.config_json = state_->config().to_json();
  for (const auto& t : r.tensors) i.tensors.push_back({t.name, t.dtype, t.shape, t.elements});
  i.checks = r.checks;
  if (state_->tokenizer)
    i.text_tokenizer = std::filesystem::path(state_->tokenizer_path).filename().string() + ": " + state_->tokenizer->describe();
  if (state_->vocabulary) i.vocabulary = std::to_string(state_->vocabulary->size()) + " tokens";
  i.isa = ops::isa_name(state_->model->isa());
  i.compute_type = state_->model->compute_type().name;
  i.compute_type_reason = state_->model->compute_type().reason;
  return i;
}

std::string Encoder::plan_description() const { return state_->runner->plan().describe(); }
int Encoder::inter_threads() const { return state_->split.inter; }
int Encoder::intra_threads() const { return state_->split.intra; }
void Encoder::set_profiling(bool on) const { state_->runner->set_profiling(on); }
void Encoder::reset_profile() const { state_->runner->reset_statistics(); }
std::int64_t Encoder::tokens_processed() const { return state_->runner->counters().tokens; }

std::vector<EncoderStepProfile> Encoder::profile() const {
  const auto seconds = state_->runner->step_seconds();
  const auto costs = state_->runner->step_costs();
  const auto& steps = state_->runner->plan().steps();
  std::vector<EncoderStepProfile> out;
  for (size_t i = 0; i < steps.size() && i < seconds.size() && i < costs.size(); ++i)
    out.push_back({runtime::encoder_phase_name(steps[i].phase), runtime::encoder_step_kind_name(steps[i].kind), steps[i].name,
                   seconds[i], costs[i].quantize_seconds, costs[i].multiply_adds});
  return out;
}

bool is_encoder_model(const std::string& directory) { return runtime::is_encoder_directory(directory); }

const runtime::HfTokenizer* EncoderInternals::tokenizer(const Encoder& encoder) {
  return encoder.state_->tokenizer ? &*encoder.state_->tokenizer : nullptr;
}

std::vector<std::vector<float>> EncoderInternals::embed_ids(const Encoder& encoder,
                                                            const std::vector<std::vector<std::int32_t>>& ids,
                                                            const EmbedOptions& options, int threads) {
  return embed_ids_on(*encoder.state_, ids, options, {}, threads);
}

std::vector<Classification> EncoderInternals::classify_ids(const Encoder& encoder,
                                                           const std::vector<std::vector<std::int32_t>>& ids,
                                                           const std::vector<std::vector<std::int32_t>>& token_type_ids,
                                                           int threads) {
  return classify_ids_on(*encoder.state_, ids, token_type_ids, threads);
}

std::vector<int> EncoderInternals::idle_workspace_threads(const Encoder& encoder) {
  return encoder.state_->runner->idle_workspace_threads();
}

}  // namespace attend
