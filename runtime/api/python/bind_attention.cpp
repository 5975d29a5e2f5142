// attend._attend.AttentionHeads: every layer and head's attention of one sentence
// (return_attention_heads, Translator.attention_heads). The maps are NumPy arrays over
// the C++ result's own memory (read-only, no copy), alive as long as the object is.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "attend/attend.hpp"
#include "bindings.hpp"

namespace attend::python {
namespace {

using Maps = nb::ndarray<nb::numpy, const float, nb::ndim<4>>;

Maps as_array(const attend::AttentionMaps& m) {
  static const float none = 0.0f;  // an empty map still needs an address
  const std::size_t shape[4] = {static_cast<std::size_t>(m.layers), static_cast<std::size_t>(m.heads),
                                static_cast<std::size_t>(m.rows), static_cast<std::size_t>(m.columns)};
  return Maps(m.weights.empty() ? &none : m.weights.data(), 4, shape, nb::handle());
}

}  // namespace

void bind_attention_heads(nb::module_& m) {
  using A = attend::AttentionHeads;
  const auto array = nb::rv_policy::reference_internal;  // the array keeps its AttentionHeads alive
  nb::class_<A>(m, "AttentionHeads",
                "Every layer and head's attention of one sentence, float32 arrays [layers, heads, rows, columns]. "
                "Decoder row t is the decoding step that read decoder_input_tokens[t] and produced target_tokens[t].")
      .def_prop_ro("encoder_self", [](const A& a) { return as_array(a.encoder_self); }, array,
                   "[encoder layers, heads, source, source].")
      .def_prop_ro("decoder_self", [](const A& a) { return as_array(a.decoder_self); }, array,
                   "[decoder layers, heads, target, target]: causal, 0 above the diagonal.")
      .def_prop_ro("cross", [](const A& a) { return as_array(a.cross); }, array, "[decoder layers, heads, target, source].")
      .def_ro("source_ids", &A::source_ids, "As the encoder saw them, the model's BOS/EOS included.")
      .def_ro("target_ids", &A::target_ids, "One per decoding step: the output, a final end token included.")
      .def_ro("decoder_input_ids", &A::decoder_input_ids, "The decoder start token, then target_ids but the last.")
      .def_ro("source_tokens", &A::source_tokens, "source_ids as the model's own tokens (tokenizer.json, SentencePiece or vocabulary).")
      .def_ro("target_tokens", &A::target_tokens, "target_ids as the model's own tokens.")
      .def_ro("decoder_input_tokens", &A::decoder_input_tokens, "decoder_input_ids as the model's own tokens.")
      .def_ro("source_type_ids", &A::source_type_ids, "Encoder-only models: the token type ids given (empty: all 0).")
      .def_ro("source_sequence_ids", &A::source_sequence_ids,
              "Encoder-only models given text: each token's text, 0 (sentence A), 1 (a pair's B), -1 a special token.")
      .def_ro("source_texts", &A::source_texts, "The input text, or a pair's two texts, where given as text.")
      .def_ro("model", &A::model, "The model directory the maps came from.")
      .def(
          "save",
          [](const A& a, const std::string& path, std::int64_t line) {
            try {
              nb::gil_scoped_release release;
              attend::save_attention_npz(a, path, line);
            } catch (const attend::Error& e) {
              PyErr_SetString(PyExc_OSError, e.what());
              throw nb::python_error();
            }
          },
          nb::arg("path"), nb::arg("line") = -1,
          "Writes the .npz `attend translate --attention-all` writes (np.load reads it; line ≥ 0 is stored too). "
          "OSError naming the path if it cannot be written.")
      .def("__repr__", [](const A& a) {
        return "AttentionHeads(" + std::to_string(a.source_ids.size()) + " source tokens, " +
               std::to_string(a.target_ids.size()) + " target tokens, " + std::to_string(a.encoder_self.layers) + "+" +
               std::to_string(a.decoder_self.layers) + " layers, " + std::to_string(a.encoder_self.heads) + " heads)";
      });
}

}  // namespace attend::python
