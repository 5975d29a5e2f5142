// Decoding behaviour: concurrency, padding, batching, finished rows, beam search,
// sampling, lengths, prefixes and argument errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "attend/error.hpp"
#include "attend/ops/isa.hpp"
#include "attend/ops/parallel_tasks.hpp"
#include "decoding/workspace.hpp"
#include "batching/batching.hpp"
#include "decoding_fixture.hpp"
#include "formats/model_io.hpp"
#include "model/random_model.hpp"
#include "plan/plan_executor.hpp"
#include "decoding/logits_rules.hpp"
#include "translator/translator.hpp"

using Catch::Matchers::Contains;

namespace attend::runtime {
namespace {

using test::tiny_sources;
using test::trained_tiny_model;

TranslatorConfig small_config(std::int64_t batch = 4, std::int64_t beam = 4, int threads = 2) {
  TranslatorConfig c;
  c.threads = threads, c.max_batch_size = batch, c.max_source_length = 16, c.max_target_length = 24;
  c.max_beam_size = beam;
  return c;
}

DecodeOptions greedy(std::int64_t max_length = 24) {
  DecodeOptions o;
  o.max_length = max_length;
  return o;
}

std::vector<std::vector<std::int32_t>> best_tokens(const std::vector<SentenceResult>& r) {
  std::vector<std::vector<std::int32_t>> out;
  for (const auto& s : r) out.push_back(s.hypotheses.at(0).tokens);
  return out;
}

}  // namespace

TEST_CASE("four threads sharing one model each get the single-threaded answer", "[runtime][threads]") {
  const auto sources = tiny_sources();
  Translator single(trained_tiny_model(), small_config(4, 4, 1));
  DecodeOptions beam = greedy();
  beam.beam_size = 4, beam.num_hypotheses = 2;
  const auto want_greedy = single.translate(sources, greedy());
  const auto want_beam = single.translate(sources, beam);

  Translator shared(trained_tiny_model(), small_config(4, 4, 1));
  std::vector<std::vector<SentenceResult>> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 2; ++rep) got[2 * t + rep] = shared.translate(sources, rep == 0 ? greedy() : beam);
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    INFO("thread " << t);
    for (size_t s = 0; s < sources.size(); ++s) {
      CHECK(got[2 * t][s].hypotheses[0].tokens == want_greedy[s].hypotheses[0].tokens);
      CHECK(got[2 * t][s].hypotheses[0].log_prob == want_greedy[s].hypotheses[0].log_prob);
      for (size_t k = 0; k < 2; ++k) CHECK(got[2 * t + 1][s].hypotheses[k].tokens == want_beam[s].hypotheses[k].tokens);
    }
  }
}

TEST_CASE("decoder rows split between a batch's threads give the one-thread answer", "[runtime][threads]") {
  // One batch of 40 sentences on 2 threads. The decoder step splits its rows between the
  // threads where each gets 16 rows per weight byte (execution_plan.hpp): int8 greedy
  // (40 rows) and both types' beam 4 (160 rows); float32 greedy (40 < 2 × 64) splits
  // each op's columns instead. Both must be bit-identical: every element of a GEMM is
  // summed in the same order whatever rows share it (kernel_table.hpp), every other op
  // runs row by row. The random model's near-ties turn any wrong value into other
  // tokens (threads that shared plan buffers did).
  std::vector<std::vector<std::int32_t>> sources;
  for (int copy = 0; copy < 4; ++copy)
    for (const auto& s : tiny_sources()) sources.push_back(s);
  const ModelConfig random_config = preset_config("tiny");
  const auto random = random_weights(random_config, 11);
  const std::string data = std::string(ATTEND_SOURCE_DIR) + "/tests/data/";
  for (const char* type : {"float32", "int8"})
    for (const char* kind : {"trained", "random", "bart"}) {
      LoadOptions load;
      load.compute_type = type;
      const std::string k = kind;
      const bool trained = k == "trained";
      const auto model = trained ? load_model(data + "parity/pre-ln-relu/model", load)
                         : k == "random" ? Model::build(random_config, random, {}, load)
                                         : load_model(data + "ct2-families-generated/bart-seed5-int8", load);
      const bool int8 = std::string(type) == "int8";
      INFO(type << " " << kind << " model");

      PlanLimits limits;
      limits.max_batch = 40, limits.beam_size = 4, limits.max_source_length = 16, limits.max_target_length = 24;
      limits.threads = 2;
      const auto plan = ExecutionPlan::compile(model, limits);
      const std::int64_t per_thread = int8 ? 16 : 64;
      CHECK(plan->decoder_row_threads(2 * per_thread - 1) == 1);
      CHECK(plan->decoder_row_threads(2 * per_thread) == 2);
      // Threads out of step with each other: no two buffers a decoder step uses share bytes.
      const auto& steps = plan->steps();
      const auto first_decoder = std::find_if(steps.begin(), steps.end(), [](const PlanStep& p) {
                                   return p.phase == Phase::decoder;
                                 }) - steps.begin();
      std::vector<const PlanBuffer*> decoder_buffers;
      for (const PlanBuffer& b : plan->buffers())
        if (b.last_use >= first_decoder) decoder_buffers.push_back(&b);
      for (size_t i = 0; i < decoder_buffers.size(); ++i)
        for (size_t j = i + 1; j < decoder_buffers.size(); ++j) {
          const PlanBuffer &a = *decoder_buffers[i], &b = *decoder_buffers[j];
          INFO(a.name << " and " << b.name);
          CHECK((a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset));
        }
      limits.threads = 1;
      const auto single = ExecutionPlan::compile(model, limits);
      CHECK(single->decoder_row_threads(160) == 1);
      CHECK(single->arena_bytes() <= plan->arena_bytes());

      Translator one(model, small_config(40, 4, 1)), two(model, small_config(40, 4, 2));
      for (const std::int64_t beam_size : {1, 4}) {
        DecodeOptions o = greedy();
        o.beam_size = beam_size, o.num_hypotheses = beam_size > 1 ? 2 : 1;
        o.return_attention = true;  // the alignment step runs on each thread's rows too
        INFO("beam " << beam_size);
        const auto want = one.translate(sources, o), got = two.translate(sources, o);
        REQUIRE(got.size() == want.size());
        for (size_t s = 0; s < sources.size(); ++s) {
          INFO("sentence " << s);
          REQUIRE(got[s].hypotheses.size() == want[s].hypotheses.size());
          for (size_t k = 0; k < want[s].hypotheses.size(); ++k) {
            const Hypothesis &g = got[s].hypotheses[k], &w = want[s].hypotheses[k];
            CHECK(g.tokens == w.tokens);
            CHECK(g.log_prob == w.log_prob);
            CHECK(g.token_log_probs == w.token_log_probs);
            CHECK(g.attention == w.attention);
          }
        }
      }
    }
}

TEST_CASE("a model loaded for a lower ISA runs every op of its batches at that ISA", "[runtime][isa]") {
  // Only its GEMM weights are packed for the model's ISA; attention, softmax, LayerNorm
  // and the rest read ops::active_isa(), which each batch scopes to the model's — on the
  // decoding thread and on the workers its ops start. Seen from inside the decode loop,
  // where the logits observer runs.
  struct IsaProbe : LogitsObserver {
    std::vector<ops::Isa> caller, worker;
    void on_step(std::int64_t, std::int64_t, const std::int32_t*, const float*, std::int64_t) override {
      caller.push_back(ops::active_isa());
      ops::parallel_tasks(2, [&](int t) {
        if (t == 1) worker.push_back(ops::active_isa());
      });
    }
  };
  const ops::Isa process = ops::active_isa();
  for (const ops::Isa isa : ops::available_isas()) {
    INFO("model loaded for " << ops::isa_name(isa) << ", process at " << ops::isa_name(process));
    LoadOptions load;
    load.isa = isa;
    const auto model = load_model(std::string(ATTEND_SOURCE_DIR) + "/tests/data/parity/pre-ln-relu/model", load);
    PlanLimits limits;
    limits.max_batch = 2, limits.max_source_length = 16, limits.max_target_length = 8, limits.threads = 2;
    Workspace w(ExecutionPlan::compile(model, limits));
    const auto sources = tiny_sources();
    const std::vector<SourceRef> refs{{sources[0], {}, 0}, {sources[2], {}, 1}};
    IsaProbe probe;
    w.decode(refs, greedy(8), &probe);
    REQUIRE_FALSE(probe.caller.empty());
    REQUIRE(probe.worker.size() == probe.caller.size());
    for (size_t t = 0; t < probe.caller.size(); ++t) {
      CHECK(probe.caller[t] == isa);
      CHECK(probe.worker[t] == isa);
    }
    CHECK(ops::active_isa() == process);  // the scope ends with the batch
  }
}

TEST_CASE("a sentence's encoder rows do not depend on its batch-mates (sources packed, no padding)", "[runtime][padding]") {
  // Encode a short sentence after two different long ones, and alone: every value of its
  // cross K/V must be bit-identical — nothing of the other sentence reaches it, neither
  // through the packed rows nor through the cache's padded positions.
  auto model = trained_tiny_model();
  PlanLimits limits;
  limits.max_batch = 2, limits.max_source_length = 13, limits.max_target_length = 4;
  auto plan = ExecutionPlan::compile(model, limits);
  ops::AlignedBuffer arena(plan->arena_bytes());
  PlanExecutor exec(*plan, arena.data());
  const auto& io = plan->io();
  const std::int64_t ld = plan->buffers()[io.cross_kv].cols, D = model->config().d_model, dh = model->config().head_dim();
  const std::int64_t L = 13, n = 4;  // the long and the short sentence's tokens
  // The short sentence's cross K/V, gathered from the head-major cache (2L blocks of
  // [sentence][head][S][head_dim]) of a batch of `batch` sentences padded to S positions.
  auto short_rows = [&](std::int64_t batch, std::int64_t S, std::int64_t sentence) {
    const float* kv = exec.buffer<float>(io.cross_kv);
    std::vector<float> out;
    for (std::int64_t g = 0; g < ld / D; ++g)
      for (std::int64_t h = 0; h < D / dh; ++h)
        for (std::int64_t p = 0; p < n; ++p) {
          const float* head = kv + g * batch * S * D + sentence * S * D + h * S * dh + p * dh;
          out.insert(out.end(), head, head + dh);
        }
    return out;
  };
  std::vector<std::vector<float>> seen;
  for (std::int32_t first : {4, 30}) {  // two long sentences, then the short one
    std::int32_t* tokens = exec.buffer<std::int32_t>(io.source_tokens);
    std::int32_t* positions = exec.buffer<std::int32_t>(io.source_positions);
    for (std::int64_t s = 0; s < L; ++s) tokens[s] = first + static_cast<std::int32_t>(s), positions[s] = static_cast<std::int32_t>(s);
    for (std::int64_t s = 0; s < n; ++s)
      tokens[L + s] = 20 + static_cast<std::int32_t>(s), positions[L + s] = static_cast<std::int32_t>(s);
    exec.buffer<std::int32_t>(io.source_lengths)[0] = static_cast<std::int32_t>(L);
    exec.buffer<std::int32_t>(io.source_lengths)[1] = static_cast<std::int32_t>(n);
    exec.run(Phase::encoder, {L + n, 2, L, 0});
    seen.push_back(short_rows(2, L, 1));
  }
  {  // alone
    std::int32_t* tokens = exec.buffer<std::int32_t>(io.source_tokens);
    std::int32_t* positions = exec.buffer<std::int32_t>(io.source_positions);
    for (std::int64_t s = 0; s < n; ++s) tokens[s] = 20 + static_cast<std::int32_t>(s), positions[s] = static_cast<std::int32_t>(s);
    exec.buffer<std::int32_t>(io.source_lengths)[0] = static_cast<std::int32_t>(n);
    exec.run(Phase::encoder, {n, 1, n, 0});
    seen.push_back(short_rows(1, n, 0));
  }
  CHECK(seen[0] == seen[1]);
  CHECK(seen[0] == seen[2]);
  // Rows that are not its sources' tokens are an internal error, not a silent misreading.
  CHECK_THROWS_WITH(exec.run(Phase::encoder, {L + n + 1, 2, L, 0}), Contains("rows but its sources"));
}

TEST_CASE("attention caches: an int8 model plans bf16 caches, half the bytes, unless asked for float32", "[runtime][plan]") {
  const ModelConfig c = preset_config("tiny");
  auto weights = random_weights(c, 5);
  PlanLimits limits;
  limits.max_batch = 3, limits.max_source_length = 11, limits.max_target_length = 9, limits.beam_size = 2;
  auto bytes_of = [](const ExecutionPlan& p, int id) { return p.buffers()[id].bytes; };
  LoadOptions f32;
  f32.compute_type = "int8", f32.kv_cache_type = "float32";
  LoadOptions bf16;
  bf16.compute_type = "int8";
  const auto a = ExecutionPlan::compile(Model::build(c, weights, {}, f32), limits);
  const auto b = ExecutionPlan::compile(Model::build(c, weights, {}, bf16), limits);
  CHECK(a->io().kv_type == ops::KvType::f32);
  CHECK(b->io().kv_type == ops::KvType::bf16);
  for (int id : {a->io().self_keys, a->io().self_values, a->io().cross_kv}) {
    INFO(a->buffers()[id].name);
    CHECK(a->buffers()[id].type == ElementType::f32);
    CHECK(b->buffers()[id].type == ElementType::bf16);
    CHECK(bytes_of(*b, id) * 2 == bytes_of(*a, id));
  }
  CHECK(b->arena_bytes() < a->arena_bytes());
  CHECK_THAT(b->describe(), Catch::Contains("bf16") && Catch::Contains("→kv bf16"));
  // Both translate; each agrees with itself whatever the batch grouping (the bf16 cache is
  // written and read through the same head-major layout for every batch shape).
  DecodeOptions with_attention = greedy();
  with_attention.return_attention = true;
  std::vector<std::vector<SentenceResult>> runs;
  for (const LoadOptions& lo : {f32, bf16}) {
    auto model = Model::build(c, weights, {}, lo);
    const auto sources = tiny_sources();
    TranslatorConfig one = small_config(1, 1), three = small_config(3, 1);
    const auto alone = Translator(model, one).translate(sources, greedy());
    CHECK(best_tokens(Translator(model, three).translate(sources, greedy())) == best_tokens(alone));
    runs.push_back(Translator(model, three).translate(sources, with_attention));
  }
  // return_attention reads the bf16 cross cache too: each row a distribution over the
  // source, within bf16's rounding of the float32 cache's, where the tokens agree.
  std::int64_t compared = 0;
  for (size_t s = 0; s < runs[0].size(); ++s) {
    const auto &a = runs[0][s].hypotheses.at(0), &b = runs[1][s].hypotheses.at(0);
    REQUIRE(b.attention.size() >= b.tokens.size());
    REQUIRE(a.attention.size() >= a.tokens.size());
    for (const auto& row : b.attention) {
      double sum = 0;
      for (float p : row) sum += p;
      CHECK(std::abs(sum - 1.0) < 1e-4);
    }
    for (size_t t = 0; t < std::min(a.tokens.size(), b.tokens.size()) && a.tokens[t] == b.tokens[t]; ++t, ++compared)
      for (size_t j = 0; j < a.attention[t].size(); ++j) CHECK(std::abs(a.attention[t][j] - b.attention[t][j]) < 1e-2);
  }
  CHECK(compared > 0);
}

TEST_CASE("batching: any grouping gives the same hypotheses, in input order", "[runtime][batching]") {
  const auto sources = tiny_sources();
  const auto one_by_one = Translator(trained_tiny_model(), small_config(1, 1)).translate(sources, greedy());
  for (std::int64_t batch : {2, 3, 10}) {
    const auto batched = Translator(trained_tiny_model(), small_config(batch, 1)).translate(sources, greedy());
    INFO("batch size " << batch);
    CHECK(best_tokens(batched) == best_tokens(one_by_one));
  }
  // max_batch_tokens caps padded tokens per batch.
  TranslatorConfig capped = small_config(10, 1);
  capped.max_batch_tokens = 20;
  CHECK(best_tokens(Translator(trained_tiny_model(), capped).translate(sources, greedy())) == best_tokens(one_by_one));
}

TEST_CASE("make_batches sorts by length and respects both caps", "[runtime][batching]") {
  const std::vector<std::int64_t> lengths = {5, 1, 9, 3, 3, 7, 2, 8, 4, 6};
  const auto batches = make_batches(lengths, {3, 16});
  std::vector<std::int64_t> seen;
  std::int64_t previous_longest = 0;
  for (const auto& b : batches) {
    CHECK(b.size() <= 3);
    std::int64_t longest = 0;
    for (std::int64_t i : b) longest = std::max(longest, lengths[i]), seen.push_back(i);
    CHECK(static_cast<std::int64_t>(b.size()) * longest <= 16);
    CHECK(longest >= previous_longest);
    previous_longest = longest;
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(make_batches(std::vector<std::int64_t>{40}, {4, 16}).size() == 1);  // too long alone: a batch of its own
}

TEST_CASE("finished sentences leave the batch", "[runtime][decoding]") {
  const auto sources = tiny_sources();
  Translator t(trained_tiny_model(), small_config(10, 1));
  t.reset_statistics();
  const auto results = t.translate(sources, greedy());
  const DecodeCounters c = t.counters();
  std::int64_t longest = 0, work = 0;
  for (const auto& r : results) {
    const std::int64_t steps = static_cast<std::int64_t>(r.hypotheses[0].tokens.size()) + (r.hypotheses[0].finished ? 1 : 0);
    longest = std::max(longest, steps);
    work += steps;
  }
  CHECK(c.decoder_steps == longest);
  CHECK(c.decoder_row_steps == work);  // a row is computed exactly while its sentence is live
  CHECK(work < longest * static_cast<std::int64_t>(sources.size()));
}

TEST_CASE("beam search: n-best lists, scores and length penalty", "[runtime][beam]") {
  const auto sources = tiny_sources();
  Translator t(trained_tiny_model(), small_config(4, 5));
  for (float penalty : {0.0f, 1.0f, 0.6f}) {
    DecodeOptions o = greedy();
    o.beam_size = 5, o.num_hypotheses = 3, o.length_penalty = penalty;
    const auto results = t.translate(sources, o);
    INFO("length penalty " << penalty);
    for (const auto& r : results) {
      REQUIRE(r.hypotheses.size() == 3);
      for (size_t k = 0; k < r.hypotheses.size(); ++k) {
        const Hypothesis& h = r.hypotheses[k];
        const float length = static_cast<float>(h.tokens.size() + (h.finished ? 1 : 0));
        CHECK(h.score == Approx(h.log_prob / std::pow(length, penalty)).epsilon(1e-6));
        float sum = 0;
        for (float lp : h.token_log_probs) sum += lp;
        CHECK(sum == Approx(h.log_prob).margin(1e-4));
        CHECK(h.token_log_probs.size() == h.tokens.size() + (h.finished ? 1 : 0));
        if (k > 0) CHECK(h.score <= r.hypotheses[k - 1].score);
      }
    }
  }
  // Each hypothesis's log-probabilities are the model's: forcing its tokens as a target
  // prefix re-scores them to the same values. (Beam search need not beat greedy: a
  // sentence stops once `beam` hypotheses ended, and a pruned longer path may have been
  // better — tools/reference.py does the same, and the parity tests hold it to that.)
  DecodeOptions o = greedy();
  o.beam_size = 5, o.num_hypotheses = 5, o.length_penalty = 0.0f;
  const auto beam = t.translate(sources, o);
  for (size_t s = 0; s < sources.size(); ++s)
    for (const Hypothesis& h : beam[s].hypotheses) {
      DecodeOptions forced = greedy(static_cast<std::int64_t>(h.tokens.size()) + 1);
      const auto again = t.translate(std::vector<std::vector<std::int32_t>>{sources[s]}, forced,
                                     std::vector<std::vector<std::int32_t>>{h.tokens});
      const Hypothesis& g = again[0].hypotheses[0];
      REQUIRE(g.token_log_probs.size() >= h.tokens.size());
      for (size_t i = 0; i < h.tokens.size(); ++i) CHECK(g.token_log_probs[i] == Approx(h.token_log_probs[i]).margin(1e-5));
    }
  const auto greedy_results = t.translate(sources, greedy());
  // A beam of one is greedy search.
  o.beam_size = 1, o.num_hypotheses = 1;
  CHECK(best_tokens(t.translate(sources, o)) == best_tokens(greedy_results));
}

TEST_CASE("sampling is reproducible per sentence, whatever the batch", "[runtime][sampling]") {
  auto sources = tiny_sources();
  DecodeOptions o = greedy();
  o.sampling = true, o.sampling_topk = 10, o.sampling_topp = 0.95f, o.temperature = 1.2f;
  o.seed = 1234;
  const auto a = Translator(trained_tiny_model(), small_config(10, 1)).translate(sources, o);
  const auto b = Translator(trained_tiny_model(), small_config(3, 1)).translate(sources, o);
  CHECK(best_tokens(a) == best_tokens(b));
  // Sentence ids, not positions, key the draws: translate the reversed list with ids reversed.
  std::vector<std::vector<std::int32_t>> reversed(sources.rbegin(), sources.rend());
  const Translator t(trained_tiny_model(), small_config(4, 1));
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto one = t.translate(std::vector<std::vector<std::int32_t>>{sources[i]}, o, {}, i);
    CHECK(one[0].hypotheses[0].tokens == a[i].hypotheses[0].tokens);
  }
  o.seed = 99;
  CHECK(best_tokens(t.translate(sources, o)) != best_tokens(a));
  // top_k = 1 samples the argmax: greedy.
  o.sampling_topk = 1;
  CHECK(best_tokens(t.translate(sources, o)) == best_tokens(t.translate(sources, greedy())));
}

TEST_CASE("min_length and max_length", "[runtime][decoding]") {
  const auto sources = tiny_sources();
  Translator t(trained_tiny_model(), small_config(4, 3));
  for (std::int64_t beam : {1, 3}) {
    DecodeOptions o = greedy(9);
    o.beam_size = beam, o.min_length = 6;
    for (const auto& r : t.translate(sources, o)) {
      const Hypothesis& h = r.hypotheses[0];
      CHECK(h.tokens.size() >= 6);
      CHECK(h.tokens.size() <= 9);
      if (!h.finished) CHECK(h.tokens.size() == 9);
    }
    o.min_length = o.max_length = 7;  // exactly 7 tokens, as the benchmarks force
    for (const auto& r : t.translate(sources, o)) {
      CHECK(r.hypotheses[0].tokens.size() == 7);
      CHECK_FALSE(r.hypotheses[0].finished);
    }
  }
}

TEST_CASE("a target prefix is forced, then decoding continues", "[runtime][prefix]") {
  const auto sources = tiny_sources();
  Translator t(trained_tiny_model(), small_config(4, 3));
  std::vector<std::vector<std::int32_t>> prefixes(sources.size());
  prefixes[0] = {9, 9, 9};
  prefixes[3] = {12};
  for (std::int64_t beam : {1, 3}) {
    DecodeOptions o = greedy();
    o.beam_size = beam;
    const auto plain = t.translate(sources, o);
    const auto forced = t.translate(sources, o, prefixes);
    INFO("beam " << beam);
    for (size_t s = 0; s < sources.size(); ++s) {
      const auto& tokens = forced[s].hypotheses[0].tokens;
      if (prefixes[s].empty()) {
        CHECK(tokens == plain[s].hypotheses[0].tokens);
      } else {
        REQUIRE(tokens.size() >= prefixes[s].size());
        CHECK(std::equal(prefixes[s].begin(), prefixes[s].end(), tokens.begin()));
      }
    }
  }
}

TEST_CASE("an empty source decodes without NaN", "[runtime][decoding]") {
  Translator t(trained_tiny_model(), small_config(2, 1));
  const auto r = t.translate(std::vector<std::vector<std::int32_t>>{{}, {5, 6}}, greedy(8));
  CHECK(std::isfinite(r[0].hypotheses[0].log_prob));
}

TEST_CASE("bad batches and options are rejected before any work", "[runtime][errors]") {
  Translator t(trained_tiny_model(), small_config(2, 2));
  const std::vector<std::vector<std::int32_t>> ok = {{5, 6}};
  DecodeOptions o = greedy();
  CHECK_THROWS_WITH(t.translate(std::vector<std::vector<std::int32_t>>{std::vector<std::int32_t>(17, 5)}, o),
                    Contains("sentence 0: source has 17 tokens, more than max_source_length 16"));
  CHECK_THROWS_WITH(t.translate(std::vector<std::vector<std::int32_t>>{{5, 50}}, o),
                    Contains("source token 1 has id 50, outside the source vocabulary [0, 50)"));
  CHECK_THROWS_WITH(t.translate(ok, o, std::vector<std::vector<std::int32_t>>{{60}}),
                    Contains("target prefix token 0 has id 60, outside the target vocabulary"));
  o.beam_size = 3;
  CHECK_THROWS_WITH(t.translate(ok, o), Contains("beam_size = 3: must be ≤ the translator's max_beam_size 2"));
  o.beam_size = 2, o.num_hypotheses = 3;
  CHECK_THROWS_WITH(t.translate(ok, o), Contains("num_hypotheses = 3: must be ≤ beam_size × patience = 2"));
  o = greedy(25);
  CHECK_THROWS_WITH(t.translate(ok, o), Contains("max_length = 25: must be in [0, 24] (the translator's max_target_length"));
  o = greedy();
  o.min_length = 30;
  CHECK_THROWS_WITH(t.translate(ok, o), Contains("min_length = 30: must be ≤ max_length (24)"));
  o = greedy();
  o.sampling = true, o.sampling_topp = 0;
  CHECK_THROWS_WITH(t.translate(ok, o), Contains("sampling_topp = 0: must be a number in (0, 1]"));
  o.sampling_topp = 1, o.temperature = -1;
  CHECK_THROWS_WITH(t.translate(ok, o), Contains("temperature = -1: must be a finite number ≥ 0"));

  Workspace w(ExecutionPlan::compile(trained_tiny_model(), small_config(2, 1).plan_limits(trained_tiny_model()->config())));
  std::vector<std::int32_t> s = {5};
  std::vector<SourceRef> three = {{s, {}, 0}, {s, {}, 1}, {s, {}, 2}};
  CHECK_THROWS_WITH(w.decode(three, greedy()), Contains("batch of 3 sentences exceeds the plan's max_batch 2"));
}

}  // namespace attend::runtime

namespace attend::runtime {

// Issue 13: the draw took the first candidate as the most likely although candidates
// are only sorted when top-k/top-p cut them; at low temperature every other candidate
// underflowed and <unk> (id 0 of the unsorted list) came out.
TEST_CASE("sampling tends to greedy search as the temperature falls", "[runtime][sampling]") {
  const auto sources = tiny_sources();
  const Translator t(trained_tiny_model(), small_config(4, 1));
  const auto want = t.translate(sources, greedy());
  for (const auto& [topk, topp] : std::vector<std::pair<std::int64_t, float>>{{0, 1.0f}, {10, 1.0f}, {0, 0.9f}, {5, 0.8f}})
    for (float temperature : {0.2f, 0.05f, 1e-3f, 0.0f}) {
      INFO("top-k " << topk << ", top-p " << topp << ", temperature " << temperature);
      DecodeOptions o = greedy();
      o.sampling = true, o.sampling_topk = topk, o.sampling_topp = topp, o.temperature = temperature, o.seed = 7;
      const auto got = t.translate(sources, o);
      for (size_t s = 0; s < sources.size(); ++s) {
        const Hypothesis& h = got[s].hypotheses[0];
        if (temperature <= 1e-3f) {  // p^(1/T): only the most likely token is left
          CHECK(h.tokens == want[s].hypotheses[0].tokens);
          CHECK(h.score == Approx(want[s].hypotheses[0].score).margin(1e-5));
        }
        // Still a draw, but only among likely tokens (the bug drew log p ≈ −28 tokens).
        for (float lp : h.token_log_probs) CHECK(lp > -6.0f);
      }
    }
}

// (That the draws are independent and follow the distribution: test_sampling_distribution.cpp.)
TEST_CASE("sampling several hypotheses: best first, and draw 0 is the one-hypothesis draw", "[runtime][sampling]") {
  const auto sources = tiny_sources();
  const Translator t(trained_tiny_model(), small_config(4, 4));
  DecodeOptions o = greedy();
  o.sampling = true, o.num_hypotheses = 4, o.seed = 3, o.temperature = 1.5f;
  const auto got = t.translate(sources, o);
  for (const auto& r : got) {
    REQUIRE(r.hypotheses.size() == 4);
    for (size_t k = 1; k < 4; ++k) CHECK(r.hypotheses[k - 1].score >= r.hypotheses[k].score);  // best first
  }
  // Draw 0 of each sentence is the one-hypothesis draw.
  o.num_hypotheses = 1;
  const auto one = t.translate(sources, o);
  for (size_t s = 0; s < sources.size(); ++s) {
    bool first_draw_kept = false;
    for (const auto& h : got[s].hypotheses) first_draw_kept |= h.tokens == one[s].hypotheses[0].tokens;
    INFO("sentence " << s);
    CHECK(first_draw_kept);
  }
}

// The rules on hand-made logits, each against CTranslate2's definition.
TEST_CASE("logits rules: repetition penalty, n-grams, suppressed tokens and sequences, min_length", "[runtime][decoding]") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::int32_t> end_ids = {1};
  std::vector<float> scratch(16);
  auto run = [&](const DecodeOptions& o, const std::vector<std::int32_t>& history, std::int64_t generated) {
    LogitsRules rules;
    rules.reset(o, end_ids, 0);
    std::vector<float> logits = {0.5f, 1.0f, 2.0f, -1.0f, 3.0f, 0.0f, -2.0f};
    rules.apply(logits.data(), history, generated, scratch.data());
    return logits;
  };
  DecodeOptions o;
  o.min_length = 0;
  o.repetition_penalty = 2.0f;  // positive logits halved, negative doubled, once per token
  CHECK(run(o, {2, 3, 2}, 3) == std::vector<float>{0.5f, 1.0f, 1.0f, -2.0f, 3.0f, 0.0f, -2.0f});
  o = DecodeOptions();
  o.min_length = 0, o.no_repeat_ngram_size = 2;  // history 4 5 4: "4 5" seen, so 5 may not follow 4
  CHECK(run(o, {4, 5, 4}, 3) == std::vector<float>{0.5f, 1.0f, 2.0f, -1.0f, 3.0f, -inf, -2.0f});
  o.no_repeat_ngram_size = 3;  // "5 4" never followed by anything yet
  CHECK(run(o, {4, 5, 4}, 3) == std::vector<float>{0.5f, 1.0f, 2.0f, -1.0f, 3.0f, 0.0f, -2.0f});
  o = DecodeOptions();
  o.min_length = 0, o.disable_unk = true, o.suppress_ids = {{6}, {3, 4}, {2, 3, 5}};
  CHECK(run(o, {2, 3}, 2) == std::vector<float>{-inf, 1.0f, 2.0f, -1.0f, -inf, -inf, -inf});
  CHECK(run(o, {3, 2}, 2) == std::vector<float>{-inf, 1.0f, 2.0f, -1.0f, 3.0f, 0.0f, -inf});
  o = DecodeOptions();  // min_length 1: the end token is impossible first, then allowed
  CHECK(run(o, {}, 0)[1] == -inf);
  CHECK(run(o, {4}, 1)[1] == 1.0f);
}

}  // namespace attend::runtime
