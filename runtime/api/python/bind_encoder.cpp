// attend._attend.Encoder: encoder-only models (include/attend/encoder.hpp). Every call
// that runs the model releases the GIL; results come back as NumPy arrays. The
// CTranslate2- and sentence-transformers-shaped layers are Python (attend/encoder.py).
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "attend/attend.hpp"
#include "bindings.hpp"

namespace attend::python {
namespace {

using Ids = std::vector<std::vector<std::int32_t>>;
using Array = nb::ndarray<nb::numpy, float>;
using IntArray = nb::ndarray<nb::numpy, std::int32_t>;

// A float32 NumPy array owning `values` ([rows, cols], or 1-D with cols < 0).
Array to_numpy(std::vector<float>&& values, std::size_t rows, std::size_t cols) {
  auto* owned = new std::vector<float>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return Array(owned->data(), {rows, cols}, owner);
}

// Rows of equal length as one [rows, dim] array.
Array matrix(std::vector<std::vector<float>>&& rows, std::size_t dim) {
  std::vector<float> flat(rows.size() * dim);
  for (std::size_t i = 0; i < rows.size(); ++i) std::copy(rows[i].begin(), rows[i].end(), flat.begin() + i * dim);
  return to_numpy(std::move(flat), rows.size(), dim);
}

// attend::Error during a call is about the caller's inputs: ValueError.
template <class F>
auto running(F&& f) {
  try {
    nb::gil_scoped_release release;
    return f();
  } catch (const attend::Error& e) {
    raise_value_error(e);
  }
}

Ids optional_ids(nb::handle rows, const char* what) {
  if (rows.is_none()) return {};
  return IdRows(rows, what).vectors();
}

nb::tuple classifications(std::vector<attend::Classification>&& out, std::size_t labels) {
  std::vector<std::vector<float>> logits, scores;
  std::vector<std::int32_t> best;
  for (auto& c : out) logits.push_back(std::move(c.logits)), scores.push_back(std::move(c.scores)), best.push_back(c.label);
  return nb::make_tuple(matrix(std::move(logits), labels), matrix(std::move(scores), labels), best);
}

}  // namespace

void bind_encoder(nb::module_& m) {
  nb::class_<attend::EncoderInfo>(m, "EncoderInfo", "What an encoder computes: sizes, pooling, labels.")
      .def_ro("architecture", &attend::EncoderInfo::architecture, "The model's architecture (config.json's, or TransformerEncoderSpec).")
      .def_ro("hidden_size", &attend::EncoderInfo::hidden_size, "The hidden states' dimension.")
      .def_ro("embedding_dim", &attend::EncoderInfo::embedding_dim, "The sentence embeddings' dimension.")
      .def_ro("max_length", &attend::EncoderInfo::max_length, "Tokens a text is cut to, special tokens included.")
      .def_ro("vocabulary_size", &attend::EncoderInfo::vocabulary_size, "Tokens in the vocabulary.")
      .def_ro("pooling", &attend::EncoderInfo::pooling, "The pooling modes, joined by '+'.")
      .def_ro("normalize", &attend::EncoderInfo::normalize, "Whether the model normalises its embeddings.")
      .def_ro("has_pooler", &attend::EncoderInfo::has_pooler, "Whether the model has BERT's pooler (pooler_output).")
      .def_ro("has_tokenizer", &attend::EncoderInfo::has_tokenizer, "Whether the directory has a tokenizer attend reads (tokenizer.json, vocab.txt or sentencepiece.bpe.model).")
      .def_ro("labels", &attend::EncoderInfo::labels, "A classifier's labels, by id.")
      .def_ro("prompts", &attend::EncoderInfo::prompts,
              "sentence-transformers' prompts (config_sentence_transformers.json): (name, text) pairs.")
      .def_ro("default_prompt_name", &attend::EncoderInfo::default_prompt_name,
              "The prompt embed uses when none is asked for ('' for none).")
      .def_ro("similarity", &attend::EncoderInfo::similarity,
              "sentence-transformers' similarity_fn_name: cosine, dot, euclidean or manhattan.");

  nb::class_<attend::Encoder>(m, "Encoder",
                              "An encoder-only model (BERT family) from a Hugging Face / sentence-transformers directory or "
                              "a CTranslate2 converted encoder. Thread-safe; every call releases the GIL.")
      .def(
          "__init__",
          [](attend::Encoder* self, const std::string& directory, const std::string& isa, const std::string& compute_type,
             int threads, int inter_threads, int intra_threads, std::int64_t max_batch_size, std::int64_t max_batch_tokens,
             std::int64_t max_length, const std::string& pooling) {
            attend::EncoderOptions o;
            o.isa = isa, o.compute_type = compute_type, o.pooling = pooling;
            o.threads = threads, o.inter_threads = inter_threads, o.intra_threads = intra_threads;
            o.max_batch_size = max_batch_size, o.max_batch_tokens = max_batch_tokens, o.max_length = max_length;
            nb::gil_scoped_release release;
            new (self) attend::Encoder(directory, o);
          },
          nb::arg("directory"), nb::kw_only(), nb::arg("isa") = "", nb::arg("compute_type") = "default", nb::arg("threads") = 0,
          nb::arg("inter_threads") = 0, nb::arg("intra_threads") = 0, nb::arg("max_batch_size") = 32,
          nb::arg("max_batch_tokens") = 8192, nb::arg("max_length") = 0, nb::arg("pooling") = "",
          "Loads the model. Raises RuntimeError naming the file and field at fault.")
      .def(
          "embed",
          [](const attend::Encoder& e, const std::vector<std::string>& texts, int normalize, const std::string& prompt_name,
             std::optional<std::string> prompt) {
            attend::EmbedOptions o;
            o.normalize = normalize, o.prompt_name = prompt_name, o.prompt = std::move(prompt);
            auto rows = running([&] { return e.embed(texts, o); });
            return matrix(std::move(rows), static_cast<std::size_t>(e.encoder_info().embedding_dim));
          },
          nb::arg("texts"), nb::arg("normalize") = -1, nb::arg("prompt_name") = "", nb::arg("prompt") = nb::none(),
          "Sentence embeddings [len(texts), embedding_dim] float32. normalize: -1 as the model, 0 no, 1 yes; "
          "prompt (a text put before each), else prompt_name (one of the model's), else the model's default prompt.")
      .def(
          "prompt_text",
          [](const attend::Encoder& e, const std::string& prompt_name, std::optional<std::string> prompt) {
            attend::EmbedOptions o;
            o.prompt_name = prompt_name, o.prompt = std::move(prompt);
            return running([&] { return e.prompt_text(o); });
          },
          nb::arg("prompt_name") = "", nb::arg("prompt") = nb::none(),
          "The text embed puts before each text for these arguments ('' for none).")
      .def(
          "embed_ids",
          [](const attend::Encoder& e, nb::handle ids, int normalize) {
            const Ids rows_in = IdRows(ids, "ids").vectors();
            auto rows = running([&] { return e.embed_ids(rows_in, {normalize}); });
            return matrix(std::move(rows), static_cast<std::size_t>(e.encoder_info().embedding_dim));
          },
          nb::arg("ids"), nb::arg("normalize") = -1, "Sentence embeddings of token ids.")
      .def(
          "attention_heads",
          [](const attend::Encoder& e, nb::handle ids, nb::handle token_type_ids) {
            const Ids rows = IdRows(nb::make_tuple(ids), "ids").vectors();
            const Ids types = optional_ids(token_type_ids.is_none() ? token_type_ids : nb::make_tuple(token_type_ids),
                                           "token_type_ids");
            return running([&] { return e.attention_heads(rows[0], types.empty() ? std::vector<std::int32_t>{} : types[0]); });
          },
          nb::arg("ids"), nb::arg("token_type_ids") = nb::none(),
          "Every layer and head's self-attention of one sequence of ids: an AttentionHeads whose encoder_self is "
          "[layers, heads, length, length] (no decoder: decoder_self and cross are empty).")
      .def(
          "text_attention_heads",
          [](const attend::Encoder& e, const std::string& text, std::optional<std::string> pair) {
            return running([&] { return pair ? e.text_attention_heads(text, *pair) : e.text_attention_heads(text); });
          },
          nb::arg("text"), nb::arg("pair") = nb::none(),
          "The same for a text, or a sentence pair, tokenized as embed and classify tokenize it: source_texts and "
          "source_sequence_ids (0 sentence A, 1 sentence B, -1 a special token) are filled too.")
      .def(
          "forward_ids",
          [](const attend::Encoder& e, nb::handle ids, nb::handle token_type_ids) {
            const Ids rows = IdRows(ids, "ids").vectors();
            const Ids types = optional_ids(token_type_ids, "token_type_ids");
            auto out = running([&] { return e.forward_ids(rows, types); });
            const auto hidden = static_cast<std::size_t>(e.encoder_info().hidden_size);
            std::size_t longest = 0;
            for (const auto& o : out) longest = std::max(longest, static_cast<std::size_t>(o.length));
            // [batch, longest, hidden], zero past each sequence's length.
            std::vector<float> states(out.size() * longest * hidden, 0.0f), pooled;
            for (std::size_t b = 0; b < out.size(); ++b) {
              std::copy(out[b].last_hidden_state.begin(), out[b].last_hidden_state.end(), states.begin() + b * longest * hidden);
              pooled.insert(pooled.end(), out[b].pooler_output.begin(), out[b].pooler_output.end());
            }
            auto* owned = new std::vector<float>(std::move(states));
            nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
            nb::object last = nb::cast(nb::ndarray<nb::numpy, float>(owned->data(), {out.size(), longest, hidden}, owner));
            // An empty batch of a model with a pooler still has pooler_output [0, hidden].
            nb::object pooler = e.encoder_info().has_pooler ? nb::cast(to_numpy(std::move(pooled), out.size(), hidden))
                                                             : nb::none();
            return nb::make_tuple(last, pooler);
          },
          nb::arg("ids"), nb::arg("token_type_ids") = nb::none(),
          "CTranslate2's forward_batch over ids: (last_hidden_state [batch, longest, hidden] with zeros past each length, "
          "pooler_output [batch, hidden] or None).")
      .def(
          "classify_ids",
          [](const attend::Encoder& e, nb::handle ids, nb::handle token_type_ids) {
            const Ids rows = IdRows(ids, "ids").vectors();
            const Ids types = optional_ids(token_type_ids, "token_type_ids");
            return classifications(running([&] { return e.classify_ids(rows, types); }), e.encoder_info().labels.size());
          },
          nb::arg("ids"), nb::arg("token_type_ids") = nb::none(), "(logits, scores, labels) of a classifier.")
      .def(
          "classify",
          [](const attend::Encoder& e, const std::vector<std::string>& texts) {
            return classifications(running([&] { return e.classify(texts); }), e.encoder_info().labels.size());
          },
          nb::arg("texts"), "(logits, scores, labels) of texts.")
      .def(
          "classify_pairs",
          [](const attend::Encoder& e, const std::vector<std::pair<std::string, std::string>>& pairs) {
            return classifications(running([&] { return e.classify_pairs(pairs); }), e.encoder_info().labels.size());
          },
          nb::arg("pairs"), "(logits, scores, labels) of sentence pairs (cross-encoders).")
      .def(
          "tokenize",
          [](const attend::Encoder& e, const std::string& text, std::optional<std::string> pair) {
            attend::TokenizedText t = running([&] { return pair ? e.tokenize_pair(text, *pair) : e.tokenize(text); });
            return nb::make_tuple(t.ids, t.type_ids, t.tokens, t.truncated);
          },
          nb::arg("text"), nb::arg("pair") = nb::none(), "(ids, type_ids, tokens, truncated) as embed tokenizes.")
      .def("token_to_id", &attend::Encoder::token_to_id, nb::arg("token"),
           "A token's id in the model's vocabulary (its unknown token's for an unknown one).")
      .def_prop_ro("encoder_info", &attend::Encoder::encoder_info, "Sizes, pooling, normalisation and labels.")
      .def("info", &attend::Encoder::info, "What loading found and checked (`attend inspect`).")
      .def("plan", &attend::Encoder::plan_description, "The execution plan (`attend plan`).")
      .def_prop_ro("inter_threads", &attend::Encoder::inter_threads, "Batches run at once.")
      .def_prop_ro("intra_threads", &attend::Encoder::intra_threads, "Compute threads per batch.");

  m.def("is_encoder_model", &attend::is_encoder_model, nb::arg("directory"),
        "Whether a directory holds an encoder-only model (BERT family) rather than an encoder-decoder.");
}

}  // namespace attend::python
