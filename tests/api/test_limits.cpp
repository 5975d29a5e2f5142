// Every setting of a translator and an encoder has one range (include/attend/limits.h),
// the same in C, C++ and Python (and the CLI's flags): a value outside is refused with
// an error naming the field — never clamped, never "no cap", never a message about an
// engine field the caller did not set.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "api_fixture.hpp"
#include "attend/attend.h"
#include "attend/attend.hpp"
#include "attend/limits.h"

namespace {

using attend::api_test::kModel;
using Catch::Matchers::Contains;
const std::string kEncoder = std::string(ATTEND_SOURCE_DIR) + "/tests/data/encoders/bert";  // 64 positions

struct Case {
  const char* field;
  std::function<void(attend_translator_options&)> translator;
  std::function<void(attend_encoder_options&)> encoder;
};

}  // namespace

TEST_CASE("limits: C API settings out of range are ATTEND_ERROR_INVALID_ARGUMENT naming the field", "[api][limits]") {
  attend_model* model = nullptr;
  REQUIRE(attend_model_load(kModel.c_str(), nullptr, &model) == ATTEND_OK);
  const std::vector<Case> cases = {
      {"max_batch_tokens", [](auto& o) { o.max_batch_tokens = -1; }, [](auto& o) { o.max_batch_tokens = -1; }},
      {"max_batch_tokens", [](auto& o) { o.max_batch_tokens = ATTEND_MAX_BATCH_TOKENS + 1; }, [](auto& o) { o.max_batch_tokens = 0; }},
      {"max_batch_size", [](auto& o) { o.max_batch_size = ATTEND_MAX_BATCH_SIZE + 1; }, [](auto& o) { o.max_batch_size = ATTEND_MAX_BATCH_SIZE + 1; }},
      {"max_batch_size", [](auto& o) { o.max_batch_size = 0; }, [](auto& o) { o.max_batch_size = -5; }},
      {"threads", [](auto& o) { o.threads = ATTEND_MAX_THREADS + 1; }, [](auto& o) { o.threads = -1; }},
      {"inter_threads", [](auto& o) { o.inter_threads = ATTEND_MAX_THREADS_EACH + 1; }, [](auto& o) { o.inter_threads = -2; }},
      {"intra_threads", [](auto& o) { o.intra_threads = -1; }, [](auto& o) { o.intra_threads = ATTEND_MAX_THREADS_EACH + 1; }},
      {"inter_threads", [](auto& o) { o.inter_threads = 100, o.intra_threads = 100; }, [](auto& o) { o.inter_threads = 100, o.intra_threads = 100; }},
      {"max_source_length", [](auto& o) { o.max_source_length = 65; }, nullptr},  // the fixture has 64 positions
      {"max_source_length", [](auto& o) { o.max_source_length = -1; }, nullptr},
      {"max_target_length", [](auto& o) { o.max_target_length = 0; }, nullptr},
      {"max_beam_size", [](auto& o) { o.max_beam_size = ATTEND_MAX_BEAM_SIZE + 1; }, nullptr},
      {"max_length", nullptr, [](auto& o) { o.max_length = 100000; }},  // was cut to the model's 64 in silence
      {"max_length", nullptr, [](auto& o) { o.max_length = -1; }},
  };
  for (const Case& c : cases) {
    INFO(c.field);
    if (c.translator) {
      attend_translator_options o;
      attend_translator_options_init(&o);
      c.translator(o);
      attend_translator* t = nullptr;
      CHECK(attend_translator_create(model, &o, &t) == ATTEND_ERROR_INVALID_ARGUMENT);
      CHECK(t == nullptr);
      CHECK_THAT(attend_last_error(), Contains(c.field));
    }
    if (c.encoder) {
      attend_encoder_options o;
      attend_encoder_options_init(&o);
      c.encoder(o);
      attend_encoder* e = nullptr;
      CHECK(attend_encoder_load(kEncoder.c_str(), &o, &e) == ATTEND_ERROR_INVALID_ARGUMENT);
      CHECK(e == nullptr);
      CHECK_THAT(attend_last_error(), Contains(c.field));
    }
  }
  // The ends of each range are accepted.
  attend_translator_options o;
  attend_translator_options_init(&o);
  o.max_batch_size = ATTEND_MAX_BATCH_SIZE, o.max_batch_tokens = 0, o.max_source_length = 64, o.threads = 1;
  attend_translator* t = nullptr;
  CHECK(attend_translator_create(model, &o, &t) == ATTEND_OK);
  attend_translator_free(t);
  attend_encoder_options e;
  attend_encoder_options_init(&e);
  e.max_length = 64, e.max_batch_size = ATTEND_MAX_BATCH_SIZE, e.threads = 1;
  attend_encoder* encoder = nullptr;
  CHECK(attend_encoder_load(kEncoder.c_str(), &e, &encoder) == ATTEND_OK);
  CHECK(attend_encoder_max_length(encoder) == 64);
  attend_encoder_free(encoder);
  // A decoding option out of range names its field the same way.
  attend_translator_options_init(&o);
  REQUIRE(attend_translator_create(model, &o, &t) == ATTEND_OK);
  attend_options options;
  attend_options_init(&options);
  options.beam_size = 0;
  const char* text[] = {"Hello world."};
  attend_result* result = nullptr;
  CHECK(attend_translate_text(t, text, 1, &options, &result) == ATTEND_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(attend_last_error(), Contains("beam_size"));
  attend_translator_free(t);
  attend_model_free(model);
}

TEST_CASE("limits: the C++ API throws OptionError naming the field", "[api][limits]") {
  const attend::Model model = attend::Model::load(kModel);
  attend::TranslatorOptions o;
  o.max_batch_size = ATTEND_MAX_BATCH_SIZE + 1;
  try {
    attend::Translator t(model, o);
    FAIL("max_batch_size " << o.max_batch_size << " accepted");
  } catch (const attend::OptionError& e) {
    CHECK(e.option() == "max_batch_size");
    CHECK_THAT(e.what(), Contains("[1, 65536]"));
  }
  attend::EncoderOptions eo;
  eo.max_length = 100000;
  try {
    attend::Encoder encoder(kEncoder, eo);
    FAIL("max_length 100000 accepted");
  } catch (const attend::OptionError& e) {
    CHECK(e.option() == "max_length");
    CHECK_THAT(e.what(), Contains("[0, 64]"));
  }
}
