// The C API (include/attend/attend.h) over the C++ API. Every entry point catches
// everything: an exception becomes a status and a per-thread message.
#include "attend/attend.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "attend/attend.hpp"
#include "c_api_errors.hpp"

struct attend_model {
  attend::Model model;
  std::string compute_type, compute_type_reason, kv_cache_type;  // what attend_model_compute_type* … hand out
  // attend_options_init_for_model's suppress_sequences (generation_config.json's bad words).
  std::vector<std::string> default_suppressed;
  std::vector<const char*> default_suppressed_c;
};
struct attend_translator {
  attend::Translator translator;
};
struct attend_result {
  std::vector<attend::TranslationResult> sentences;
  std::vector<std::vector<std::vector<float>>> attention;  // [sentence][hypothesis]: rows flattened
  // [sentence]: attention_heads' source, target and decoder input tokens as C strings.
  std::vector<std::array<std::vector<const char*>, 3>> head_tokens;

  explicit attend_result(std::vector<attend::TranslationResult> r) : sentences(std::move(r)) {
    for (const auto& sentence : sentences) {
      auto& flat = attention.emplace_back();
      for (const auto& h : sentence.hypotheses) {
        auto& rows = flat.emplace_back();
        for (const auto& row : h.attention) rows.insert(rows.end(), row.begin(), row.end());
      }
      const attend::AttentionHeads& a = sentence.attention_heads;
      auto& tokens = head_tokens.emplace_back();
      for (int k = 0; k < 3; ++k)
        for (const std::string& t : k == 0 ? a.source_tokens : k == 1 ? a.target_tokens : a.decoder_input_tokens)
          tokens[k].push_back(t.c_str());
    }
  }
};

namespace {

thread_local std::string g_last_error;

attend_status fail(attend_status status, std::string message) {
  g_last_error = std::move(message);
  return status;
}

}  // namespace

// For the encoder C API (encoder_c_api.cpp): the same per-thread message.
attend_status attend::c_api::fail(attend_status status, std::string message) { return ::fail(status, std::move(message)); }

namespace {

using attend::c_api::guarded;
using attend::c_api::require;

std::vector<std::string> split_spaces(const char* text) {
  std::vector<std::string> out;
  std::string current;
  for (const char* c = text; *c != 0; ++c) {
    if (*c == ' ' || *c == '\t') {
      if (!current.empty()) out.push_back(std::move(current)), current.clear();
    } else {
      current += *c;
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

// end_token NULL: the model's end-of-sequence; non-NULL with end_token_count 0: no end
// token (CTranslate2's end_token=[]).
attend::TranslationOptions to_cpp(const attend_options* o, const char* function) {
  attend::TranslationOptions t;
  if (o == nullptr) return t;
#define ATTEND_COPY_OPTION(kind, name, def, flag, lo, lo_open, hi, hi_open, help) \
  t.name = static_cast<decltype(t.name)>(o->name);
  ATTEND_TRANSLATION_OPTIONS(ATTEND_COPY_OPTION)
#undef ATTEND_COPY_OPTION
  if (o->end_token_count > 0) require(o->end_token, function, "options->end_token");
  if (o->end_token != nullptr) {
    t.end_token.emplace();
    for (size_t i = 0; i < o->end_token_count; ++i) {
      require(o->end_token[i], function, "options->end_token[" + std::to_string(i) + "]");
      t.end_token->emplace_back(o->end_token[i]);
    }
  }
  if (o->suppress_sequences_count > 0) require(o->suppress_sequences, function, "options->suppress_sequences");
  for (size_t i = 0; i < o->suppress_sequences_count; ++i) {
    require(o->suppress_sequences[i], function, "options->suppress_sequences[" + std::to_string(i) + "]");
    t.suppress_sequences.push_back(split_spaces(o->suppress_sequences[i]));
  }
  if (o->source_lang != nullptr) t.source_lang = o->source_lang;
  if (o->target_lang != nullptr) t.target_lang = o->target_lang;
  return t;
}

const attend::Hypothesis* hypothesis(const attend_result* r, size_t sentence, size_t k) {
  if (r == nullptr || sentence >= r->sentences.size() || k >= r->sentences[sentence].hypotheses.size()) return nullptr;
  return &r->sentences[sentence].hypotheses[k];
}

}  // namespace

extern "C" {

const char* attend_version(void) { return attend::version(); }
const char* attend_last_error(void) { return g_last_error.c_str(); }

void attend_translator_options_init(attend_translator_options* o) {
  if (o == nullptr) return;
  const attend::TranslatorOptions d;
  o->threads = d.threads, o->inter_threads = d.inter_threads, o->intra_threads = d.intra_threads;
  o->max_batch_size = d.max_batch_size, o->max_batch_tokens = d.max_batch_tokens;
  o->max_source_length = d.max_source_length, o->max_target_length = d.max_target_length, o->max_beam_size = d.max_beam_size;
}

void attend_options_init(attend_options* o) {
  if (o == nullptr) return;
  const attend::TranslationOptions d;
#define ATTEND_DEFAULT_OPTION(kind, name, def, flag, lo, lo_open, hi, hi_open, help) \
  o->name = static_cast<decltype(o->name)>(d.name);
  ATTEND_TRANSLATION_OPTIONS(ATTEND_DEFAULT_OPTION)
#undef ATTEND_DEFAULT_OPTION
  o->end_token = nullptr, o->end_token_count = 0;
  o->suppress_sequences = nullptr, o->suppress_sequences_count = 0;
  o->source_lang = nullptr, o->target_lang = nullptr;
}

attend_status attend_options_init_for_model(const attend_model* m, attend_options* o) {
  if (m == nullptr || o == nullptr) return fail(ATTEND_ERROR_INVALID_ARGUMENT, "attend_options_init_for_model: NULL argument");
  attend_options_init(o);
  const attend::TranslationOptions d = m->model.default_options();
#define ATTEND_MODEL_DEFAULT(kind, name, def, flag, lo, lo_open, hi, hi_open, help) \
  o->name = static_cast<decltype(o->name)>(d.name);
  ATTEND_TRANSLATION_OPTIONS(ATTEND_MODEL_DEFAULT)
#undef ATTEND_MODEL_DEFAULT
  o->suppress_sequences = m->default_suppressed_c.empty() ? nullptr : m->default_suppressed_c.data();
  o->suppress_sequences_count = m->default_suppressed_c.size();
  return ATTEND_OK;
}

attend_status attend_model_load(const char* directory, const char* isa, attend_model** out) {
  return attend_model_load_typed(directory, isa, nullptr, out);
}

attend_status attend_model_load_typed(const char* directory, const char* isa, const char* compute_type,
                                      attend_model** out) {
  attend_load_options o;
  attend_load_options_init(&o);
  o.isa = isa, o.compute_type = compute_type;
  return attend_model_load_with(directory, &o, out);
}

void attend_load_options_init(attend_load_options* o) {
  if (o == nullptr) return;
  o->isa = nullptr, o->compute_type = nullptr, o->kv_cache_type = nullptr, o->decoding_rules = nullptr;
}

attend_status attend_model_load_with(const char* directory, const attend_load_options* options, attend_model** out) {
  if (directory == nullptr || out == nullptr) return fail(ATTEND_ERROR_INVALID_ARGUMENT, "attend_model_load: NULL argument");
  *out = nullptr;
  return guarded([&] {
    attend::LoadOptions o;
    if (options != nullptr && options->isa != nullptr) o.isa = options->isa;
    if (options != nullptr && options->compute_type != nullptr) o.compute_type = options->compute_type;
    if (options != nullptr && options->kv_cache_type != nullptr) o.kv_cache_type = options->kv_cache_type;
    if (options != nullptr && options->decoding_rules != nullptr) o.decoding_rules = options->decoding_rules;
    attend::Model model = attend::Model::load(directory, o);
    const attend::ModelInfo info = model.info();
    auto m = std::make_unique<attend_model>(attend_model{std::move(model), info.compute_type, info.compute_type_reason, info.kv_cache_type, {}, {}});
    for (const auto& sequence : m->model.default_options().suppress_sequences) {
      std::string joined;
      for (const std::string& t : sequence) joined += (joined.empty() ? "" : " ") + t;
      m->default_suppressed.push_back(joined);
    }
    for (const std::string& s : m->default_suppressed) m->default_suppressed_c.push_back(s.c_str());
    *out = m.release();
  });
}

attend_status attend_model_load_from_memory(const char* name, size_t count, const char* const* file_names,
                                           const void* const* file_contents, const size_t* file_sizes,
                                           const attend_load_options* options, attend_model** out) {
  const char* function = "attend_model_load_from_memory";
  if (name == nullptr || out == nullptr) return fail(ATTEND_ERROR_INVALID_ARGUMENT, std::string(function) + ": NULL argument");
  *out = nullptr;
  return guarded([&] {
    if (count > 0) {
      require(file_names, function, "file_names");
      require(file_contents, function, "file_contents");
      require(file_sizes, function, "file_sizes");
    }
    std::map<std::string, std::string> files;
    for (size_t i = 0; i < count; ++i) {
      require(file_names[i], function, "file_names[" + std::to_string(i) + "]");
      if (file_sizes[i] > 0) require(file_contents[i], function, "file_contents[" + std::to_string(i) + "]");
      const char* bytes = static_cast<const char*>(file_contents[i]);
      if (!files.emplace(file_names[i], file_sizes[i] > 0 ? std::string(bytes, file_sizes[i]) : std::string()).second)
        throw attend::Error(std::string(function) + ": the file '" + file_names[i] + "' is given twice");
    }
    attend::LoadOptions o;
    if (options != nullptr && options->isa != nullptr) o.isa = options->isa;
    if (options != nullptr && options->compute_type != nullptr) o.compute_type = options->compute_type;
    if (options != nullptr && options->kv_cache_type != nullptr) o.kv_cache_type = options->kv_cache_type;
    attend::Model model = attend::Model::load_from_memory(name, std::move(files), o);
    const attend::ModelInfo info = model.info();
    *out = new attend_model{std::move(model), info.compute_type, info.compute_type_reason, info.kv_cache_type, {}, {}};
  });
}

attend_status attend_set_log_level(int level) {
  if (level < ATTEND_LOG_OFF || level > ATTEND_LOG_TRACE)
    return fail(ATTEND_ERROR_INVALID_ARGUMENT, "attend_set_log_level: " + std::to_string(level) +
                                                   " is not a level (ATTEND_LOG_OFF 0 … ATTEND_LOG_TRACE 6)");
  attend::set_log_level(static_cast<attend::LogLevel>(level));
  return ATTEND_OK;
}

int attend_get_log_level(void) { return static_cast<int>(attend::log_level()); }

const char* attend_supported_compute_types(void) {
  static const std::string names = [] {
    std::string out;
    for (const std::string& name : attend::supported_compute_types()) out += (out.empty() ? "" : ",") + name;
    return out;
  }();
  return names.c_str();
}

attend_status attend_convert_model(const char* input_directory, const char* output_directory, const char* compute_type) {
  if (input_directory == nullptr || output_directory == nullptr)
    return fail(ATTEND_ERROR_INVALID_ARGUMENT, "attend_convert_model: NULL directory");
  return guarded([&] {
    attend::convert_model(input_directory, output_directory, compute_type != nullptr ? compute_type : "default");
  });
}

const char* attend_model_compute_type(const attend_model* m) { return m ? m->compute_type.c_str() : ""; }
const char* attend_model_compute_type_reason(const attend_model* m) { return m ? m->compute_type_reason.c_str() : ""; }
const char* attend_model_kv_cache_type(const attend_model* m) { return m ? m->kv_cache_type.c_str() : ""; }

void attend_model_free(attend_model* m) { delete m; }

int attend_model_has_text_tokenizer(const attend_model* m) { return m != nullptr && m->model.has_text_tokenizer(); }

attend_status attend_translator_create(const attend_model* m, const attend_translator_options* o, attend_translator** out) {
  if (m == nullptr || out == nullptr) return fail(ATTEND_ERROR_INVALID_ARGUMENT, "attend_translator_create: NULL argument");
  *out = nullptr;
  return guarded([&] {
    attend::TranslatorOptions t;
    if (o != nullptr) {
      t.threads = o->threads, t.inter_threads = o->inter_threads, t.intra_threads = o->intra_threads;
      t.max_batch_size = o->max_batch_size, t.max_batch_tokens = o->max_batch_tokens;
      t.max_source_length = o->max_source_length, t.max_target_length = o->max_target_length, t.max_beam_size = o->max_beam_size;
    }
    *out = new attend_translator{attend::Translator(m->model, t)};
  });
}

void attend_translator_free(attend_translator* t) { delete t; }

attend_status attend_translate_ids(const attend_translator* t, const int32_t* const* sources, const size_t* lengths,
                                   size_t count, const attend_options* o, attend_result** out) {
  if (t == nullptr || out == nullptr || (count > 0 && (sources == nullptr || lengths == nullptr)))
    return fail(ATTEND_ERROR_INVALID_ARGUMENT, "attend_translate_ids: NULL argument");
  *out = nullptr;
  return guarded([&] {
    std::vector<attend::IdsView> ids(count);  // read in place, not copied
    for (size_t i = 0; i < count; ++i) {
      if (lengths[i] > 0) require(sources[i], "attend_translate_ids", "sources[" + std::to_string(i) + "]");
      if (lengths[i] > 0) ids[i] = {sources[i], lengths[i]};
    }
    const attend::TranslationOptions options = to_cpp(o, "attend_translate_ids");
    *out = new attend_result(t->translator.translate_id_views(ids, options));
  });
}

attend_status attend_translate_text(const attend_translator* t, const char* const* lines, size_t count,
                                    const attend_options* o, attend_result** out) {
  if (t == nullptr || out == nullptr || (count > 0 && lines == nullptr))
    return fail(ATTEND_ERROR_INVALID_ARGUMENT, "attend_translate_text: NULL argument");
  *out = nullptr;
  return guarded([&] {
    std::vector<std::string> text(count);
    for (size_t i = 0; i < count; ++i) {
      require(lines[i], "attend_translate_text", "lines[" + std::to_string(i) + "]");
      text[i] = lines[i];
    }
    const attend::TranslationOptions options = to_cpp(o, "attend_translate_text");
    *out = new attend_result(t->translator.translate_text(text, options));
  });
}

size_t attend_result_sentences(const attend_result* r) { return r ? r->sentences.size() : 0; }

size_t attend_result_hypotheses(const attend_result* r, size_t sentence) {
  return r && sentence < r->sentences.size() ? r->sentences[sentence].hypotheses.size() : 0;
}

int attend_result_non_finite(const attend_result* r, size_t sentence) {
  return r && sentence < r->sentences.size() && r->sentences[sentence].non_finite ? 1 : 0;
}

const int32_t* attend_result_ids(const attend_result* r, size_t sentence, size_t k, size_t* length) {
  const attend::Hypothesis* h = hypothesis(r, sentence, k);
  if (length) *length = h ? h->ids.size() : 0;
  return h ? h->ids.data() : nullptr;
}

const char* attend_result_text(const attend_result* r, size_t sentence, size_t k) {
  const attend::Hypothesis* h = hypothesis(r, sentence, k);
  return h ? h->text.c_str() : nullptr;
}

float attend_result_score(const attend_result* r, size_t sentence, size_t k) {
  const attend::Hypothesis* h = hypothesis(r, sentence, k);
  return h ? h->score : std::numeric_limits<float>::quiet_NaN();
}

float attend_result_log_prob(const attend_result* r, size_t sentence, size_t k) {
  const attend::Hypothesis* h = hypothesis(r, sentence, k);
  return h ? h->log_prob : std::numeric_limits<float>::quiet_NaN();
}

const float* attend_result_attention(const attend_result* r, size_t sentence, size_t k, size_t* target_length,
                                     size_t* source_length) {
  const attend::Hypothesis* h = hypothesis(r, sentence, k);
  const bool any = h != nullptr && !h->attention.empty();
  if (target_length) *target_length = any ? h->attention.size() : 0;
  if (source_length) *source_length = any ? h->attention[0].size() : 0;
  return any ? r->attention[sentence][k].data() : nullptr;
}

const float* attend_result_attention_heads(const attend_result* r, size_t sentence, const char* kind, size_t* layers,
                                          size_t* heads, size_t* rows, size_t* columns) {
  const attend::AttentionMaps* m = nullptr;
  if (r != nullptr && sentence < r->sentences.size() && kind != nullptr) {
    const attend::AttentionHeads& a = r->sentences[sentence].attention_heads;
    if (std::strcmp(kind, "encoder_self") == 0) m = &a.encoder_self;
    if (std::strcmp(kind, "decoder_self") == 0) m = &a.decoder_self;
    if (std::strcmp(kind, "cross") == 0) m = &a.cross;
  }
  if (layers) *layers = m ? static_cast<size_t>(m->layers) : 0;
  if (heads) *heads = m ? static_cast<size_t>(m->heads) : 0;
  if (rows) *rows = m ? static_cast<size_t>(m->rows) : 0;
  if (columns) *columns = m ? static_cast<size_t>(m->columns) : 0;
  return m != nullptr && !m->weights.empty() ? m->weights.data() : nullptr;
}

const char* const* attend_result_attention_tokens(const attend_result* r, size_t sentence, const char* which,
                                                  size_t* count) {
  const std::vector<const char*>* tokens = nullptr;
  if (r != nullptr && sentence < r->sentences.size() && which != nullptr) {
    const auto& all = r->head_tokens[sentence];
    if (std::strcmp(which, "source") == 0) tokens = &all[0];
    if (std::strcmp(which, "target") == 0) tokens = &all[1];
    if (std::strcmp(which, "decoder_input") == 0) tokens = &all[2];
  }
  if (count) *count = tokens ? tokens->size() : 0;
  return tokens != nullptr && !tokens->empty() ? tokens->data() : nullptr;
}

attend_status attend_result_save_attention(const attend_result* r, size_t sentence, const char* path) {
  if (r == nullptr || path == nullptr || sentence >= r->sentences.size())
    return fail(ATTEND_ERROR_INVALID_ARGUMENT, "attend_result_save_attention: NULL argument or sentence out of range");
  return guarded([&] { attend::save_attention_npz(r->sentences[sentence].attention_heads, path); });
}

attend_status attend_attention_heads_ids(const attend_translator* t, const int32_t* source, size_t source_length,
                                         const int32_t* target, size_t target_length, attend_result** out) {
  if (t == nullptr || out == nullptr || (source == nullptr && source_length > 0) || (target == nullptr && target_length > 0))
    return fail(ATTEND_ERROR_INVALID_ARGUMENT, "attend_attention_heads_ids: NULL argument");
  *out = nullptr;
  return guarded([&] {
    const std::vector<std::int32_t> src(source, source + source_length), tgt(target, target + target_length);
    attend::TranslationResult r;
    r.hypotheses.emplace_back().ids = tgt;
    r.attention_heads = t->translator.attention_heads(src, tgt);
    std::vector<attend::TranslationResult> one;
    one.push_back(std::move(r));
    *out = new attend_result(std::move(one));
  });
}

void attend_result_free(attend_result* r) { delete r; }

}  // extern "C"
