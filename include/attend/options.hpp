// attend::TranslationOptions — what a caller may ask of one translation call — and the
// description of each option (name, flag, range, help) that the C API, the CLI and the
// validation messages are generated from. Plain data: the runtime includes it too.
//
// The semantics are CTranslate2's translate_batch (4.8), option for option; where attend
// differs or refuses a combination, the field's comment or the validation message says so.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "attend/error.hpp"
#include "attend/limits.h"
#include "attend/options.h"

namespace attend {

#define ATTEND_OPTION_CPP_TYPE_INT std::int64_t
#define ATTEND_OPTION_CPP_TYPE_FLOAT float
#define ATTEND_OPTION_CPP_TYPE_BOOL bool
#define ATTEND_OPTION_CPP_TYPE_U64 std::uint64_t

// One token of a sentence as decoding chooses it (TranslationOptions::on_token).
struct TokenStep {
  std::size_t index = 0;        // the sentence, as on_result numbers it (first_index + position)
  std::int64_t step = 0;        // position in the output, 0-based (forced prefix tokens included)
  std::int32_t id = 0;          // target id; the end token included
  float log_prob = 0;           // log p(id)
  bool is_last = false;         // the end token, or max_length reached
  std::int64_t hypothesis = 0;  // sampling with num_hypotheses > 1: which draw
};

struct TranslationOptions {
#define ATTEND_DECLARE_OPTION(kind, name, def, flag, lo, lo_open, hi, hi_open, help) \
  ATTEND_OPTION_CPP_TYPE_##kind name = static_cast<ATTEND_OPTION_CPP_TYPE_##kind>(def);
  ATTEND_TRANSLATION_OPTIONS(ATTEND_DECLARE_OPTION)
#undef ATTEND_DECLARE_OPTION

  // Token sequences never generated (target vocabulary tokens; a single token is never
  // generated at all). Unknown tokens, an empty sequence and an empty token are errors.
  std::vector<std::vector<std::string>> suppress_sequences;
  // Tokens that end a hypothesis, as CTranslate2's end_token: unset, the model's
  // end-of-sequence; given, they replace it (include it to keep it); an empty list, no
  // end token at all (every hypothesis runs to max_length). An empty token is an error.
  std::optional<std::vector<std::string>> end_token;
  // Hugging Face models with language codes (translate_text): the model's own codes —
  // eng_Latn (NLLB), en (M2M100), en_XX (mBART-50), fra or >>fra<< (multilingual Marian,
  // target only). "" for none; a code the model lacks is an error listing its codes.
  std::string source_lang, target_lang;

  // Streaming (greedy search and sampling): called with each token as it is chosen, on
  // the thread translating its batch — with inter_threads > 1, several threads, but one
  // call at a time (as on_result), so the callback needs no locking of its own. Returning true stops that sentence (with num_hypotheses
  // sampled draws: that draw) at this token, as CTranslate2's callback does: its
  // hypothesis keeps the tokens it has, unfinished; every other sentence goes on. The
  // value returned for a last token (is_last) changes nothing.
  std::function<bool(const TokenStep&)> on_token;
};

// One option as the description list gives it.
struct OptionSpec {
  enum class Kind { integer, real, flag, seed };
  Kind kind;
  std::string_view name;  // the field: "beam_size"
  std::string_view flag;  // `attend translate`'s: "--beam" ("" if none)
  double lowest, highest;
  bool lowest_open, highest_open;
  std::string_view help;

  // "an integer ≥ 1", "a number in (0, 1]", "a finite number" — for messages.
  std::string range() const;
  bool accepts(double value) const;
};

// Every scalar option, in the order of ATTEND_TRANSLATION_OPTIONS.
inline constexpr OptionSpec kTranslationOptionSpecs[] = {
#define ATTEND_OPTION_KIND_INT OptionSpec::Kind::integer
#define ATTEND_OPTION_KIND_FLOAT OptionSpec::Kind::real
#define ATTEND_OPTION_KIND_BOOL OptionSpec::Kind::flag
#define ATTEND_OPTION_KIND_U64 OptionSpec::Kind::seed
#define ATTEND_OPTION_SPEC(kind, name, def, flag, lo, lo_open, hi, hi_open, help) \
  {ATTEND_OPTION_KIND_##kind, #name, flag, lo, hi, lo_open != 0, hi_open != 0, help},
    ATTEND_TRANSLATION_OPTIONS(ATTEND_OPTION_SPEC)
#undef ATTEND_OPTION_SPEC
};

// The spec of a named option; throws attend::Error for an unknown name.
const OptionSpec& option_spec(std::string_view name);

// An option (or a combination) that cannot be honoured. `option()` is the field's name,
// so that a front-end can name its own flag instead; what() says the same with the field.
class ATTEND_API OptionError : public Error {
 public:
  OptionError(std::string option, std::string value, std::string requirement)
      : Error(option + " = " + value + ": " + requirement),
        option_(std::move(option)),
        value_(std::move(value)),
        requirement_(std::move(requirement)) {}
  const std::string& option() const { return option_; }
  const std::string& value() const { return value_; }
  const std::string& requirement() const { return requirement_; }

 private:
  std::string option_, value_, requirement_;
};

// ---- inline definitions (no library code needed to describe options) ----

inline std::string OptionSpec::range() const {
  auto number = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  const bool low = lowest > -ATTEND_UNBOUNDED, high = highest < ATTEND_UNBOUNDED;
  switch (kind) {
    case Kind::flag: return "true or false";
    case Kind::seed: return "an integer ≥ 0";
    case Kind::integer:
      if (low && !high) return "an integer ≥ " + number(lowest);
      return "an integer in [" + number(lowest) + ", " + number(highest) + "]";
    case Kind::real:
      if (!low && !high) return "a finite number";
      if (low && !high) return std::string("a finite number ") + (lowest_open ? "> " : "≥ ") + number(lowest);
      return std::string("a number in ") + (lowest_open ? "(" : "[") + number(lowest) + ", " + number(highest) +
             (highest_open ? ")" : "]");
  }
  return {};
}

inline bool OptionSpec::accepts(double v) const {
  if (!std::isfinite(v)) return false;
  if (lowest_open ? !(v > lowest) : !(v >= lowest)) return false;
  if (highest_open ? !(v < highest) : !(v <= highest)) return false;
  return true;
}

inline const OptionSpec& option_spec(std::string_view name) {
  for (const OptionSpec& s : kTranslationOptionSpecs)
    if (s.name == name) return s;
  throw Error("no translation option is called '" + std::string(name) + "'");
}

}  // namespace attend
