// attend.Model and what describes it (ModelInfo, TensorInfo, SpecialIds).
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>

#include "attend/attend.hpp"
#include "bindings.hpp"

namespace attend::python {
namespace {

attend::Model::Side side_of(const std::string& side) {
  if (side == "source") return attend::Model::Side::source;
  if (side == "target") return attend::Model::Side::target;
  throw nb::value_error(("side must be 'source' or 'target', not '" + side + "'").c_str());
}

attend::LoadOptions load_options(const std::string& isa, const std::string& compute_type,
                                 const std::string& kv_cache_type) {
  attend::LoadOptions o;
  o.isa = isa;
  o.compute_type = compute_type;
  o.kv_cache_type = kv_cache_type;
  return o;
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<attend::TensorInfo>(m, "TensorInfo", "One tensor of a model file: name, stored type, shape.")
      .def_ro("name", &attend::TensorInfo::name, "The tensor's name in the file.")
      .def_ro("dtype", &attend::TensorInfo::dtype, "Its stored type (\"float32\", \"int8\", …).")
      .def_ro("shape", &attend::TensorInfo::shape, "Its shape, as text (\"[512, 2048]\").")
      .def_ro("elements", &attend::TensorInfo::elements, "Number of elements.")
      .def("__repr__", [](const attend::TensorInfo& t) { return "TensorInfo(" + t.name + ", " + t.dtype + ", " + t.shape + ")"; });

  nb::class_<attend::ModelInfo>(m, "ModelInfo", "What loading a model found and checked (`attend inspect`).")
      .def_ro("directory", &attend::ModelInfo::directory, "The model directory, or \"preset NAME\".")
      .def_ro("format", &attend::ModelInfo::format, "The file format, e.g. \"CTranslate2 model.bin v2 …\".")
      .def_ro("file_bytes", &attend::ModelInfo::file_bytes, "Size of the weights file in bytes.")
      .def_ro("parameters", &attend::ModelInfo::parameters, "Number of parameters.")
      .def_ro("config_json", &attend::ModelInfo::config_json, "The architecture, as attend's config.json.")
      .def_ro("tensors", &attend::ModelInfo::tensors, "Every tensor of the file.")
      .def_ro("checks", &attend::ModelInfo::checks, "What loading verified.")
      .def_ro("text_tokenizer", &attend::ModelInfo::text_tokenizer, "The SentencePiece models, or empty.")
      .def_ro("vocabulary", &attend::ModelInfo::vocabulary, "The vocabulary files, or empty.")
      .def_ro("isa", &attend::ModelInfo::isa, "The kernels the weights are packed for (avx512, avx2, sse2).")
      .def_ro("compute_type", &attend::ModelInfo::compute_type, "The arithmetic chosen (\"float32\", …).")
      .def_ro("compute_type_reason", &attend::ModelInfo::compute_type_reason, "Why that compute type.")
      .def_ro("kv_cache_type", &attend::ModelInfo::kv_cache_type,
              "The decoder's attention caches chosen: \"float32\" or \"bfloat16\".")
      .def_ro("vocabulary_map", &attend::ModelInfo::vocabulary_map,
              "\"vmap.txt (N rules)\" when the model has a vocabulary map (use_vmap), else empty.")
      .def("__repr__", [](const attend::ModelInfo& i) {
        return "ModelInfo(" + i.directory + ", " + i.format + ", " + std::to_string(i.parameters) + " parameters, " + i.isa +
               ", " + i.compute_type + ")";
      });

  nb::class_<attend::Model::SpecialIds>(m, "SpecialIds", "The model's special token ids.")
      .def_ro("pad", &attend::Model::SpecialIds::pad, "Padding.")
      .def_ro("bos", &attend::Model::SpecialIds::bos, "Beginning of sequence (-1: the model has none).")
      .def_ro("eos", &attend::Model::SpecialIds::eos, "End of sequence.")
      .def_ro("unk", &attend::Model::SpecialIds::unk, "Unknown token.")
      .def_ro("decoder_start", &attend::Model::SpecialIds::decoder_start, "The decoder's first input.");

  nb::class_<attend::Model>(m, "Model",
                            "A loaded model: weights packed for this CPU's kernels, tokenizers if the directory has "
                            "them. Immutable and shared: one Model serves any number of translators and threads.")
      .def_static(
          "load",
          [](const std::string& directory, const std::string& isa, const std::string& compute_type,
             const std::string& kv_cache_type, const std::string& decoding_rules) {
            nb::gil_scoped_release release;
            attend::LoadOptions o = load_options(isa, compute_type, kv_cache_type);
            o.decoding_rules = decoding_rules;
            return attend::Model::load(directory, o);
          },
          nb::arg("directory"), nb::kw_only(), nb::arg("isa") = "", nb::arg("compute_type") = "default",
          nb::arg("kv_cache_type") = "default", nb::arg("decoding_rules") = "auto",
          "Loads a model directory in attend's format (config.json + model.safetensors) or CTranslate2's "
          "(model.bin). `isa` forces a kernel set (avx512, avx2, sse2; default: the best this CPU runs); "
          "`compute_type` is CTranslate2's (default, auto, float32, int8, …); `kv_cache_type` the decoder's "
          "attention caches (default: bfloat16 with int8/bfloat16 compute, else float32; float32; bfloat16); "
          "`decoding_rules` auto (transformers' generate() for a Hugging Face directory), transformers, ctranslate2. "
          "Raises RuntimeError naming the file and field at fault.")
      .def_static(
          "load_from_memory",
          [](const std::string& name, const nb::dict& files, const std::string& isa, const std::string& compute_type,
             const std::string& kv_cache_type) {
            std::map<std::string, std::string> contents;
            for (const auto& [file, content] : files) {
              if (!nb::isinstance<nb::str>(file)) throw nb::type_error("files: a file name must be a string");
              if (!nb::isinstance<nb::bytes>(content))
                throw nb::type_error(("files['" + nb::cast<std::string>(file) + "']: the content must be bytes").c_str());
              const auto bytes = nb::borrow<nb::bytes>(content);
              contents.emplace(nb::cast<std::string>(file), std::string(bytes.c_str(), bytes.size()));
            }
            nb::gil_scoped_release release;
            return attend::Model::load_from_memory(name, std::move(contents), load_options(isa, compute_type, kv_cache_type));
          },
          nb::arg("name"), nb::arg("files"), nb::kw_only(), nb::arg("isa") = "", nb::arg("compute_type") = "default",
          nb::arg("kv_cache_type") = "default",
          "Loads a model from files held in memory: `files` maps each file name of the model directory "
          "(\"model.bin\", \"source_vocabulary.txt\", \"vmap.txt\", …) to its bytes; nothing is read from disk. "
          "`name` stands for the directory in messages. Otherwise as load().")
      .def_static(
          "preset",
          [](const std::string& name, std::uint64_t seed, const std::string& isa, const std::string& compute_type,
             const std::string& kv_cache_type) {
            nb::gil_scoped_release release;
            return attend::Model::preset(name, seed, load_options(isa, compute_type, kv_cache_type));
          },
          nb::arg("name"), nb::arg("seed") = 1, nb::kw_only(), nb::arg("isa") = "", nb::arg("compute_type") = "default",
          nb::arg("kv_cache_type") = "default",
          "A built-in shape with deterministic random weights: \"tiny\", \"base\" (Transformer-base) or \"big\". "
          "For benchmarks and tests; it has no tokenizer, so it translates ids.")
      .def("info", &attend::Model::info, "What loading found and checked: format, tensors, parameters, kernels.")
      .def_prop_ro("has_text_tokenizer", &attend::Model::has_text_tokenizer,
                   "Whether the model has SentencePiece models (text in and out).")
      .def_prop_ro("has_vocabulary", &attend::Model::has_vocabulary,
                   "Whether the model has token vocabularies (tokens in and out).")
      .def_prop_ro("has_vocabulary_map", &attend::Model::has_vocabulary_map,
                   "Whether the model has a vocabulary map (vmap.txt): use_vmap=True works.")
      .def_prop_ro("max_positions", &attend::Model::max_positions, "The longest sequence the model takes.")
      .def_prop_ro("source_vocabulary_size", &attend::Model::source_vocabulary_size, "Source vocabulary size.")
      .def_prop_ro("target_vocabulary_size", &attend::Model::target_vocabulary_size, "Target vocabulary size.")
      .def_prop_ro("special_ids", &attend::Model::special_ids, "pad, bos, eos, unk and decoder start ids.")
      .def(
          "encode_text",
          [](const attend::Model& m, const std::string& text, const std::string& side) {
            return m.encode_text(text, side_of(side));
          },
          nb::arg("text"), nb::arg("side") = "source",
          "Text to ids through the SentencePiece model of `side` (sources get the BOS/EOS the model adds).")
      .def(
          "encode_source",
          [](const attend::Model& m, const std::string& text, const std::string& source_lang, const std::string& target_lang) {
            return m.encode_source(text, source_lang, target_lang);
          },
          nb::arg("text"), nb::kw_only(), nb::arg("source_lang") = "", nb::arg("target_lang") = "",
          "A source line to ids with the model's language tokens placed as its transformers tokenizer places them "
          "(Hugging Face M2M100, NLLB, mBART-50, multilingual Marian); raises ValueError listing the model's codes "
          "for an unknown one.")
      .def("forced_target_prefix", &attend::Model::forced_target_prefix, nb::arg("target_lang") = "",
           "The target ids every translation begins with: the target language's code, or generation_config.json's "
           "forced_bos_token_id.")
      .def("default_options", &attend::Model::default_options,
           "The options a translation starts from: a Hugging Face directory's generation_config.json defaults.")
      .def_prop_ro("has_generation_defaults", &attend::Model::has_generation_defaults,
                   "Whether default_options() are a Hugging Face directory's generate() defaults (which "
                   "attend.Translator's keywords then default to).")
      .def_prop_ro("transformers_rules", &attend::Model::transformers_rules,
                   "Whether decoding follows transformers' generate() (a Hugging Face directory).")
      .def(
          "encode_tokens",
          [](const attend::Model& m, nb::handle tokens, const std::string& side) {
            return m.encode_tokens(strings(tokens, "tokens"), side_of(side));
          },
          nb::arg("tokens"), nb::arg("side") = "source",
          "Vocabulary tokens to ids (unknown tokens map to <unk>; sources get BOS/EOS as the model asks).")
      .def("decode_text", &attend::Model::decode_text, nb::arg("ids"), "Target ids to detokenized text.")
      .def("decode_pieces", &attend::Model::decode_pieces, nb::arg("tokens"),
           "Target tokens to detokenized text (SentencePiece models), e.g. the tokens replace_unknowns fills.")
      .def(
          "decode_tokens",
          [](const attend::Model& m, const std::vector<std::int32_t>& ids, const std::string& side) {
            return m.decode_tokens(ids, side_of(side));
          },
          nb::arg("ids"), nb::arg("side") = "target", "Ids to the vocabulary tokens of `side` (target by default).")
      .def("is_empty_source", &attend::Model::is_empty_source, nb::arg("ids"),
           "Whether encoded source ids hold nothing but the special tokens the model adds (text of characters "
           "SentencePiece drops): such a source translates to an empty line.")
      .def(
          "truncate_source",
          [](const attend::Model& m, std::vector<std::int32_t> ids, std::int64_t max_length) {
            m.truncate_source(ids, max_length);
            return ids;
          },
          nb::arg("ids"), nb::arg("max_length"),
          "The encoded source cut to `max_length` ids, keeping the end-of-sequence the model appends (if any) last.")
      .def(
          "encode_source_text",
          [](const attend::Model& m, const std::string& text, std::int64_t max_length, const std::string& source_lang,
             const std::string& target_lang) {
            attend::Model::TruncatedSource t = m.encode_source_text(text, max_length, false, source_lang, target_lang);
            return nb::make_tuple(t.ids, t.length, t.more, t.truncated);
          },
          nb::arg("text"), nb::arg("max_length"), nb::arg("source_lang") = "", nb::arg("target_lang") = "",
          "(ids, length, more, truncated): truncate_source(encode_text(text), max_length) — the same ids — "
          "tokenizing only as much of a long text as they need; `length` counts the whole text's ids (more: "
          "at least that many).")
      .def("__repr__", [](const attend::Model& m) { return "attend.Model(" + m.info().directory + ")"; });
}

}  // namespace attend::python
