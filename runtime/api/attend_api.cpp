// The C++ API (include/attend/attend.hpp) over the runtime.
#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <thread>

#include "attend/attend.hpp"
#include "attention_maps.hpp"
#include "translator_internals.hpp"
#include "logging.hpp"
#include "option_limits.hpp"
#include "thread_split.hpp"
#include "attend/ops/isa.hpp"
#include "formats/ct2_model.hpp"
#include "formats/hf/generation_config.hpp"
#include "formats/hf/seq2seq.hpp"
#include "formats/model_conversion.hpp"
#include "formats/model_io.hpp"
#include "formats/model_kind.hpp"
#include "model/random_model.hpp"
#include "text/blank_text.hpp"
#include "text/tokenizers.hpp"
#include "text/vocabulary_map.hpp"
#include "translator/translator.hpp"

namespace attend {

struct Model::State {
  std::shared_ptr<const runtime::Model> model;
  runtime::Tokenizers tokenizers;
  std::string directory;
  bool transformers_rules = false;
  std::string rules_reason = "CTranslate2 (not a Hugging Face directory)";
  std::optional<runtime::GenerationDefaults> generation;  // Hugging Face directories
  std::optional<runtime::VocabularyMap> vocabulary_map;  // vmap.txt, for use_vmap
};

struct Translator::State {
  Model model;
  TranslatorOptions options;
  std::unique_ptr<runtime::Translator> translator;
  const runtime::VocabularyMap* vocabulary_map = nullptr;  // the model's, if it has one
};

namespace {

runtime::LoadOptions runtime_options(const LoadOptions& o) {
  runtime::LoadOptions r;
  r.compute_type = o.compute_type;
  r.kv_cache_type = o.kv_cache_type;
  // A bad name or an ISA this CPU lacks is a bad argument (OptionError), not a bad model.
  if (!o.isa.empty()) {
    try {
      r.isa = ops::parse_isa(o.isa);
    } catch (const Error& e) {
      throw OptionError("isa", "'" + o.isa + "'", e.what());
    }
  }
  if (!ops::isa_available(r.isa)) throw OptionError("isa", "'" + o.isa + "'", "this CPU cannot run these kernels");
  return r;
}

// (thread_split.hpp: the translator's split is the encoders' too.)
ThreadSplit split_threads(const TranslatorOptions& o) { return attend::split_threads(o.threads, o.inter_threads, o.intra_threads); }

// The options as the runtime takes them: token strings resolved to target ids. (use_vmap's
// candidates depend on the sentences: run_translation sets them.)
runtime::DecodeOptions decode_options(const TranslationOptions& o, const runtime::Tokenizers& tokens,
                                      const runtime::ModelConfig& config, const runtime::VocabularyMap* vocabulary_map,
                                      bool transformers_rules = false, std::int32_t forced_eos = -1) {
  runtime::DecodeOptions d;
  static_cast<TranslationOptions&>(d) = o;
  d.transformers_rules = transformers_rules;
  d.forced_eos_id = transformers_rules ? forced_eos : -1;
  if (o.use_vmap && vocabulary_map == nullptr)
    throw OptionError("use_vmap", "true", "the model has no vocabulary map (vmap.txt in its directory) to restrict the outputs with");
  auto id_of = [&](const char* option, const std::string& token) {
    if (token.empty()) throw OptionError(option, "''", "an empty token is not a token of the target vocabulary");
    if (!tokens.has_vocabulary())
      throw OptionError(option, "'" + token + "'", "the model has no vocabulary to look tokens up in");
    const auto id = tokens.find_token(token, runtime::Side::target);
    if (!id) throw OptionError(option, "'" + token + "'", "not a token of the target vocabulary");
    return *id;
  };
  if (o.end_token) {  // as CTranslate2: given tokens replace the model's end-of-sequence; none, no end token
    d.end_ids.emplace();
    for (const std::string& t : *o.end_token) d.end_ids->push_back(id_of("end_token", t));
  }
  for (const auto& sequence : o.suppress_sequences) {
    std::vector<std::int32_t> ids;
    for (const std::string& t : sequence) ids.push_back(id_of("suppress_sequences", t));
    if (!ids.empty()) d.suppress_ids.push_back(std::move(ids));  // an empty sequence suppresses nothing (CTranslate2)
  }
  return d;
}

// CTranslate2's truncation (Vocabulary::to_ids): cut to `max_length` ids, keeping an
// end-of-sequence last (or last but one, before a language code that follows it).
bool truncate_ids(std::vector<std::int32_t>& ids, std::int64_t max_length, std::int32_t eos) {
  if (max_length <= 0 || static_cast<std::int64_t>(ids.size()) <= max_length) return false;
  const auto n = static_cast<size_t>(max_length);
  if (ids.back() == eos) {
    ids[n - 1] = eos;
  } else if (ids.size() >= 2 && ids[ids.size() - 2] == eos && n >= 2) {
    ids[n - 2] = eos;
    ids[n - 1] = ids.back();
  }
  ids.resize(n);
  return true;
}

// What the caller gave for one sentence, to express results in its terms: the source
// tokens (for replace_unknowns) and how its attention columns map to theirs.
struct SourceView {
  std::vector<std::string> tokens;  // the caller's source tokens (replace_unknowns only)
  std::size_t leading = 0;          // encoder positions before the caller's first token (BOS)
  std::size_t trailing = 0;         // and after its last (EOS)
  std::size_t count = 0;            // the caller's tokens (attention rows end up this long)
};

// replace_unknowns (CTranslate2's replace_unknown_tokens): each unknown target token
// becomes the source token it attends to most (the first of equal maxima).
void replace_unknowns(Hypothesis& h, const SourceView& source, std::int32_t unk, const runtime::Tokenizers& tokenizers) {
  if (h.tokens.empty()) h.tokens = tokenizers.decode_tokens(h.ids);
  for (size_t t = 0; t < h.ids.size() && t < h.attention.size(); ++t) {
    if (h.ids[t] != unk || h.attention[t].empty()) continue;
    const auto& a = h.attention[t];
    const auto at = static_cast<size_t>(std::max_element(a.begin(), a.end()) - a.begin());
    if (at < source.tokens.size()) h.tokens[t] = source.tokens[at];
  }
}

// Every head's attention of `source` producing `target` (runtime::Translator::
// trace_attention), with the ids named as tokens.
AttentionHeads trace_heads(const runtime::Translator& translator, const runtime::Tokenizers& tokenizers,
                           std::span<const std::int32_t> source, std::span<const std::int32_t> target) {
  runtime::AttentionCapture capture = translator.trace_attention(source, target);
  AttentionHeads h;
  h.model = translator.model().report().origin;
  if (!source.empty()) {  // an empty source is not run: no tokens either
    h.source_ids.assign(source.begin(), source.end());
    h.target_ids.assign(target.begin(), target.end());
    if (!target.empty()) {
      h.decoder_input_ids.push_back(translator.model().config().decoder_start_id);
      h.decoder_input_ids.insert(h.decoder_input_ids.end(), target.begin(), target.end() - 1);
    }
  }
  auto named = [&](const std::vector<std::int32_t>& ids, bool source_side) {
    if (tokenizers.has_vocabulary()) return source_side ? tokenizers.source_tokens(ids) : tokenizers.decode_tokens(ids);
    std::vector<std::string> out;
    for (const std::int32_t id : ids) out.push_back(std::to_string(id));
    return out;
  };
  h.source_tokens = named(h.source_ids, true);
  h.target_tokens = named(h.target_ids, false);
  h.decoder_input_tokens = named(h.decoder_input_ids, false);
  h.encoder_self = maps_of(std::move(capture.encoder_self));
  h.decoder_self = maps_of(std::move(capture.decoder_self));
  h.cross = maps_of(std::move(capture.cross));
  return h;
}

// The tokens a decode produced along a hypothesis, its end token included (the steps
// return_attention_heads traces).
std::vector<std::int32_t> produced(const runtime::Hypothesis& h, bool end_token_kept) {
  std::vector<std::int32_t> out = h.tokens;
  if (h.finished && !end_token_kept) out.push_back(h.end_token);
  return out;
}

// The runtime's result as the API's: attention columns mapped to the caller's tokens,
// unknown tokens replaced if asked, then text or tokens filled by `describe`.
template <class Describe>
TranslationResult to_api(runtime::SentenceResult&& r, const SourceView& source, const TranslationOptions& o,
                         const runtime::Tokenizers& tokenizers, std::int32_t unk, const Describe& describe) {
  TranslationResult out;
  out.non_finite = r.non_finite;
  for (auto& h : r.hypotheses) {
    Hypothesis a;
    a.ids = std::move(h.tokens);
    a.score = h.score, a.log_prob = h.log_prob, a.finished = h.finished, a.end_id = h.end_token;
    a.token_log_probs = std::move(h.token_log_probs);
    a.attention = std::move(h.attention);
    for (auto& row : a.attention) {  // as CTranslate2: specials out, cut tokens 0
      row.erase(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(std::min(source.leading, row.size())));
      row.resize(row.size() - std::min(source.trailing, row.size()));
      row.resize(source.count, 0.0f);
    }
    if (o.replace_unknowns) replace_unknowns(a, source, unk, tokenizers);
    if (!o.return_attention) a.attention.clear();
    describe(a);
    out.hypotheses.push_back(std::move(a));
  }
  // Never a result without hypotheses (the search found none, the scores were not
  // finite): callers index hypotheses[0]. An empty one, impossible (score −∞).
  if (out.hypotheses.empty()) {
    Hypothesis none;
    none.score = none.log_prob = -std::numeric_limits<float>::infinity();
    describe(none);
    out.hypotheses.push_back(std::move(none));
  }
  return out;
}

}  // namespace

namespace {

// vmap.txt, read against the target vocabulary as CTranslate2 reads it: an unknown token
// is the unknown id; the unknown, start and end tokens are always candidates.
std::optional<runtime::VocabularyMap> read_vocabulary_map(const runtime::ModelFiles& files, const runtime::Tokenizers& tokens,
                                                          const runtime::ModelConfig& c) {
  if (!files.has("vmap.txt")) return std::nullopt;
  if (!tokens.has_vocabulary())
    throw error_of(files.path("vmap.txt"), ": a vocabulary map needs the model's target vocabulary, and it has none");
  auto id = [&](const std::string& token) { return tokens.find_token(token, runtime::Side::target).value_or(c.unk_id); };
  std::vector<std::int32_t> always = {c.unk_id, c.eos_id, c.decoder_start_id};
  if (c.bos_id != runtime::kNoToken) always.push_back(c.bos_id);
  return runtime::VocabularyMap(files.read("vmap.txt"), id, std::move(always));
}

// What loading found and chose, at level info (CTranslate2 logs its load the same way).
void log_loaded(const Model& model, bool in_memory) {
  if (!log_enabled(LogLevel::info)) return;
  const ModelInfo i = model.info();
  log_line(LogLevel::info, "Loaded model " + i.directory + (in_memory ? " from memory" : "") + " on device cpu:0");
  log_line(LogLevel::info, " - Format: " + i.format);
  log_line(LogLevel::info, " - Parameters: " + std::to_string(i.parameters));
  log_line(LogLevel::info, " - Selected compute type: " + i.compute_type + " (" + i.compute_type_reason + ")");
  log_line(LogLevel::info, " - Attention caches: " + i.kv_cache_type);
  log_line(LogLevel::info, " - Kernels: " + i.isa);
  if (!i.vocabulary.empty()) log_line(LogLevel::info, " - Vocabularies: " + i.vocabulary);
  if (!i.text_tokenizer.empty()) log_line(LogLevel::info, " - Text: " + i.text_tokenizer);
  if (!i.vocabulary_map.empty()) log_line(LogLevel::info, " - Vocabulary map: " + i.vocabulary_map);
  for (const std::string& check : i.checks) log_line(LogLevel::debug, " - Checked: " + check);
}

}  // namespace

Model Model::load(const std::string& directory, const LoadOptions& options) {
  return load_files(runtime::ModelFiles::directory(directory), options);
}

Model Model::load_from_memory(const std::string& name, std::map<std::string, std::string> files, const LoadOptions& options) {
  return load_files(runtime::ModelFiles::in_memory(name, std::move(files)), options);
}

Model Model::load_files(const runtime::ModelFiles& files, const LoadOptions& options) {
  auto state = std::make_shared<State>();
  state->directory = files.name();
  if (options.decoding_rules != "auto" && options.decoding_rules != "transformers" && options.decoding_rules != "ctranslate2")
    throw OptionError("decoding_rules", "'" + options.decoding_rules + "'", "must be auto, transformers or ctranslate2");
  const runtime::ModelKind kind = runtime::detect_model(files);
  if (kind == runtime::ModelKind::hf_seq2seq) {
    const std::string& directory = files.name();
    runtime::HfSeq2SeqFiles f = runtime::read_hf_seq2seq(directory);
    state->generation = runtime::read_generation_defaults(directory, f.config.tgt_vocab_size);
    if (state->generation->decoder_start_id >= 0) f.config.decoder_start_id = state->generation->decoder_start_id;
    const std::int64_t source_rows = f.config.src_vocab_size, target_rows = f.config.tgt_vocab_size;
    state->model = runtime::Model::build(std::move(f.config), std::move(f.tensors), std::move(f.report), runtime_options(options));
    state->tokenizers = runtime::Tokenizers::from_seq2seq(runtime::load_seq2seq_tokenizer(directory, f.family, source_rows, target_rows));
    state->transformers_rules = options.decoding_rules != "ctranslate2";
    state->rules_reason = state->transformers_rules
                              ? "transformers generate() (a Hugging Face directory; defaults from " + state->generation->source + ")"
                              : "CTranslate2 (asked for, on a Hugging Face directory)";
    Model m;
    m.state_ = std::move(state);
    log_loaded(m, false);
    return m;
  }
  state->model = runtime::load_model(files, runtime_options(options));
  if (options.decoding_rules == "transformers") {
    state->transformers_rules = true;
    state->rules_reason = "transformers generate() (asked for; transformers' defaults, no generation_config.json)";
  }
  std::string unk = "<unk>";
  if (kind == runtime::ModelKind::ct2_translator) unk = runtime::read_ct2_model(files).unk_token;
  state->tokenizers = runtime::Tokenizers::from_files(files, state->model->config(), unk);
  state->vocabulary_map = read_vocabulary_map(files, state->tokenizers, state->model->config());
  Model m;
  m.state_ = std::move(state);
  log_loaded(m, files.in_memory());
  return m;
}

Model Model::preset(const std::string& name, std::uint64_t seed, const LoadOptions& options) {
  const runtime::ModelConfig c = runtime::preset_config(name);
  runtime::LoadReport report;
  report.origin = "preset " + name;
  report.format = "built-in preset '" + name + "' (random weights, seed " + std::to_string(seed) + ")";
  auto state = std::make_shared<State>();
  state->directory = report.origin;
  // Generated tensor by tensor as the model packs them, each freed once packed: only
  // the packed copy stays resident, and the fp32 model never is all at once.
  auto weights = runtime::random_weights(c, seed, /*on_demand=*/true);
  weights->set_release_after_read(true);
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
  i.compute_type = state_->model->compute_type().name;
  i.compute_type_reason = state_->model->compute_type().reason;
  i.kv_cache_type = state_->model->compute_type().kv_cache == ops::KvType::bf16 ? "bfloat16" : "float32";
  i.decoding_rules = state_->rules_reason;
  if (state_->generation) i.generation_defaults = state_->generation->fields;
  if (state_->vocabulary_map) i.vocabulary_map = "vmap.txt (" + std::to_string(state_->vocabulary_map->rules()) + " rules)";
  return i;
}

bool Model::transformers_rules() const { return state_->transformers_rules; }
bool Model::has_generation_defaults() const { return state_->generation.has_value(); }

std::vector<std::int32_t> Model::encode_source(const std::string& text, const std::string& source_lang,
                                               const std::string& target_lang) const {
  if (source_lang.empty() && target_lang.empty()) return state_->tokenizers.encode_text(text, runtime::Side::source);
  return state_->tokenizers.encode_source(text, source_lang, target_lang);
}

std::vector<std::int32_t> Model::forced_target_prefix(const std::string& target_lang) const {
  std::vector<std::int32_t> forced = state_->tokenizers.target_language_prefix(target_lang);
  if (forced.empty() && state_->generation && state_->transformers_rules && state_->generation->forced_bos_id >= 0)
    forced.push_back(state_->generation->forced_bos_id);
  return forced;
}

TranslationOptions Model::default_options() const {
  if (!state_->generation) {
    TranslationOptions o;
    if (state_->transformers_rules) o.min_length = 0;  // generate()'s
    return o;
  }
  TranslationOptions o = state_->generation->options;
  for (const auto& word : state_->generation->bad_words_ids)
    o.suppress_sequences.push_back(state_->tokenizers.decode_tokens(word));
  return o;
}

bool Model::has_text_tokenizer() const { return state_->tokenizers.has_text(); }
bool Model::has_vocabulary() const { return state_->tokenizers.has_vocabulary(); }
bool Model::has_vocabulary_map() const { return state_->vocabulary_map.has_value(); }
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
std::vector<std::string> Model::decode_tokens(const std::vector<std::int32_t>& ids, Side side) const {
  return side == Side::target ? state_->tokenizers.decode_tokens(ids) : state_->tokenizers.source_tokens(ids);
}
std::string Model::decode_pieces(const std::vector<std::string>& tokens) const { return state_->tokenizers.decode_pieces(tokens); }

bool Model::truncate_source(std::vector<std::int32_t>& ids, std::int64_t max_length) const {
  if (max_length < 0) throw Error("truncate_source: max_length must be ≥ 0");
  if (static_cast<std::int64_t>(ids.size()) <= max_length) return false;
  if (max_length == 0) return ids.clear(), true;
  return truncate_ids(ids, max_length, state_->model->config().eos_id);
}

Model::TruncatedSource Model::encode_source_text(const std::string& line, std::int64_t max_length, bool cut,
                                                 const std::string& source_lang, const std::string& target_lang) const {
  if (max_length < 0) throw Error("encode_source_text: max_length must be ≥ 0 (0: no cut)");
  const runtime::Tokenizers& tok = state_->tokenizers;
  const std::int32_t eos = state_->model->config().eos_id;
  if (tok.has_seq2seq() || !source_lang.empty() || !target_lang.empty()) {
    // Language codes and the Hugging Face tokenizers (text/seq2seq/) have no piece-by-piece
    // reading: the line is tokenized whole (LineReader's cap still bounds it).
    TruncatedSource out;
    out.ids = encode_source(line, source_lang, target_lang);
    out.length = static_cast<std::int64_t>(out.ids.size());
    out.exact = !cut;
    out.truncated = max_length > 0 && truncate_ids(out.ids, max_length, eos);
    return out;
  }
  // A couple of pieces beyond those kept: truncation looks at the last ids (an EOS, a
  // language code after it), which are then the added EOS, never a piece of the text.
  const bool bounded = max_length > 0 && tok.text_never_gives(eos, runtime::Side::source);
  const std::int64_t count = bounded ? std::max<std::int64_t>(0, max_length - tok.source_specials()) + 2
                                     : std::numeric_limits<std::int64_t>::max();
  runtime::LeadingPieces pieces = tok.leading_pieces(line, runtime::Side::source, count, cut);
  TruncatedSource out;
  out.length = pieces.seen + tok.source_specials();
  out.more = pieces.more;
  out.exact = pieces.exact;
  out.ids = tok.with_specials(std::move(pieces.ids), runtime::Side::source);
  out.truncated = max_length > 0 && truncate_ids(out.ids, max_length, eos);
  return out;
}

bool Model::is_empty_source(const std::vector<std::int32_t>& ids) const {
  return runtime::is_empty_source(ids, state_->model->config());
}

Translator::Translator(const Model& model, const TranslatorOptions& options) : state_(std::make_unique<State>()) {
  limits::check_translator(options, model.max_positions());
  state_->model = model;
  state_->options = options;
  if (model.state_->vocabulary_map) state_->vocabulary_map = &*model.state_->vocabulary_map;
  runtime::TranslatorConfig c;
  const ThreadSplit split = split_threads(options);
  c.inter_threads = split.inter;
  c.threads = split.intra;
  c.split_follows_batches = split.follows_batches;
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
int Translator::inter_threads() const { return state_->translator->config().inter_threads; }
int Translator::intra_threads() const { return state_->translator->config().threads; }
bool Translator::split_follows_work() const { return state_->translator->config().split_follows_batches; }
std::int64_t Translator::max_source_length() const { return state_->translator->plan().limits().max_source_length; }
std::string Translator::plan_description() const { return state_->translator->plan().describe(); }
std::size_t Translator::arena_bytes() const { return state_->translator->plan().arena_bytes(); }

void Translator::validate(const TranslationOptions& options) const {
  const runtime::Translator& t = *state_->translator;
  runtime::DecodeOptions d = decode_options(options, state_->model.state_->tokenizers, t.model().config(), state_->vocabulary_map,
                                                    state_->model.state_->transformers_rules);
  if (d.use_vmap) d.candidates = [](std::uint64_t) { return std::span<const std::int32_t>(); };  // each call's own
  d.validate(t.plan().limits(), t.model().config());
}

namespace {

// One call's sources, encoded, with what maps their results back to the caller.
struct Encoded {
  std::vector<std::vector<std::int32_t>> sources, prefixes;
  std::vector<SourceView> views;
  std::vector<std::vector<std::string>> source_tokens;  // use_vmap: the caller's tokens, to look up in vmap.txt
};

// use_vmap: each sentence's candidates, from its own tokens and prefix (never its
// batch-mates', unlike CTranslate2: text/vocabulary_map.hpp), found by sentence id.
struct Candidates {
  std::vector<std::vector<std::int32_t>> of;  // by position in the call
  std::size_t first_index = 0;
  std::span<const std::int32_t> operator()(std::uint64_t id) const { return of.at(id - first_index); }
};

// Runs encoded sources (cut to max_input_length first) and fills each hypothesis with
// `describe` (text, tokens or nothing), returning results or handing them to `on_result`.
template <class Describe>
std::vector<TranslationResult> run_translation(const runtime::Translator& translator, const runtime::Tokenizers& tokenizers,
                                               const runtime::VocabularyMap* vocabulary_map, Encoded&& in,
                                               const TranslationOptions& options, const Describe& describe,
                                               const Translator::ResultCallback& on_result, std::size_t first_index,
                                               bool transformers_rules, std::int32_t forced_eos, int threads = 0) {
  const runtime::ModelConfig& config = translator.model().config();
  runtime::DecodeOptions decode = decode_options(options, tokenizers, config, vocabulary_map, transformers_rules, forced_eos);
  decode.threads = threads;
  // Before max_input_length cuts anything: CTranslate2 looks up the whole source.
  auto candidates = std::make_shared<Candidates>();
  if (decode.use_vmap) {
    candidates->first_index = first_index;
    const std::vector<std::int32_t> no_prefix;
    for (std::size_t i = 0; i < in.source_tokens.size(); ++i)
      candidates->of.push_back(vocabulary_map->candidates(in.source_tokens[i], in.prefixes.empty() ? no_prefix : in.prefixes[i]));
    decode.candidates = [candidates](std::uint64_t id) { return (*candidates)(id); };
  }
  // max_input_length (CTranslate2's) cuts longer sources — to the translator's own limit
  // when that is lower, as the CLI cuts its over-long lines; 0: no cut, so a source over
  // the translator's limit is an error.
  if (options.max_input_length > 0) {
    const std::int64_t limit = std::min(options.max_input_length, translator.plan().limits().max_source_length);
    for (auto& ids : in.sources) truncate_ids(ids, limit, config.eos_id);
  }
  auto convert = [&](std::size_t i, runtime::SentenceResult&& r) {
    // return_attention_heads: the best hypothesis traced again, only now (decoding never
    // pays for it); an empty source, translated without the model, gets maps of 0 rows.
    const bool trace = options.return_attention_heads && !r.non_finite && !r.hypotheses.empty();
    const bool empty = runtime::is_empty_source(in.sources[i], config);
    const std::vector<std::int32_t> outputs = trace && !empty ? produced(r.hypotheses[0], options.return_end_token) : std::vector<std::int32_t>{};
    TranslationResult out = to_api(std::move(r), in.views[i], options, tokenizers, config.unk_id, describe);
    if (trace)
      out.attention_heads = trace_heads(translator, tokenizers, empty ? std::span<const std::int32_t>() : in.sources[i], outputs);
    return out;
  };
  runtime::Translator::ResultSink sink;
  if (on_result) sink = [&](std::size_t i, runtime::SentenceResult&& r) { on_result(first_index + i, convert(i, std::move(r))); };
  std::vector<TranslationResult> out;
  auto results = translator.translate(in.sources, decode, in.prefixes, first_index, sink);
  for (std::size_t i = 0; i < results.size(); ++i) out.push_back(convert(i, std::move(results[i])));
  return out;
}

// Encodes each input with `encode`, which also describes it for the results.
template <class Inputs, class Encode>
void encode_all(const Inputs& inputs, const Encode& encode, std::vector<std::vector<std::int32_t>>& ids,
                std::vector<SourceView>* views = nullptr) {
  ids.reserve(inputs.size());
  for (const auto& input : inputs) {
    SourceView view;
    ids.push_back(encode(input, view));
    if (views) views->push_back(std::move(view));
  }
}

// The encoder positions the model adds around a source, for text and tokens.
SourceView special_positions(const runtime::ModelConfig& c, std::size_t tokens) {
  SourceView v;
  v.leading = c.add_source_bos ? 1 : 0, v.trailing = c.add_source_eos ? 1 : 0, v.count = tokens;
  return v;
}

}  // namespace

namespace {

// The forced first target tokens (Model::forced_target_prefix) before every prefix given.
void force_target_prefix(const Model& model, const TranslationOptions& options, Encoded& in) {
  // (source_lang is read by translate_text alone: ids and tokens are the source as the
  // model reads it, its language token included.)
  const std::vector<std::int32_t> forced = model.forced_target_prefix(options.target_lang);
  if (forced.empty()) return;
  in.prefixes.resize(in.sources.size());
  for (auto& p : in.prefixes) p.insert(p.begin(), forced.begin(), forced.end());
}

}  // namespace

// The end token generate() forces at the length cap (generation_config.json's
// forced_eos_token_id), or -1.
std::int32_t Translator::forced_eos_of(const Model& model) {
  const auto& g = model.state_->generation;
  return g ? g->forced_eos_id : -1;
}

std::vector<TranslationResult> Translator::translate_ids(const std::vector<std::vector<std::int32_t>>& sources,
                                                         const TranslationOptions& options,
                                                         const std::vector<std::vector<std::int32_t>>& prefixes,
                                                         const ResultCallback& on_result, std::size_t first_index) const {
  return translate_id_views(std::vector<IdsView>(sources.begin(), sources.end()), options,
                            std::vector<IdsView>(prefixes.begin(), prefixes.end()), on_result, first_index);
}

std::vector<TranslationResult> Translator::translate_id_views(const std::vector<IdsView>& sources,
                                                              const TranslationOptions& options,
                                                              const std::vector<IdsView>& prefixes,
                                                              const ResultCallback& on_result, std::size_t first_index) const {
  return translate_id_views_on(sources, options, prefixes, on_result, first_index, 0);
}

std::vector<TranslationResult> TranslatorInternals::translate_ids(const Translator& translator,
                                                                  const std::vector<std::vector<std::int32_t>>& sources,
                                                                  const TranslationOptions& options,
                                                                  const std::vector<std::vector<std::int32_t>>& prefixes,
                                                                  int threads) {
  return translator.translate_id_views_on(std::vector<IdsView>(sources.begin(), sources.end()), options,
                                         std::vector<IdsView>(prefixes.begin(), prefixes.end()), {}, 0, threads);
}

std::vector<int> TranslatorInternals::idle_workspace_threads(const Translator& translator) {
  return translator.state_->translator->idle_workspace_threads();
}

std::vector<TranslationResult> Translator::translate_id_views_on(const std::vector<IdsView>& sources,
                                                                 const TranslationOptions& options,
                                                                 const std::vector<IdsView>& prefixes,
                                                                 const ResultCallback& on_result, std::size_t first_index,
                                                                 int threads) const {
  const auto& tok = state_->model.state_->tokenizers;
  if (options.replace_unknowns && !tok.has_vocabulary())
    throw OptionError("replace_unknowns", "true", "needs the model's vocabularies to name the source tokens");
  Encoded in;
  // The one copy of the inputs: into the engine's own rows, which max_input_length may cut.
  encode_all(sources, [&](IdsView ids, SourceView& v) {
    std::vector<std::int32_t> copy(ids.begin(), ids.end());
    v.count = copy.size();
    if (options.replace_unknowns) v.tokens = tok.source_tokens(copy);
    if (options.use_vmap && tok.has_vocabulary()) in.source_tokens.push_back(tok.source_tokens(copy));
    return copy;
  }, in.sources, &in.views);
  for (IdsView p : prefixes) in.prefixes.emplace_back(p.begin(), p.end());
  force_target_prefix(state_->model, options, in);
  return run_translation(*state_->translator, tok, state_->vocabulary_map, std::move(in), options, [](Hypothesis&) {},
                         on_result, first_index, state_->model.transformers_rules(), forced_eos_of(state_->model),
                         threads);
}

std::vector<TranslationResult> Translator::translate_text(const std::vector<std::string>& sources,
                                                          const TranslationOptions& options,
                                                          const std::vector<std::string>& prefixes,
                                                          const ResultCallback& on_result, std::size_t first_index) const {
  const auto& tok = state_->model.state_->tokenizers;
  const auto& config = state_->translator->model().config();
  // Only what max_input_length keeps is tokenized (a line of a gigabyte costs what its
  // first tokens cost) — unless attention is returned: its rows span every token of the
  // line, the cut ones as zeros (CTranslate2's), so the line is tokenized whole.
  const std::int64_t keep = options.max_input_length > 0 && !options.return_attention
                                ? std::min(options.max_input_length, state_->translator->plan().limits().max_source_length)
                                : 0;
  Encoded in;
  encode_all(sources, [&](const std::string& s, SourceView& v) {
    auto ids = keep > 0 ? state_->model.encode_source_text(s, keep, false, options.source_lang, options.target_lang).ids
                        : state_->model.encode_source(s, options.source_lang, options.target_lang);
    v = special_positions(config, ids.size());
    v.count = ids.size() - v.leading - v.trailing;
    if (options.replace_unknowns || options.use_vmap) {
      auto tokens = tok.source_tokens({ids.begin() + static_cast<std::ptrdiff_t>(v.leading), ids.begin() + static_cast<std::ptrdiff_t>(v.leading + v.count)});
      if (options.use_vmap) in.source_tokens.push_back(tokens);
      if (options.replace_unknowns) v.tokens = std::move(tokens);
    }
    return ids;
  }, in.sources, &in.views);
  encode_all(prefixes, [&](const std::string& p, SourceView&) { return tok.encode_text(p, runtime::Side::target); }, in.prefixes);
  force_target_prefix(state_->model, options, in);
  return run_translation(*state_->translator, tok, state_->vocabulary_map, std::move(in), options, [&](Hypothesis& h) {
    h.text = options.replace_unknowns ? tok.decode_pieces(h.tokens) : tok.decode_text(h.ids);
  }, on_result, first_index, state_->model.transformers_rules(), forced_eos_of(state_->model));
}

std::vector<TranslationResult> Translator::translate_tokens(const std::vector<std::vector<std::string>>& sources,
                                                            const TranslationOptions& options,
                                                            const std::vector<std::vector<std::string>>& prefixes,
                                                            const ResultCallback& on_result, std::size_t first_index) const {
  using Tokens = std::vector<std::string>;
  const auto& tok = state_->model.state_->tokenizers;
  const auto& config = state_->translator->model().config();
  Encoded in;
  encode_all(sources, [&](const Tokens& s, SourceView& v) {
    v = special_positions(config, s.size());
    if (options.replace_unknowns) v.tokens = s;
    if (options.use_vmap) in.source_tokens.push_back(s);
    return tok.encode_tokens(s, runtime::Side::source);
  }, in.sources, &in.views);
  encode_all(prefixes, [&](const Tokens& p, SourceView&) { return tok.encode_tokens(p, runtime::Side::target); }, in.prefixes);
  force_target_prefix(state_->model, options, in);
  return run_translation(*state_->translator, tok, state_->vocabulary_map, std::move(in), options, [&](Hypothesis& h) {
    if (h.tokens.empty()) h.tokens = tok.decode_tokens(h.ids);
  }, on_result, first_index, state_->model.transformers_rules(), forced_eos_of(state_->model));
}

AttentionHeads Translator::attention_heads(const std::vector<std::int32_t>& source,
                                           const std::vector<std::int32_t>& target) const {
  return trace_heads(*state_->translator, state_->model.state_->tokenizers, source, target);
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

void convert_model(const std::string& input_directory, const std::string& output_directory,
                   const std::string& compute_type) {
  runtime::convert_model(input_directory, output_directory, compute_type);
}

const char* version() { return ATTEND_VERSION; }

std::vector<std::string> supported_compute_types() {
  std::vector<std::string> out = {"float32", "int8", "int8_float32"};
  // The best kernels this CPU runs ($ATTEND_ISA held to, as a model would load).
  if (ops::isa_available(ops::Isa::avx512_bf16) && ops::active_isa() >= ops::Isa::avx512_bf16) {
    out.push_back("bfloat16");
    out.push_back("int8_bfloat16");
  }
  return out;
}

}  // namespace attend
