// Parity with PyTorch: the nn.Transformer tutorial model decoded by tools/reference.py
// and by attend must give identical tokens, logits within 1e-4 and scores within 1e-4.
//
// Cases are directories written by tests/parity/make_parity_case.py: model/ (attend
// format) and expected.json. Committed ones live in tests/data/parity/; the torch test
// (ctest "runtime: parity with PyTorch on fresh random models") generates more and
// points ATTEND_PARITY_CASES at them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "plan/execution_plan.hpp"
#include "formats/model_io.hpp"
#include "decoding/workspace.hpp"

namespace attend::runtime {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Logits of every sentence's live row at every step (greedy: one row per sentence).
struct LogitsCapture : LogitsObserver {
  std::vector<std::vector<std::vector<float>>> per_sentence;
  void on_step(std::int64_t, std::int64_t rows, const std::int32_t* row_sentence, const float* logits,
               std::int64_t vocab) override {
    for (std::int64_t r = 0; r < rows; ++r)
      per_sentence[row_sentence[r]].emplace_back(logits + r * vocab, logits + (r + 1) * vocab);
  }
};

void check_case(const fs::path& dir) {
  INFO("parity case " << dir.string());
  std::ifstream in(dir / "expected.json");
  REQUIRE(in.good());
  const json e = json::parse(in);
  auto model = load_model((dir / "model").string());

  std::vector<std::vector<std::int32_t>> sources = e["sources"].get<std::vector<std::vector<std::int32_t>>>();
  std::vector<SourceRef> refs;
  std::int64_t longest = 1;
  for (size_t i = 0; i < sources.size(); ++i) {
    refs.push_back({sources[i], {}, i});
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(sources[i].size()));
  }
  PlanLimits limits;
  limits.max_batch = static_cast<std::int64_t>(sources.size());
  limits.max_source_length = longest;
  limits.max_target_length = e["max_length"].get<std::int64_t>();
  limits.beam_size = e["beam"].get<std::int64_t>();
  limits.threads = 2;
  Workspace w(ExecutionPlan::compile(model, limits));

  SECTION("greedy: identical tokens, logits and log-probs within 1e-4") {
    DecodeOptions o;
    o.max_length = limits.max_target_length;
    o.min_length = 0;  // the reference lets end-of-sequence come first
    LogitsCapture capture;
    capture.per_sentence.resize(sources.size());
    w.decode(refs, o, &capture);
    for (size_t s = 0; s < sources.size(); ++s) {
      const json& want = e["greedy"][s];
      SentenceResult got;
      w.result(static_cast<std::int64_t>(s), got);
      INFO("sentence " << s);
      REQUIRE(got.hypotheses.size() == 1);
      CHECK(got.hypotheses[0].tokens == want["tokens"].get<std::vector<std::int32_t>>());
      CHECK(got.hypotheses[0].finished == want["finished"].get<bool>());
      CHECK(std::abs(got.hypotheses[0].log_prob - want["log_prob"].get<float>()) <= 1e-4);
      const auto& steps = want["logits"];
      REQUIRE(capture.per_sentence[s].size() == steps.size());
      double worst = 0;
      for (size_t t = 0; t < steps.size(); ++t)
        for (size_t v = 0; v < steps[t].size(); ++v)
          worst = std::max(worst, std::abs(double(capture.per_sentence[s][t][v]) - steps[t][v].get<double>()));
      INFO("max |logit difference| " << worst);
      CHECK(worst <= 1e-4);
    }
  }

  SECTION("beam search: identical n-best hypotheses, scores within 1e-4") {
    DecodeOptions o;
    o.max_length = limits.max_target_length;
    o.min_length = 0;  // the reference lets end-of-sequence come first
    o.beam_size = e["beam"].get<std::int64_t>();
    o.num_hypotheses = e["n_best"].get<std::int64_t>();
    o.length_penalty = e["length_penalty"].get<float>();
    w.decode(refs, o);
    for (size_t s = 0; s < sources.size(); ++s) {
      const json& want = e["beam_results"][s];
      SentenceResult got;
      w.result(static_cast<std::int64_t>(s), got);
      INFO("sentence " << s);
      REQUIRE(got.hypotheses.size() == want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        INFO("hypothesis " << k);
        CHECK(got.hypotheses[k].tokens == want[k]["tokens"].get<std::vector<std::int32_t>>());
        CHECK(std::abs(got.hypotheses[k].score - want[k]["score"].get<float>()) <= 1e-4);
        CHECK(std::abs(got.hypotheses[k].log_prob - want[k]["log_prob"].get<float>()) <= 1e-4);
        CHECK(got.hypotheses[k].finished == want[k]["finished"].get<bool>());
      }
    }
  }
}

std::vector<fs::path> cases_in(const fs::path& root) {
  std::vector<fs::path> out;
  if (fs::is_directory(root))
    for (const auto& entry : fs::directory_iterator(root))
      if (fs::exists(entry.path() / "expected.json")) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("decoding matches PyTorch on the committed tiny models", "[runtime][parity]") {
  const auto cases = cases_in(fs::path(ATTEND_SOURCE_DIR) / "tests" / "data" / "parity");
  REQUIRE_FALSE(cases.empty());
  for (const auto& dir : cases) check_case(dir);
}

TEST_CASE("decoding matches PyTorch on freshly drawn models", "[runtime][parity][.torch]") {
  const char* dirs = std::getenv("ATTEND_PARITY_CASES");
  INFO("ATTEND_PARITY_CASES names the cases; tests/parity/torch_parity.py draws them and runs this test");
  REQUIRE(dirs != nullptr);
  std::stringstream list(dirs);
  std::string dir;
  int n = 0;
  while (std::getline(list, dir, ';'))
    if (!dir.empty()) check_case(dir), ++n;
  CHECK(n > 0);
}

}  // namespace attend::runtime
