// Sizes computed from user input: every limit has a ceiling and every product of limits
// is checked, memory follows the batches a translator really gets, and a model whose
// configuration is huge but whose tensors are missing fails before anything is built.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "attend/error.hpp"
#include "formats/model_io.hpp"
#include "decoding_fixture.hpp"
#include "model/random_model.hpp"
#include "plan/execution_plan.hpp"
#include "translator/translator.hpp"

using Catch::Matchers::Contains;

namespace attend::runtime {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const Model> tiny_model() { return test::tiny_preset_model(); }

}  // namespace

TEST_CASE("plan limits: absurd values are refused by name, and no size derived from them overflows", "[plan][limits]") {
  constexpr std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  struct Case {
    std::string what;
    PlanLimits limits;
    std::string message;
  };
  auto with = [](auto edit) {
    PlanLimits l;
    l.max_batch = 8, l.max_source_length = 64, l.max_target_length = 64, l.beam_size = 2;
    edit(l);
    return l;
  };
  const std::vector<Case> cases = {
      {"max_batch INT64_MAX", with([&](PlanLimits& l) { l.max_batch = huge; }), "max_batch = 9223372036854775807 must be in [1, 65536]"},
      {"max_batch 0", with([&](PlanLimits& l) { l.max_batch = 0; }), "max_batch = 0"},
      {"max_batch -1", with([&](PlanLimits& l) { l.max_batch = -1; }), "max_batch = -1"},
      {"max_batch_tokens INT64_MAX", with([&](PlanLimits& l) { l.max_batch_tokens = huge; }), "max_batch_tokens = 9223372036854775807"},
      {"max_batch_tokens -5", with([&](PlanLimits& l) { l.max_batch_tokens = -5; }), "max_batch_tokens = -5"},
      {"max_source_length INT64_MAX", with([&](PlanLimits& l) { l.max_source_length = huge; }), "max_source_length = 9223372036854775807"},
      {"max_target_length INT64_MAX", with([&](PlanLimits& l) { l.max_target_length = huge; }), "max_target_length = 9223372036854775807"},
      {"beam INT64_MAX", with([&](PlanLimits& l) { l.beam_size = huge; }), "beam_size = 9223372036854775807"},
      {"threads 0", with([&](PlanLimits& l) { l.threads = 0; }), "threads = 0"},
      {"everything at its ceiling", with([&](PlanLimits& l) {
         l.max_batch = 65536, l.beam_size = 256, l.max_source_length = l.max_target_length = 512;
       }),
       "GiB of buffers, more than the 1024 GiB a plan may take"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK_THROWS_WITH(ExecutionPlan::compile(tiny_model(), c.limits), Contains("plan limits: ") && Contains(c.message));
  }
  // At the ceilings that do fit, the plan's figures are sane: positive, in range.
  PlanLimits big = with([](PlanLimits& l) { l.max_batch = 65536, l.max_batch_tokens = 1 << 24, l.beam_size = 1; });
  const auto plan = ExecutionPlan::compile(tiny_model(), big);
  CHECK(plan->arena_bytes() > 0);
  CHECK(plan->arena_bytes() <= plan->buffers_bytes());
  for (const PlanStep& s : plan->steps()) CHECK((s.flops >= 0 && s.bytes >= 0));
  CHECK_THAT(plan->describe(), !Contains("saves -") && !Contains("saves 18"));
}

TEST_CASE("translator: memory follows the batches it gets, not its limits", "[translator][limits]") {
  TranslatorConfig config;
  config.max_batch_size = 20000, config.max_batch_tokens = 0, config.max_source_length = 64, config.max_target_length = 32;
  const Translator t(tiny_model(), config);
  CHECK(t.plan().limits().max_batch == 20000);  // what it accepts
  DecodeOptions o;
  o.max_length = 8;
  const std::vector<std::vector<std::int32_t>> one = {{5, 6, 7, 8, 9, 10}};
  REQUIRE(t.translate(one, o).size() == 1);
  REQUIRE(t.idle_workspaces() == 1);
  // A workspace for one sentence: a tiny part of what 20000 would need.
  CHECK(t.idle_workspace_bytes() * 1000 < t.plan().arena_bytes());

  // Larger batches grow the one workspace (to a power of two), they do not pile up.
  const std::vector<std::vector<std::int32_t>> forty(40, {5, 6, 7});
  REQUIRE(t.translate(forty, o).size() == 40);
  CHECK(t.idle_workspaces() == 1);
  CHECK(t.plan_for(40, 3, t.config().threads)->limits().max_batch == 64);
  CHECK(t.translate(one, o)[0].hypotheses[0].tokens == Translator(tiny_model(), config).translate(one, o)[0].hypotheses[0].tokens);
  CHECK(t.idle_workspaces() == 1);  // the big workspace served the small batch

  // A padded-token cap bounds the sentences too.
  TranslatorConfig capped = config;
  capped.max_batch_tokens = 256;
  CHECK(Translator(tiny_model(), capped).plan().limits().max_batch == 256);
}

TEST_CASE("translator: memory follows the sources it gets, not the model's positions", "[translator][limits]") {
  TranslatorConfig config;  // sources up to the model's every position
  config.max_batch_size = 4, config.max_batch_tokens = 0, config.max_source_length = 1 << 20, config.max_target_length = 16;
  const Translator t(tiny_model(), config);
  const std::int64_t positions = t.plan().limits().max_source_length;
  REQUIRE(positions >= 256);
  DecodeOptions o;
  o.max_length = 8;
  const std::vector<std::vector<std::int32_t>> short_source = {{5, 6, 7, 8, 9, 10}};
  REQUIRE(t.translate(short_source, o).size() == 1);
  REQUIRE(t.idle_workspaces() == 1);
  CHECK(t.plan_for(1, 6, t.config().threads)->limits().max_source_length == 8);
  CHECK(t.idle_workspace_bytes() * 16 < t.plan_for(1, positions, t.config().threads)->arena_bytes());

  // A longer source grows the one workspace; the answers are those of a translator
  // whose limit is the source's own length.
  std::vector<std::vector<std::int32_t>> long_source(1);
  for (std::int32_t i = 0; i < 100; ++i) long_source[0].push_back(5 + i % 20);
  const auto long_result = t.translate(long_source, o);
  CHECK(t.idle_workspaces() == 1);
  CHECK(t.plan_for(1, 100, t.config().threads)->limits().max_source_length == 128);
  TranslatorConfig exact = config;
  exact.max_source_length = 100;
  const Translator fitted(tiny_model(), exact);
  CHECK(long_result[0].hypotheses[0].tokens == fitted.translate(long_source, o)[0].hypotheses[0].tokens);
  CHECK(t.translate(short_source, o)[0].hypotheses[0].tokens == fitted.translate(short_source, o)[0].hypotheses[0].tokens);
  CHECK(t.idle_workspaces() == 1);  // the grown workspace served the short source
}

TEST_CASE("a model declaring a huge shape with its tensors missing fails before building anything", "[loading][limits]") {
  const fs::path dir = fs::temp_directory_path() / ("attend-huge-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // 2^20 positions × d_model 65536: the sinusoidal table alone would be 256 GiB.
  nlohmann::json config = {{"d_model", 65536}, {"num_heads", 256}, {"ffn_dim", 8}, {"encoder_layers", 1},
                           {"decoder_layers", 1}, {"src_vocab_size", 8}, {"tgt_vocab_size", 8}, {"max_positions", 1 << 20}};
  std::ofstream(dir / "config.json") << config.dump();
  const std::string header = R"({"__metadata__":{"format":"pt"}})";
  std::ofstream weights(dir / "model.safetensors", std::ios::binary);
  const std::uint64_t n = header.size();
  weights.write(reinterpret_cast<const char*>(&n), 8);
  weights << header;
  weights.close();
  CHECK_THROWS_WITH(load_model(dir.string()), Contains("model.safetensors: missing tensor"));
  fs::remove_all(dir);
}


TEST_CASE("translator: a split that follows the work puts min(batches, threads) batches side by side", "[translator][threads]") {
  TranslatorConfig fixed;
  fixed.max_batch_size = 2, fixed.max_source_length = 64, fixed.max_target_length = 16;
  TranslatorConfig follows = fixed;
  follows.inter_threads = 4, follows.threads = 1, follows.split_follows_batches = true;
  DecodeOptions o;
  o.max_length = 6;
  auto sentences = [](std::size_t n) {
    std::vector<std::vector<std::int32_t>> s;
    for (std::size_t i = 0; i < n; ++i) s.push_back({5, 6, static_cast<std::int32_t>(7 + i % 9)});
    return s;
  };
  // 2 batches: 2 side by side with 2 threads each; 8 batches: up to 4 × 1; 1 batch: all 4.
  // (How many workers take a batch is up to timing: each that does holds a workspace of
  // its share of the threads.)
  for (const auto& [count, most, threads] : {std::tuple<std::size_t, std::size_t, int>{4, 2, 2}, {16, 4, 1}, {2, 1, 4}}) {
    const Translator t(tiny_model(), follows);
    const auto got = t.translate(sentences(count), o);
    const auto serial = Translator(tiny_model(), fixed).translate(sentences(count), o);
    INFO(count << " sentences in batches of 2");
    const std::vector<int> held = t.idle_workspace_threads();
    CHECK(!held.empty());
    CHECK(held.size() <= most);
    CHECK(std::count(held.begin(), held.end(), threads) == static_cast<std::ptrdiff_t>(held.size()));
    for (std::size_t i = 0; i < count; ++i) CHECK(got[i].hypotheses[0].tokens == serial[i].hypotheses[0].tokens);
  }
}

}  // namespace attend::runtime
