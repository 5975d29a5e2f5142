// The C++ API (include/attend/attend.hpp) over the runtime.
#include <algorithm>
#include <thread>

#include "attend/attend.hpp"
#include "attend/ops/isa.hpp"
#include "formats/ct2_model.hpp"
#include "formats/model_conversion.hpp"
#include "formats/model_io.hpp"
#include "model/random_model.hpp"
#include "text/blank_text.hpp"
#include "text/tokenizers.hpp"
#include "translator/translator.hpp"

namespace attend {

struct Model::State {
  std::shared_ptr<const runtime::Model> model;
  runtime::Tokenizers tokenizers;
  std::string directory;
};

struct Translator::State {
  Model model;
  TranslatorOptions options;
  std::unique_ptr<runtime::Translator> translator;
};

namespace {

runtime::LoadOptions runtime_options(const LoadOptions& o) {
  // TODO(issue 11): int8 and bfloat16 compute; until then only float32 arithmetic exists.
  if (o.compute_type != "default" && o.compute_type != "auto" && o.compute_type != "float32")
    throw Error("compute_type '" + o.compute_type + "' is not implemented yet (float32, default, auto)");
  runtime::LoadOptions r;
  if (!o.isa.empty()) r.isa = ops::parse_isa(o.isa);
  if (!ops::isa_available(r.isa)) throw Error("this CPU cannot run " + o.isa + " kernels");
  return r;
}

// max_length 0 is the translator's own limit, so default options suit any model, even
// one whose max_positions is below the usual 256.
// TODO(issue 12): CTranslate2's decoding options; each is refused until it is implemented.
void reject_unimplemented(const TranslationOptions& o) {
  const TranslationOptions d;
  auto refuse = [](const char* name) { throw Error(std::string("decoding option ") + name + " is not implemented yet"); };
  if (o.patience != d.patience) refuse("patience");
  if (o.coverage_penalty != d.coverage_penalty) refuse("coverage_penalty");
  if (o.repetition_penalty != d.repetition_penalty) refuse("repetition_penalty");
  if (o.no_repeat_ngram_size != d.no_repeat_ngram_size) refuse("no_repeat_ngram_size");
  if (o.disable_unk) refuse("disable_unk");
  if (!o.suppress_sequences.empty()) refuse("suppress_sequences");
  if (!o.end_token.empty()) refuse("end_token");
  if (o.return_end_token) refuse("return_end_token");
  if (o.prefix_bias_beta != d.prefix_bias_beta) refuse("prefix_bias_beta");
  if (o.return_attention) refuse("return_attention");
  if (o.return_alternatives) refuse("return_alternatives");
  if (o.min_alternative_expansion_prob != d.min_alternative_expansion_prob) refuse("min_alternative_expansion_prob");
  if (o.replace_unknowns) refuse("replace_unknowns");
}

runtime::DecodeOptions decode_options(const TranslationOptions& o, const runtime::Translator& translator) {
  reject_unimplemented(o);
  if (o.max_length < 0) throw Error("max_length = " + std::to_string(o.max_length) + ": must be ≥ 0 (0: the translator's limit)");
  runtime::DecodeOptions d;
  d.beam_size = o.beam_size, d.num_hypotheses = o.num_hypotheses, d.length_penalty = o.length_penalty;
  d.max_length = o.max_length > 0 ? o.max_length : translator.plan().limits().max_target_length;
  d.min_length = o.min_length;
  d.sampling.enabled = o.sampling, d.sampling.top_k = o.sampling_topk, d.sampling.top_p = o.sampling_topp;
  d.sampling.temperature = o.temperature, d.sampling.seed = o.seed;
  return d;
}

// The runtime's result as the API's, with text or tokens filled by `describe`.
template <class Describe>
TranslationResult to_api(runtime::SentenceResult&& r, const Describe& describe) {
  TranslationResult out;
  out.non_finite = r.non_finite;
  for (auto& h : r.hypotheses) {
    Hypothesis a;
    a.ids = std::move(h.tokens);
    a.score = h.score, a.log_prob = h.log_prob, a.finished = h.finished;
    a.token_log_probs = std::move(h.token_log_probs);
    describe(a);
    out.hypotheses.push_back(std::move(a));
  }
  return out;
}

}  // namespace

Model Model::load(const std::string& directory, const LoadOptions& options) {
  auto state = std::make_shared<State>();
  state->directory = directory;
  state->model = runtime::load_model(directory, runtime_options(options));
  std::string unk = "<unk>";
  if (runtime::detect_model_format(directory) == runtime::ModelFormat::ctranslate2)
    unk = runtime::read_ct2_model(directory).unk_token;
  state->tokenizers = runtime::Tokenizers::from_directory(directory, state->model->config(), unk);
  Model m;
  m.state_ = std::move(state);
  return m;
}

Model Model::preset(const std::string& name, std::uint64_t seed, const LoadOptions& options) {
  const runtime::ModelConfig c = runtime::preset_config(name);
  runtime::LoadReport report;
  report.origin = "preset " + name;
  report.format = "built-in preset '" + name + "' (random weights, seed " + std::to_string(seed) + ")";
  auto state = std::make_shared<State>();
  state->directory = report.origin;
  auto weights = runtime::random_weights(c, seed);
  weights->set_release_after_read(true);  // keep only the packed copy resident
  state->model = runtime::Model::build(c, std::move(weights), report, runtime_options(options));
  Model m;
  m.state_ = std::move(state);
  return m;
}

ModelInfo Model::info() const {
  const auto& r = state_->model->report();
  ModelInfo i;
  i.directory = state_->directory, i.format = r.format, i.file_bytes = r.file_bytes, i.parameters = r.parameters;
  i.config_json = state_->model->config().to_json();
  for (const auto& t : r.tensors) i.tensors.push_back({t.name, t.dtype, t.shape, t.elements});
  i.checks = r.checks;
  i.text_tokenizer = state_->tokenizers.describe_text();
  i.vocabulary = state_->tokenizers.describe_vocabulary();
  i.isa = ops::isa_name(state_->model->isa());
  i.compute_type = "float32";  // TODO(issue 11): the compute type chosen at load
  i.compute_type_reason = "the only compute type implemented";
  return i;
}

bool Model::has_text_tokenizer() const { return state_->tokenizers.has_text(); }
bool Model::has_vocabulary() const { return state_->tokenizers.has_vocabulary(); }
std::int64_t Model::max_positions() const { return state_->model->config().max_positions; }
std::int64_t Model::source_vocabulary_size() const { return state_->model->config().src_vocab_size; }
std::int64_t Model::target_vocabulary_size() const { return state_->model->config().tgt_vocab_size; }

Model::SpecialIds Model::special_ids() const {
  const auto& c = state_->model->config();
  // Without a source vocabulary (a preset) the config's unk, if the source side has it.
  const std::int32_t source_unk = state_->tokenizers.source_unk().value_or(c.unk_id < c.src_vocab_size ? c.unk_id : 0);
  return {c.pad_id, c.bos_id, c.eos_id, c.unk_id, c.decoder_start_id, source_unk};
}

namespace {
runtime::Side runtime_side(Model::Side side) {
  return side == Model::Side::source ? runtime::Side::source : runtime::Side::target;
}
}  // namespace

std::vector<std::int32_t> Model::encode_text(const std::string& line, Side side) const {
  return state_->tokenizers.encode_text(line, runtime_side(side));
}
std::vector<std::int32_t> Model::encode_tokens(const std::vector<std::string>& tokens, Side side) const {
  return state_->tokenizers.encode_tokens(tokens, runtime_side(side));
}
std::string Model::decode_text(const std::vector<std::int32_t>& ids) const { return state_->tokenizers.decode_text(ids); }
std::vector<std::string> Model::decode_tokens(const std::vector<std::int32_t>& ids) const {
  return state_->tokenizers.decode_tokens(ids);
}

bool Model::truncate_source(std::vector<std::int32_t>& ids, std::int64_t max_length) const {
  if (max_length < 0) throw Error("truncate_source: max_length must be ≥ 0");
  if (static_cast<std::int64_t>(ids.size()) <= max_length) return false;
  const auto& c = state_->model->config();
  const bool keep_eos = c.add_source_eos && max_length > 0 && ids.back() == c.eos_id;
  ids.resize(static_cast<std::size_t>(max_length));
  if (keep_eos) ids.back() = c.eos_id;
  return true;
}

bool Model::is_empty_source(const std::vector<std::int32_t>& ids) const {
  return runtime::is_empty_source(ids, state_->model->config());
}

Translator::Translator(const Model& model, const TranslatorOptions& options) : state_(std::make_unique<State>()) {
  state_->model = model;
  state_->options = options;
  runtime::TranslatorConfig c;
  // TODO(issue 11): several batches at once (inter_threads > 1).
  if (options.inter_threads > 1) throw Error("inter_threads > 1 is not implemented yet");
  if (options.inter_threads < 0 || options.intra_threads < 0) throw Error("inter_threads and intra_threads must be ≥ 0");
  c.threads = options.intra_threads > 0 ? options.intra_threads
              : options.threads > 0    ? options.threads
                                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.max_batch_size = options.max_batch_size;
  c.max_batch_tokens = options.max_batch_tokens;
  c.max_source_length = options.max_source_length > 0 ? options.max_source_length : model.max_positions();
  c.max_target_length = options.max_target_length;
  c.max_beam_size = options.max_beam_size;
  state_->translator = std::make_unique<runtime::Translator>(model.state_->model, c);
}

Translator::~Translator() = default;
Translator::Translator(Translator&&) noexcept = default;
Translator& Translator::operator=(Translator&&) noexcept = default;

const Model& Translator::model() const { return state_->model; }
const TranslatorOptions& Translator::options() const { return state_->options; }
std::int64_t Translator::max_source_length() const { return state_->translator->plan().limits().max_source_length; }
std::string Translator::plan_description() const { return state_->translator->plan().describe(); }
std::size_t Translator::arena_bytes() const { return state_->translator->plan().arena_bytes(); }

namespace {

// TranslationOptions::max_input_length: longer sources are cut to it, or to the
// translator's own limit if that is lower — keeping the end-of-sequence the model appends
// (Model::truncate_source), as the CLI cuts its over-long lines. 0: no cut, so a source
// over the translator's limit is an error.
const std::vector<std::vector<std::int32_t>>& within_input_limit(const std::vector<std::vector<std::int32_t>>& sources,
                                                                 const TranslationOptions& options, const Model& model,
                                                                 const runtime::Translator& translator,
                                                                 std::vector<std::vector<std::int32_t>>& storage) {
  if (options.max_input_length < 0)
    throw Error("max_input_length = " + std::to_string(options.max_input_length) + ": must be ≥ 0 (0: no limit of its own)");
  if (options.max_input_length == 0) return sources;
  const std::int64_t limit = std::min(options.max_input_length, translator.plan().limits().max_source_length);
  if (std::none_of(sources.begin(), sources.end(), [&](const auto& s) { return static_cast<std::int64_t>(s.size()) > limit; }))
    return sources;
  storage = sources;
  for (auto& s : storage) model.truncate_source(s, limit);
  return storage;
}

// Runs already-encoded sources and fills each hypothesis with `describe` (text, tokens
// or nothing), returning results or handing them to `on_result`.
template <class Describe>
std::vector<TranslationResult> run_translation(const Model& model, const runtime::Translator& translator,
                                               const std::vector<std::vector<std::int32_t>>& all_sources,
                                               const std::vector<std::vector<std::int32_t>>& prefixes,
                                               const TranslationOptions& options, const Describe& describe,
                                               const Translator::ResultCallback& on_result, std::size_t first_index) {
  std::vector<std::vector<std::int32_t>> cut;
  const auto& sources = within_input_limit(all_sources, options, model, translator, cut);
  runtime::Translator::ResultSink sink;
  if (on_result)
    sink = [&](std::size_t i, runtime::SentenceResult&& r) { on_result(first_index + i, to_api(std::move(r), describe)); };
  std::vector<TranslationResult> out;
  for (auto& r : translator.translate(sources, decode_options(options, translator), prefixes, first_index, sink))
    out.push_back(to_api(std::move(r), describe));
  return out;
}

template <class Input, class Encode>
std::vector<std::vector<std::int32_t>> encode_all(const std::vector<Input>& inputs, const Encode& encode) {
  std::vector<std::vector<std::int32_t>> ids;
  ids.reserve(inputs.size());
  for (const auto& input : inputs) ids.push_back(encode(input));
  return ids;
}

}  // namespace

std::vector<TranslationResult> Translator::translate_ids(const std::vector<std::vector<std::int32_t>>& sources,
                                                         const TranslationOptions& options,
                                                         const std::vector<std::vector<std::int32_t>>& prefixes,
                                                         const ResultCallback& on_result, std::size_t first_index) const {
  return run_translation(state_->model, *state_->translator, sources, prefixes, options, [](Hypothesis&) {}, on_result, first_index);
}

std::vector<TranslationResult> Translator::translate_text(const std::vector<std::string>& sources,
                                                          const TranslationOptions& options,
                                                          const std::vector<std::string>& prefixes,
                                                          const ResultCallback& on_result, std::size_t first_index) const {
  const auto& tok = state_->model.state_->tokenizers;
  return run_translation(
      state_->model, *state_->translator, encode_all(sources, [&](const std::string& s) { return tok.encode_text(s, runtime::Side::source); }),
      encode_all(prefixes, [&](const std::string& p) { return tok.encode_text(p, runtime::Side::target); }), options,
      [&](Hypothesis& h) { h.text = tok.decode_text(h.ids); }, on_result, first_index);
}

std::vector<TranslationResult> Translator::translate_tokens(const std::vector<std::vector<std::string>>& sources,
                                                            const TranslationOptions& options,
                                                            const std::vector<std::vector<std::string>>& prefixes,
                                                            const ResultCallback& on_result, std::size_t first_index) const {
  using Tokens = std::vector<std::string>;
  const auto& tok = state_->model.state_->tokenizers;
  return run_translation(
      state_->model, *state_->translator, encode_all(sources, [&](const Tokens& s) { return tok.encode_tokens(s, runtime::Side::source); }),
      encode_all(prefixes, [&](const Tokens& p) { return tok.encode_tokens(p, runtime::Side::target); }), options,
      [&](Hypothesis& h) { h.tokens = tok.decode_tokens(h.ids); }, on_result, first_index);
}

void Translator::set_profiling(bool on) const { state_->translator->set_profiling(on); }
void Translator::reset_profile() const { state_->translator->reset_statistics(); }

std::vector<StepProfile> Translator::profile() const {
  const auto& plan = state_->translator->plan();
  const auto seconds = state_->translator->step_seconds();
  std::vector<StepProfile> out;
  for (size_t i = 0; i < seconds.size(); ++i) {
    const auto& s = plan.steps()[i];
    std::string kind = s.kind == runtime::StepKind::linear ? "gemm" : runtime::step_kind_name(s.kind);
    out.push_back({s.phase == runtime::Phase::encoder ? "encoder" : "decoder", kind, s.name, seconds[i]});
  }
  out.push_back({"search", "search", "selection and bookkeeping", state_->translator->search_seconds()});
  return out;
}

bool is_blank_text(const std::string& text) { return runtime::is_blank_text(text); }

void convert_model(const std::string& input_directory, const std::string& output_directory) {
  runtime::convert_model(input_directory, output_directory);
}

const char* version() { return ATTEND_VERSION; }

}  // namespace attend
