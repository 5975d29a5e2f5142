// attend._attend.Translator, its options and results. Every call that translates or
// scores releases the GIL for the whole computation (arguments are converted before,
// results after), so Python threads sharing one translator run in parallel.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "attend/attend.hpp"
#include "bindings.hpp"

namespace attend::python {
namespace {

using Ids = std::vector<std::vector<std::int32_t>>;
using Tokens = std::vector<std::vector<std::string>>;

// attend::Error during a call is about the caller's options or inputs: ValueError.
// A Python exception raised by a callback passes through unchanged.
template <class F>
auto translating(F&& f) {
  try {
    nb::gil_scoped_release release;
    return f();
  } catch (const attend::Error& e) {
    raise_value_error(e);
  }
}

// A Python callable as TranslationOptions::on_token: called with the GIL held; its
// truth value stops that sentence (that draw), as CTranslate2's callback; the others go on. The engine copies options without the GIL, so the
// callable sits behind a shared_ptr (copies touch no Python reference count) that
// takes the GIL to release it.
void set_on_token(attend::TranslationOptions& o, nb::handle on_token) {
  if (on_token.is_none()) return;
  std::shared_ptr<nb::object> callback(new nb::object(nb::borrow(on_token)), [](nb::object* p) {
    nb::gil_scoped_acquire gil;
    delete p;
  });
  o.on_token = [callback](const attend::TokenStep& s) {
    nb::gil_scoped_acquire gil;
    const nb::object stop = (*callback)(s);
    const int truth = PyObject_IsTrue(stop.ptr());
    if (truth < 0) throw nb::python_error();
    return truth == 1;
  };
}

void bind_options(nb::module_& m) {
  using O = attend::TranslatorOptions;
  nb::class_<O>(m, "TranslatorOptions", "How a Translator compiles its plan: threads and the limits it accepts.")
      .def(nb::init<>())
      .def_rw("threads", &O::threads, "All compute threads (0: one per core).")
      .def_rw("inter_threads", &O::inter_threads, "Batches translated at once (0: chosen for the cores).")
      .def_rw("intra_threads", &O::intra_threads, "Compute threads per batch (0: threads / inter_threads).")
      .def_rw("max_batch_size", &O::max_batch_size, "Sentences per batch.")
      .def_rw("max_batch_tokens", &O::max_batch_tokens, "Padded source tokens per batch (0: no cap).")
      .def_rw("max_source_length", &O::max_source_length, "Longer sources are rejected (0: the model's limit).")
      .def_rw("max_target_length", &O::max_target_length, "Upper bound of TranslationOptions.max_length.")
      .def_rw("max_beam_size", &O::max_beam_size, "Upper bound of TranslationOptions.beam_size.");

  // Every scalar option from the one description list (include/attend/options.h), so a
  // new option reaches Python with its help text and no change here.
  using T = attend::TranslationOptions;
  nb::class_<T>(m, "TranslationOptions",
                "Decoding options of one call, CTranslate2's semantics (include/attend/options.h describes each).")
      .def(nb::init<>())
#define ATTEND_BIND_OPTION(kind, name, def, flag, lo, lo_open, hi, hi_open, help) .def_rw(#name, &T::name, help)
      ATTEND_TRANSLATION_OPTIONS(ATTEND_BIND_OPTION)
#undef ATTEND_BIND_OPTION
      .def_rw("source_lang", &T::source_lang,
              "Hugging Face models with language codes: the source language in the model's own codes (eng_Latn, en, "
              "en_XX), its token placed as the transformers tokenizer places it (translate_text); \"\": none.")
      .def_rw("target_lang", &T::target_lang,
              "The target language (fra_Latn, fr, fr_XX, fra or >>fra<<): the forced first target token, or "
              "Marian's >>fra<< source token (translate_text); \"\": none.")
      .def_rw("suppress_sequences", &T::suppress_sequences, "Token sequences never generated.")
      .def_rw("end_token", &T::end_token, "Tokens that end a hypothesis (None: the model's end-of-sequence; []: no end token, as CTranslate2).");
}

void bind_results(nb::module_& m) {
  using H = attend::Hypothesis;
  nb::class_<H>(m, "Hypothesis", "One output sequence with its scores.")
      .def_ro("ids", &H::ids, "Target ids (a target prefix included); the end token only with return_end_token.")
      .def_ro("text", &H::text, "translate_text: the detokenized text.")
      .def_ro("tokens", &H::tokens, "translate_tokens: vocabulary tokens.")
      .def_ro("score", &H::score, "CTranslate2's score: Σ log p of the generated tokens / length^length_penalty.")
      .def_ro("log_prob", &H::log_prob, "Σ token_log_probs.")
      .def_ro("token_log_probs", &H::token_log_probs, "One per id, then the end token's if finished and left out.")
      .def_ro("finished", &H::finished, "Ended with end-of-sequence (not cut at max_length).")
      .def_ro("end_id", &H::end_id, "finished: the end token it ended with (also when ids leave it out); else -1.")
      .def_ro("attention", &H::attention, "return_attention: [target token][source token].");
  nb::class_<attend::TranslationResult>(m, "TranslationResult", "The hypotheses of one source, best first.")
      .def_ro("hypotheses", &attend::TranslationResult::hypotheses, "Best first.")
      .def_ro("attention_heads", &attend::TranslationResult::attention_heads,
              "return_attention_heads: every layer and head along hypotheses[0] (AttentionHeads).");
  using S = attend::ScoringResult;
  nb::class_<S>(m, "ScoringResult", "Log-probabilities of a given target.")
      .def_ro("ids", &S::ids, "The target as scored, end-of-sequence excluded.")
      .def_ro("tokens", &S::tokens, "score_tokens: the target's tokens.")
      .def_ro("log_probs", &S::log_probs, "log p of each target id, then of end-of-sequence.")
      .def_ro("log_prob", &S::log_prob, "Their sum.");
  using P = attend::StepProfile;
  nb::class_<P>(m, "StepProfile", "Time spent in one plan step, summed over calls.")
      .def_ro("phase", &P::phase, "\"encoder\", \"decoder\" or \"search\".")
      .def_ro("kind", &P::kind, "\"gemm\", \"self_attention\", \"layer_norm\", …")
      .def_ro("name", &P::name, "The step, e.g. \"decoder.layers.3.fc1\".")
      .def_ro("seconds", &P::seconds, "Seconds.")
      .def("__repr__", [](const P& p) { return "StepProfile(" + p.phase + ", " + p.name + ", " + std::to_string(p.seconds) + " s)"; });
  using K = attend::TokenStep;
  nb::class_<K>(m, "TokenStep", "One token as decoding chooses it (the on_token callback's argument).")
      .def_ro("index", &K::index, "The sentence's index in the call.")
      .def_ro("step", &K::step, "Position in the output, 0-based.")
      .def_ro("id", &K::id, "Target id (end-of-sequence included).")
      .def_ro("log_prob", &K::log_prob, "log p(id).")
      .def_ro("is_last", &K::is_last, "The end token, or max_length reached.")
      .def_ro("hypothesis", &K::hypothesis, "Sampling with num_hypotheses > 1: which draw.");
}

}  // namespace

void bind_option_specs(nb::module_& m) {
  using S = attend::OptionSpec;
  nb::class_<S>(m, "OptionSpec",
                "One decoding option as include/attend/options.h describes it — the list `attend translate`'s "
                "flags, the C API and `python -m attend.ray translate`'s flags are all made from.")
      .def_prop_ro("name", [](const S& s) { return std::string(s.name); }, "The field of TranslationOptions (\"beam_size\").")
      .def_prop_ro("flag", [](const S& s) { return std::string(s.flag); }, "The `attend translate` flag (\"--beam\"), or \"\".")
      .def_prop_ro("kind", [](const S& s) {
        switch (s.kind) {
          case S::Kind::integer: return "integer";
          case S::Kind::real: return "real";
          case S::Kind::flag: return "flag";
          case S::Kind::seed: return "seed";
        }
        return "";
      }, "\"integer\", \"real\", \"flag\" (true or false) or \"seed\" (an integer ≥ 0).")
      .def_prop_ro("help", [](const S& s) { return std::string(s.help); }, "One line of help.")
      .def_prop_ro("range", &S::range, "What it accepts, for messages (\"an integer in [1, 256]\").")
      .def("accepts", &S::accepts, nb::arg("value"), "Whether `value` is in the accepted range.")
      .def("__repr__", [](const S& s) { return "OptionSpec(" + std::string(s.name) + ", " + std::string(s.flag) + ")"; });
  m.def(
      "translation_option_specs",
      [] { return std::vector<S>(std::begin(attend::kTranslationOptionSpecs), std::end(attend::kTranslationOptionSpecs)); },
      "Every scalar decoding option, in the order of include/attend/options.h (defaults: TranslationOptions()).");
}

void bind_translator(nb::module_& m) {
  bind_options(m);
  bind_results(m);
  using attend::TranslationOptions;
  nb::class_<attend::Translator>(m, "Translator",
                                 "Compiles a Model into a static execution plan for the given limits and translates "
                                 "with it. Thread-safe: concurrent calls each get their own workspace.")
      .def(
          "__init__",
          [](attend::Translator* self, const attend::Model& model, const attend::TranslatorOptions& options) {
            // The model is loaded and checked: what can fail here is a limit the options ask for.
            translating([&] { new (self) attend::Translator(model, options); });
          },
          nb::arg("model"), nb::arg("options") = attend::TranslatorOptions(),
          "Compiles the plan (ValueError naming the limit if the options ask for one it cannot have).")
      .def(
          "translate_ids",
          [](const attend::Translator& t, nb::handle sources, TranslationOptions options, nb::handle target_prefixes,
             nb::handle on_token, std::size_t first_index) {
            const IdRows src(sources, "source");
            const IdRows prefixes(target_prefixes.is_none() ? nb::list() : nb::borrow(target_prefixes), "target_prefix");
            set_on_token(options, on_token);
            return translating([&] { return t.translate_id_views(src.views(), options, prefixes.views(), {}, first_index); });
          },
          nb::arg("sources"), nb::arg("options") = TranslationOptions(), nb::arg("target_prefixes") = nb::none(),
          nb::arg("on_token") = nb::none(), nb::arg("first_index") = 0,
          "Translates token-id sources (lists of ints or integer ndarrays, given to the encoder as they are; int32 "
          "arrays with contiguous rows are read in place). "
          "`on_token(TokenStep) -> bool` streams tokens (beam_size 1); `first_index` numbers the sentences "
          "(TokenStep.index, error messages) and seeds sampling. ValueError names a bad option or input.")
      .def(
          "translate_tokens",
          [](const attend::Translator& t, nb::handle sources, TranslationOptions options, nb::handle target_prefixes,
             nb::handle on_token, std::size_t first_index) {
            const Tokens src = token_rows(sources, "source");
            const Tokens prefixes = target_prefixes.is_none() ? Tokens() : token_rows(target_prefixes, "target_prefix", true);
            set_on_token(options, on_token);
            return translating([&] { return t.translate_tokens(src, options, prefixes, {}, first_index); });
          },
          nb::arg("sources"), nb::arg("options") = TranslationOptions(), nb::arg("target_prefixes") = nb::none(),
          nb::arg("on_token") = nb::none(), nb::arg("first_index") = 0,
          "Translates vocabulary tokens (unknown ones map to <unk>); a None prefix is no prefix.")
      .def(
          "translate_text",
          [](const attend::Translator& t, nb::handle sources, TranslationOptions options, nb::handle target_prefixes,
             nb::handle on_token, std::size_t first_index) {
            const std::vector<std::string> src = strings(sources, "source");
            const std::vector<std::string> prefixes =
                target_prefixes.is_none() ? std::vector<std::string>() : strings(target_prefixes, "target_prefix");
            set_on_token(options, on_token);
            return translating([&] { return t.translate_text(src, options, prefixes, {}, first_index); });
          },
          nb::arg("sources"), nb::arg("options") = TranslationOptions(), nb::arg("target_prefixes") = nb::none(),
          nb::arg("on_token") = nb::none(), nb::arg("first_index") = 0, "Translates text through the model's SentencePiece models.")
      .def(
          "score_ids",
          [](const attend::Translator& t, nb::handle sources, nb::handle targets, std::int64_t max_input_length) {
            const Ids src = IdRows(sources, "source").vectors(), tgt = IdRows(targets, "target").vectors();
            return translating([&] { return t.score_ids(src, tgt, max_input_length); });
          },
          nb::arg("sources"), nb::arg("targets"), nb::arg("max_input_length") = 1024,
          "Teacher-forced log-probabilities of each target id (then of end-of-sequence) given its source.")
      .def(
          "score_tokens",
          [](const attend::Translator& t, nb::handle sources, nb::handle targets, std::int64_t max_input_length) {
            const Tokens src = token_rows(sources, "source"), tgt = token_rows(targets, "target");
            return translating([&] { return t.score_tokens(src, tgt, max_input_length); });
          },
          nb::arg("sources"), nb::arg("targets"), nb::arg("max_input_length") = 1024, "score_ids with vocabulary tokens in and out.")
      .def(
          "attention_heads",
          [](const attend::Translator& t, nb::handle source, nb::handle target) {
            const Ids src = IdRows(nb::make_tuple(source), "source").vectors();
            const Ids tgt = IdRows(nb::make_tuple(target), "target").vectors();
            return translating([&] { return t.attention_heads(src[0], tgt[0]); });
          },
          nb::arg("source"), nb::arg("target"),
          "Every layer and head's attention along a given output: source ids through the encoder, the decoder "
          "teacher-forced over target ids (end them with the end token to see the step that ends it).")
      .def(
          "validate", [](const attend::Translator& t, const TranslationOptions& options) { translating([&] { t.validate(options); }); },
          nb::arg("options"), "Raises ValueError naming the option if these options cannot be used with this translator.")
      .def_prop_ro("model", &attend::Translator::model, "The model it translates with.")
      .def_prop_ro("options", &attend::Translator::options, "The options it was made with.")
      .def_prop_ro("max_source_length", &attend::Translator::max_source_length, "The longest source it accepts.")
      .def_prop_ro("inter_threads", &attend::Translator::inter_threads, "Batches translated at once (the split chosen).")
      .def_prop_ro("intra_threads", &attend::Translator::intra_threads, "Compute threads per batch.")
      .def("plan_description", &attend::Translator::plan_description,
           "The static execution plan: steps, shapes, arena offsets, FLOPs and bytes per step.")
      .def_prop_ro("arena_bytes", &attend::Translator::arena_bytes, "Bytes of one workspace's arena.")
      .def("set_profiling", &attend::Translator::set_profiling, nb::arg("on"), "Times every plan step from now on (or stops).")
      .def("profile", &attend::Translator::profile, "Seconds per plan step (and the search), summed since the last reset.")
      .def("reset_profile", &attend::Translator::reset_profile, "Zeroes the profile.");
}

}  // namespace attend::python
