// A sentence's result does not depend on its batch: not on which sentences share it,
// their order, the batch size, nor the thread split (inter × intra) — the same bits
// (memcmp), in every compute type (float32, int8, bfloat16) and for every model kind:
// encoders (last hidden state, pooler, sentence embedding, classifier logits) and
// encoder-decoder translation (tokens, scores, every token's log p, attention) with
// greedy search, beam search and seeded sampling. A server batching strangers' requests
// together needs exactly this.
//
// The reference is each sentence translated or embedded alone on one thread; every
// other run — all of them in one batch (with short and long batch-mates, in any order),
// small batches side by side, 2 or 3 compute threads (where the decoder also splits its
// rows between threads) — must give the reference's bits. The ctest list runs these
// cases again under ATTEND_ISA=avx2 and sse2 (where bfloat16 is widened to fp32).
#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "attend/ops/isa.hpp"
#include "encoder/encoder_runner.hpp"
#include "formats/encoder_io.hpp"
#include "formats/model_io.hpp"
#include "translator/translator.hpp"

namespace attend::runtime {
namespace {

using Ids = std::vector<std::int32_t>;

const std::string kData = std::string(ATTEND_SOURCE_DIR) + "/tests/data/";
constexpr const char* kComputeTypes[] = {"float32", "int8", "bfloat16"};

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}
bool same_bits(float a, float b) { return same_bits(std::span<const float>(&a, 1), std::span<const float>(&b, 1)); }

// `count` sentences of ids in [lowest, vocab), of lengths spread over [1, longest]
// (short and long ones side by side), the same for every run.
std::vector<Ids> sentences(std::size_t count, std::int32_t lowest, std::int32_t vocab, std::int64_t longest,
                           std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Ids> out;
  for (std::size_t i = 0; i < count; ++i) {
    // Lengths cycle through 1, the longest and values between, so every batch mixes them.
    const std::int64_t n = i % 3 == 1 ? longest : 1 + static_cast<std::int64_t>(rng() % longest);
    Ids s(static_cast<std::size_t>(n));
    for (auto& id : s) id = lowest + static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(vocab - lowest));
    out.push_back(std::move(s));
  }
  return out;
}

// Which sentences a run gets, in which order: every one, every one reversed, and the
// even-numbered ones with the long odd-numbered ones among them (other batch-mates,
// other positions).
std::vector<std::vector<std::size_t>> compositions(const std::vector<Ids>& all) {
  std::vector<std::size_t> forward(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) forward[i] = i;
  std::vector<std::size_t> reversed(forward.rbegin(), forward.rend());
  std::vector<std::size_t> longest = forward;
  std::stable_sort(longest.begin(), longest.end(), [&](std::size_t a, std::size_t b) { return all[a].size() > all[b].size(); });
  longest.resize(all.size() / 3);
  std::vector<std::size_t> mixed;
  for (std::size_t i = 0; i < all.size(); i += 2) {
    mixed.push_back(i);
    if (i / 2 < longest.size() && longest[i / 2] % 2 == 1) mixed.push_back(longest[i / 2]);
  }
  return {forward, reversed, mixed};
}

struct Split {
  std::int64_t batch;  // sentences per batch
  int inter, intra;    // batches side by side × compute threads each
};
// One batch on 1, 2 and 3 threads; small batches side by side; mixed.
constexpr Split kSplits[] = {{64, 1, 1}, {64, 1, 2}, {64, 1, 3}, {3, 2, 1}, {5, 2, 2}};

// The runs compared with the reference: each split with one of the compositions in
// turn (every split and every composition at least once, in a few seconds).
std::vector<std::pair<Split, std::vector<std::size_t>>> runs(const std::vector<Ids>& all) {
  const auto orders = compositions(all);
  std::vector<std::pair<Split, std::vector<std::size_t>>> out;
  for (std::size_t i = 0; i < std::size(kSplits); ++i) out.emplace_back(kSplits[i], orders[i % orders.size()]);
  return out;
}

// ---- encoders ----

EncoderRunOptions encoder_outputs(const EncoderModel& model) {
  EncoderRunOptions o;
  o.hidden = true;
  o.heads.pooler = model.config().pooler;
  o.heads.embedding = true;
  o.heads.logits = model.config().classifier != ClassifierHead::none;
  return o;
}

void check_same(const SequenceOutput& got, const SequenceOutput& want) {
  CHECK(got.length == want.length);
  CHECK(same_bits(got.hidden, want.hidden));
  CHECK(same_bits(got.pooler, want.pooler));
  CHECK(same_bits(got.embedding, want.embedding));
  CHECK(same_bits(got.logits, want.logits));
}

void check_encoder(const std::string& name, const char* compute_type) {
  LoadOptions load;
  load.compute_type = compute_type;
  const auto model = load_encoder(kData + "encoders/" + name, load);
  INFO(name << " in " << compute_type << " (" << model->compute_type().name << ") on "
            << ops::isa_name(ops::active_isa()));
  const EncoderRunOptions options = encoder_outputs(*model);
  // 30 sequences of up to the model's positions (64): ~1000 tokens, so a batch of them
  // runs its feed-forward in several 128-row chunks that cut through sequences, and its
  // heads on up to 30 rows; alone, each is one short GEMM.
  EncoderRunnerConfig alone_config;
  alone_config.max_batch_size = 1;
  const EncoderRunner alone(model, alone_config);
  const auto all = sentences(30, 5, static_cast<std::int32_t>(model->config().vocab_size), alone.max_length(), 29);
  std::vector<SequenceOutput> want;
  for (const Ids& s : all) want.push_back(std::move(alone.run(std::span<const Ids>(&s, 1), {}, options).at(0)));

  for (const auto& [split, order] : runs(all)) {
    INFO("batches of " << split.batch << ", " << split.inter << " × " << split.intra << " threads, " << order.size()
                       << " sequences");
    EncoderRunnerConfig config;
    config.max_batch_size = split.batch, config.inter_threads = split.inter, config.threads = split.intra;
    const EncoderRunner runner(model, config);
    std::vector<Ids> ids;
    for (std::size_t i : order) ids.push_back(all[i]);
    const auto got = runner.run(ids, {}, options);
    REQUIRE(got.size() == order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      INFO("sequence " << order[k] << " (" << all[order[k]].size() << " tokens) at position " << k);
      check_same(got[k], want[order[k]]);
    }
  }
  // A call that names its threads (a server lane alone, EncoderRunOptions::threads): a
  // runner split 2 × 1 runs each batch of it on 3 threads, one after another — the
  // workspaces it leaves say so — and every sequence keeps its bits.
  EncoderRunnerConfig config;
  config.max_batch_size = 5, config.inter_threads = 2, config.threads = 1;
  const EncoderRunner runner(model, config);
  EncoderRunOptions on_three = options;
  on_three.threads = 3;
  const auto order = compositions(all)[2];
  std::vector<Ids> ids;
  for (std::size_t i : order) ids.push_back(all[i]);
  const auto got = runner.run(ids, {}, on_three);
  REQUIRE(got.size() == order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    INFO("on 3 threads a call: sequence " << order[k] << " at position " << k);
    check_same(got[k], want[order[k]]);
  }
  CHECK(runner.idle_workspace_threads() == std::vector<int>{3});
  // The same runner's own split afterwards: its workers' workspaces of 1 thread join the
  // idle one of 3 (kept for the next such call, not made anew).
  runner.run(ids, {}, options);
  auto threads = runner.idle_workspace_threads();
  std::sort(threads.begin(), threads.end());
  REQUIRE(threads.size() >= 2);
  CHECK(threads.back() == 3);
  CHECK(threads[threads.size() - 2] == 1);
  on_three.threads = 1025;
  CHECK_THROWS_WITH(runner.run(ids, {}, on_three), Catch::Contains("threads = 1025"));
}

TEST_CASE("encoders: every sequence's outputs are the same bits alone and in any batch or thread split",
          "[runtime][batch-invariance]") {
  // Hidden states and pooler (BERT), mean pooling, every pooling mode with Dense and
  // Normalize (sentence-transformers), classifier heads (BERT, DistilBERT, XLM-R),
  // CTranslate2's converted encoder.
  for (const char* name : {"bert", "st-all-poolings", "bert-classifier", "distilbert-classifier", "xlm-roberta-classifier",
                           "ct2-bert"})
    for (const char* type : kComputeTypes) check_encoder(name, type);
}

// ---- translation ----

struct Search {
  const char* name;
  DecodeOptions options;
};

std::vector<Search> searches() {
  DecodeOptions greedy;
  greedy.max_length = 12;
  greedy.return_attention = true;  // the alignment rows too
  DecodeOptions beam = greedy;
  beam.beam_size = 4, beam.num_hypotheses = 2, beam.return_attention = false;
  DecodeOptions sampled = greedy;
  sampled.sampling = true, sampled.sampling_topk = 10, sampled.temperature = 1.3f, sampled.seed = 1234;
  sampled.num_hypotheses = 2, sampled.return_attention = false;
  return {{"greedy", greedy}, {"beam 4", beam}, {"sampling", sampled}};
}

void check_same(const SentenceResult& got, const SentenceResult& want) {
  CHECK(got.non_finite == want.non_finite);
  REQUIRE(got.hypotheses.size() == want.hypotheses.size());
  for (std::size_t k = 0; k < want.hypotheses.size(); ++k) {
    INFO("hypothesis " << k);
    const Hypothesis &g = got.hypotheses[k], &w = want.hypotheses[k];
    CHECK(g.tokens == w.tokens);
    CHECK(same_bits(g.score, w.score));
    CHECK(same_bits(g.log_prob, w.log_prob));
    CHECK(same_bits(g.token_log_probs, w.token_log_probs));
    REQUIRE(g.attention.size() == w.attention.size());
    for (std::size_t t = 0; t < w.attention.size(); ++t) CHECK(same_bits(g.attention[t], w.attention[t]));
  }
}

TranslatorConfig translator_config(const Split& split) {
  TranslatorConfig c;
  c.max_batch_size = split.batch, c.inter_threads = split.inter, c.threads = split.intra;
  c.max_source_length = 24, c.max_target_length = 16, c.max_beam_size = 4;
  return c;
}

void check_translator(const std::string& dir, const char* compute_type) {
  LoadOptions load;
  load.compute_type = compute_type;
  const auto model = load_model(kData + dir, load);
  INFO(dir << " in " << compute_type << " (" << model->compute_type().name << ") on "
           << ops::isa_name(ops::active_isa()));
  // 36 sentences: beam 4 makes 144 decoder rows in one batch, which 2 threads split
  // between them in every compute type (execution_plan.hpp: 16 rows per thread and
  // weight byte, 64 for float32); 3 threads split the 96 rows of the mixed
  // composition in int8 and bfloat16.
  const auto all = sentences(36, 4, static_cast<std::int32_t>(model->config().src_vocab_size), 20, 36);
  const Translator alone(model, translator_config({1, 1, 1}));
  for (const Search& search : searches()) {
    INFO(search.name);
    std::vector<SentenceResult> want;
    for (std::size_t i = 0; i < all.size(); ++i)
      want.push_back(std::move(alone.translate(std::span<const Ids>(&all[i], 1), search.options, {}, SentenceIds(i)).at(0)));
    for (const auto& [split, order] : runs(all)) {
      INFO("batches of " << split.batch << ", " << split.inter << " × " << split.intra << " threads, " << order.size()
                         << " sentences");
      const Translator translator(model, translator_config(split));
      if (split.inter == 1 && split.intra == 2) REQUIRE(translator.plan().decoder_row_threads(4 * 36) == 2);
      std::vector<Ids> sources;
      std::vector<std::uint64_t> ids;  // each sentence keeps its id: its sampling draws
      for (std::size_t i : order) sources.push_back(all[i]), ids.push_back(i);
      const auto got = translator.translate(sources, search.options, {}, SentenceIds(std::span<const std::uint64_t>(ids)));
      REQUIRE(got.size() == order.size());
      for (std::size_t k = 0; k < order.size(); ++k) {
        INFO("sentence " << order[k] << " (" << all[order[k]].size() << " tokens) at position " << k);
        check_same(got[k], want[order[k]]);
      }
    }
  }
}

TEST_CASE("translation: every sentence's tokens and scores are the same bits alone and in any batch or thread split",
          "[runtime][batch-invariance]") {
  // A trained model (pre-LN, ReLU), the real CTranslate2 transliteration model, and
  // CTranslate2 families: BART, Marian, T5 (relative bias), OpenNMT relative positions
  // (Shaw), NLLB.
  for (const char* dir : {"parity/pre-ln-relu/model", "models/ct2-aren-transliteration", "ct2-families-generated/bart-seed5",
                          "ct2-families-generated/marian-seed5", "ct2-families-generated/t5-seed5",
                          "ct2-families-generated/onmt_relative-seed5", "ct2-families-generated/nllb-seed5"})
    for (const char* type : kComputeTypes) check_translator(dir, type);
}

TEST_CASE("translation: a call that names its threads decodes each batch on them, the same bits", "[runtime][batch-invariance]") {
  // A server lane alone (DecodeOptions::threads): a translator split 2 × 1 decodes each
  // batch of the call on 3 threads, one after another — the workspaces it leaves say so.
  const auto model = load_model(kData + "parity/pre-ln-relu/model");
  const auto all = sentences(12, 4, static_cast<std::int32_t>(model->config().src_vocab_size), 20, 12);
  const Translator alone(model, translator_config({1, 1, 1}));
  const Translator split(model, translator_config({5, 2, 1}));
  for (const Search& search : searches()) {
    INFO(search.name);
    DecodeOptions on_three = search.options;
    on_three.threads = 3;
    const auto got = split.translate(all, on_three);
    REQUIRE(got.size() == all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      INFO("sentence " << i);
      check_same(got[i], alone.translate(std::span<const Ids>(&all[i], 1), search.options, {}, SentenceIds(i)).at(0));
    }
    CHECK(split.idle_workspace_threads() == std::vector<int>{3});
  }
  DecodeOptions bad;
  bad.threads = -1;
  CHECK_THROWS_WITH(split.translate(all, bad), Catch::Contains("threads = -1"));
}

TEST_CASE("translation: logits rules renormalise a sentence's rows alike whatever its batch-mates need",
          "[runtime][batch-invariance]") {
  // Rows that the rules only forbid tokens in are renormalised in place; rows with a
  // repetition penalty are recomputed. With context prefixes of different lengths
  // (return_alternatives' completions) one sentence's rows may need the first while a
  // batch-mate's need the second, at the same step.
  const auto model = load_model(kData + "parity/pre-ln-relu/model");
  const auto all = sentences(12, 4, static_cast<std::int32_t>(model->config().src_vocab_size), 14, 12);
  std::vector<Ids> prefixes;
  for (std::size_t i = 0; i < all.size(); ++i) prefixes.push_back(Ids(i % 4, static_cast<std::int32_t>(5 + i)));
  DecodeOptions o;
  o.max_length = 8, o.min_length = 3, o.repetition_penalty = 1.3f, o.prefix_is_context = true;
  const Translator alone(model, translator_config({1, 1, 1}));
  const Translator together(model, translator_config({64, 1, 2}));
  std::vector<SentenceResult> want;
  for (std::size_t i = 0; i < all.size(); ++i)
    want.push_back(std::move(alone.translate(std::span<const Ids>(&all[i], 1), o, std::span<const Ids>(&prefixes[i], 1),
                                             SentenceIds(i)).at(0)));
  const auto got = together.translate(all, o, prefixes);
  for (std::size_t i = 0; i < all.size(); ++i) {
    INFO("sentence " << i << " with a context of " << prefixes[i].size() << " tokens");
    check_same(got[i], want[i]);
  }
}

}  // namespace
}  // namespace attend::runtime
