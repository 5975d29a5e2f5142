// The C API of encoder-only models (include/attend/attend.h: attend_encoder_*) over
// attend::Encoder. Outputs go to memory the caller provides, sized by the counts the
// API reports; no exception crosses the boundary.
#include <cstring>
#include <new>
#include <string>

#include "attend/attend.h"
#include "attend/attend.hpp"
#include "c_api_errors.hpp"

struct attend_encoder {
  attend::Encoder encoder;
  attend::EncoderInfo info;
};

namespace {

using attend::c_api::fail;

using attend::c_api::guarded;

attend_status invalid(const char* what) { return fail(ATTEND_ERROR_INVALID_ARGUMENT, what); }

std::vector<std::vector<std::int32_t>> id_lists(const int32_t* const* ids, const size_t* lengths, size_t count) {
  std::vector<std::vector<std::int32_t>> out(count);
  for (size_t i = 0; i < count; ++i) {
    if (lengths[i] > 0 && ids[i] == nullptr) throw attend::Error("ids[" + std::to_string(i) + "] is NULL");
    out[i].assign(ids[i], ids[i] + lengths[i]);
  }
  return out;
}

std::vector<std::string> texts_of(const char* const* texts, size_t count) {
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    if (texts[i] == nullptr) throw attend::Error("texts[" + std::to_string(i) + "] is NULL");
    out.emplace_back(texts[i]);
  }
  return out;
}

void copy_rows(const std::vector<std::vector<float>>& rows, float* out) {
  for (const auto& r : rows) out = std::copy(r.begin(), r.end(), out);
}

// Embedding options with `normalize` set and the rest as default (the model's default prompt).
attend::EmbedOptions normalize_only(int normalize) {
  attend::EmbedOptions o;
  o.normalize = normalize;
  return o;
}

}  // namespace

extern "C" {

void attend_encoder_options_init(attend_encoder_options* o) {
  if (o == nullptr) return;
  const attend::EncoderOptions d;
  o->isa = nullptr, o->compute_type = nullptr, o->pooling = nullptr;
  o->threads = d.threads, o->inter_threads = d.inter_threads, o->intra_threads = d.intra_threads;
  o->max_batch_size = d.max_batch_size, o->max_batch_tokens = d.max_batch_tokens, o->max_length = d.max_length;
}

attend_status attend_encoder_load(const char* directory, const attend_encoder_options* options, attend_encoder** encoder) {
  if (directory == nullptr || encoder == nullptr) return invalid("attend_encoder_load: directory and encoder must not be NULL");
  *encoder = nullptr;
  return guarded([&] {
    attend::EncoderOptions o;
    if (options != nullptr) {
      if (options->isa) o.isa = options->isa;
      if (options->compute_type) o.compute_type = options->compute_type;
      if (options->pooling) o.pooling = options->pooling;
      o.threads = options->threads, o.inter_threads = options->inter_threads, o.intra_threads = options->intra_threads;
      o.max_batch_size = options->max_batch_size, o.max_batch_tokens = options->max_batch_tokens;
      o.max_length = options->max_length;
    }
    attend::Encoder e(directory, o);
    attend::EncoderInfo info = e.encoder_info();
    *encoder = new attend_encoder{std::move(e), std::move(info)};
  });
}

void attend_encoder_free(attend_encoder* encoder) { delete encoder; }

size_t attend_encoder_embedding_dim(const attend_encoder* e) { return e ? static_cast<size_t>(e->info.embedding_dim) : 0; }
size_t attend_encoder_hidden_size(const attend_encoder* e) { return e ? static_cast<size_t>(e->info.hidden_size) : 0; }
size_t attend_encoder_max_length(const attend_encoder* e) { return e ? static_cast<size_t>(e->info.max_length) : 0; }
size_t attend_encoder_num_labels(const attend_encoder* e) { return e ? e->info.labels.size() : 0; }
const char* attend_encoder_label(const attend_encoder* e, size_t label) {
  return e && label < e->info.labels.size() ? e->info.labels[label].c_str() : nullptr;
}

attend_status attend_encoder_embed_text(const attend_encoder* e, const char* const* texts, size_t count, int normalize,
                                        float* embeddings) {
  if (e == nullptr || (count > 0 && (texts == nullptr || embeddings == nullptr)))
    return invalid("attend_encoder_embed_text: encoder, texts and embeddings must not be NULL");
  return guarded([&] { copy_rows(e->encoder.embed(texts_of(texts, count), normalize_only(normalize)), embeddings); });
}

attend_status attend_encoder_embed_ids(const attend_encoder* e, const int32_t* const* ids, const size_t* lengths, size_t count,
                                       int normalize, float* embeddings) {
  if (e == nullptr || (count > 0 && (ids == nullptr || lengths == nullptr || embeddings == nullptr)))
    return invalid("attend_encoder_embed_ids: encoder, ids, lengths and embeddings must not be NULL");
  return guarded([&] { copy_rows(e->encoder.embed_ids(id_lists(ids, lengths, count), normalize_only(normalize)), embeddings); });
}

attend_status attend_encoder_embed_text_with_prompt(const attend_encoder* e, const char* const* texts, size_t count,
                                                    int normalize, const char* prompt_name, const char* prompt,
                                                    float* embeddings) {
  if (e == nullptr || (count > 0 && (texts == nullptr || embeddings == nullptr)))
    return invalid("attend_encoder_embed_text_with_prompt: encoder, texts and embeddings must not be NULL");
  return guarded([&] {
    attend::EmbedOptions o;
    o.normalize = normalize;
    if (prompt_name != nullptr) o.prompt_name = prompt_name;
    if (prompt != nullptr) o.prompt = prompt;
    copy_rows(e->encoder.embed(texts_of(texts, count), o), embeddings);
  });
}

size_t attend_encoder_num_prompts(const attend_encoder* e) { return e ? e->info.prompts.size() : 0; }
const char* attend_encoder_prompt_name(const attend_encoder* e, size_t i) {
  return e && i < e->info.prompts.size() ? e->info.prompts[i].first.c_str() : nullptr;
}
const char* attend_encoder_prompt_text(const attend_encoder* e, size_t i) {
  return e && i < e->info.prompts.size() ? e->info.prompts[i].second.c_str() : nullptr;
}
const char* attend_encoder_default_prompt_name(const attend_encoder* e) {
  return e ? e->info.default_prompt_name.c_str() : nullptr;
}
const char* attend_encoder_similarity(const attend_encoder* e) { return e ? e->info.similarity.c_str() : nullptr; }

attend_status attend_encoder_attention_heads(const attend_encoder* e, const int32_t* ids, size_t length, float* weights,
                                             size_t* layers, size_t* heads) {
  if (e == nullptr || layers == nullptr || heads == nullptr || (ids == nullptr && length > 0))
    return invalid("attend_encoder_attention_heads: encoder, ids, layers and heads must not be NULL");
  return guarded([&] {
    const attend::AttentionHeads h = e->encoder.attention_heads(std::vector<std::int32_t>(ids, ids + length));
    *layers = static_cast<size_t>(h.encoder_self.layers), *heads = static_cast<size_t>(h.encoder_self.heads);
    if (weights != nullptr) std::copy(h.encoder_self.weights.begin(), h.encoder_self.weights.end(), weights);
  });
}

attend_status attend_encoder_save_attention(const attend_encoder* e, const int32_t* ids, size_t length, const char* path) {
  if (e == nullptr || path == nullptr || (ids == nullptr && length > 0))
    return invalid("attend_encoder_save_attention: encoder, ids and path must not be NULL");
  return guarded([&] { attend::save_attention_npz(e->encoder.attention_heads(std::vector<std::int32_t>(ids, ids + length)), path); });
}

attend_status attend_encoder_save_text_attention(const attend_encoder* e, const char* text, const char* second,
                                                 const char* path) {
  if (e == nullptr || text == nullptr || path == nullptr)
    return invalid("attend_encoder_save_text_attention: encoder, text and path must not be NULL");
  return guarded([&] {
    attend::save_attention_npz(second == nullptr ? e->encoder.text_attention_heads(text)
                                                 : e->encoder.text_attention_heads(text, second),
                               path);
  });
}

attend_status attend_encoder_forward_ids(const attend_encoder* e, const int32_t* const* ids, const int32_t* const* type_ids,
                                         const size_t* lengths, size_t count, float* last_hidden_state, float* pooler_output) {
  if (e == nullptr || (count > 0 && (ids == nullptr || lengths == nullptr || last_hidden_state == nullptr)))
    return invalid("attend_encoder_forward_ids: encoder, ids, lengths and last_hidden_state must not be NULL");
  if (pooler_output != nullptr && !e->info.has_pooler)
    return invalid("attend_encoder_forward_ids: the model has no pooler (pass pooler_output NULL)");
  return guarded([&] {
    const auto types = type_ids ? id_lists(type_ids, lengths, count) : std::vector<std::vector<std::int32_t>>{};
    for (const auto& out : e->encoder.forward_ids(id_lists(ids, lengths, count), types)) {
      last_hidden_state = std::copy(out.last_hidden_state.begin(), out.last_hidden_state.end(), last_hidden_state);
      if (pooler_output) pooler_output = std::copy(out.pooler_output.begin(), out.pooler_output.end(), pooler_output);
    }
  });
}

attend_status attend_encoder_classify_text(const attend_encoder* e, const char* const* texts, const char* const* second_texts,
                                           size_t count, float* scores, int32_t* labels) {
  if (e == nullptr || (count > 0 && (texts == nullptr || scores == nullptr)))
    return invalid("attend_encoder_classify_text: encoder, texts and scores must not be NULL");
  return guarded([&] {
    std::vector<attend::Classification> out;
    if (second_texts == nullptr) {
      out = e->encoder.classify(texts_of(texts, count));
    } else {
      const auto a = texts_of(texts, count), b = texts_of(second_texts, count);
      std::vector<std::pair<std::string, std::string>> pairs;
      for (size_t i = 0; i < count; ++i) pairs.emplace_back(a[i], b[i]);
      out = e->encoder.classify_pairs(pairs);
    }
    for (size_t i = 0; i < out.size(); ++i) {
      scores = std::copy(out[i].scores.begin(), out[i].scores.end(), scores);
      if (labels) labels[i] = out[i].label;
    }
  });
}

}  // extern "C"
