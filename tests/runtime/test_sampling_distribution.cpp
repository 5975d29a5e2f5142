// Sampling draws what it says: many draws from fixed log-probabilities, counted and
// compared (Pearson's chi-square) with the distribution computed here, in double, from
// the definition alone — never with attend's own sampling code:
//
//   p(i) ∝ exp(log p(i) / T) over the candidates, where the candidates are the top-k
//   tokens by log p (ties: the lower id first), then, in decreasing tempered probability
//   (ties: the lower id first), each token whose preceding mass among the top-k
//   candidates is below top_p · their total (CTranslate2's order: top-k, temperature,
//   top-p; a token whose preceding mass is exactly top_p is left out).
//
// Tokens outside the candidates must never be drawn (an exact check). Each chi-square
// test passes when its p-value is at least kAlpha = 1e-6: a correct sampler fails one
// with probability 1e-6, all of this file's (~30) with probability < 1e-4 — and the seeds
// are fixed, so a run either always passes or always fails. 100,000 draws per
// distribution detect any deviation of the size a wrong rule makes (a temperature
// applied twice, a top-p boundary off by one token, draws that repeat) by hundreds of
// standard deviations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <vector>

#include "decoding/search.hpp"
#include "decoding_fixture.hpp"
#include "translator/translator.hpp"

namespace attend::runtime {
namespace {

constexpr double kAlpha = 1e-6;
constexpr std::int64_t kDraws = 100000;
const float kNever = -std::numeric_limits<float>::infinity();

// ---- the chi-square distribution's upper tail, Q(df/2, x/2) -------------------------

// The regularised upper incomplete gamma function Q(a, x): the series of P for x < a + 1,
// Lentz's continued fraction for Q beyond (Numerical Recipes §6.2).
double gamma_q(double a, double x) {
  if (x <= 0) return 1;
  const double log_prefix = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 1000 && std::abs(term) > std::abs(sum) * 1e-16; ++n) sum += term *= x / (a + n);
    return 1 - sum * std::exp(log_prefix);
  }
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    d = std::abs(d) < tiny ? tiny : d;
    c = b + an / c;
    c = std::abs(c) < tiny ? tiny : c;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

double chi_square_p_value(double statistic, std::int64_t degrees_of_freedom) {
  return gamma_q(0.5 * static_cast<double>(degrees_of_freedom), 0.5 * statistic);
}

TEST_CASE("sampling distribution: the chi-square tail matches the tables", "[runtime][sampling]") {
  // Upper 0.1% and 1e-6 points of the chi-square distribution (standard tables;
  // scipy.stats.chi2.isf): the p-value at each must be that probability.
  CHECK(chi_square_p_value(10.828, 1) == Approx(1e-3).epsilon(1e-3));
  CHECK(chi_square_p_value(29.588, 10) == Approx(1e-3).epsilon(1e-3));
  CHECK(chi_square_p_value(23.928, 1) == Approx(1e-6).epsilon(1e-3));
  CHECK(chi_square_p_value(44.811, 9) == Approx(1e-6).epsilon(1e-3));
  CHECK(chi_square_p_value(82.044, 30) == Approx(1e-6).epsilon(1e-3));
  CHECK(chi_square_p_value(0, 3) == 1.0);
  CHECK(chi_square_p_value(3, 3) == Approx(0.3916).epsilon(1e-3));  // below the mean: the series branch
}

// ---- the expected distribution, from the definition ---------------------------------

struct Sampling {
  float temperature = 1;
  std::int64_t topk = 0;  // 0: every token
  float topp = 1;
};

// p(i) for every token, 0 outside the candidates.
std::vector<double> expected_distribution(const std::vector<float>& log_probs, const Sampling& s) {
  const auto V = static_cast<std::int64_t>(log_probs.size());
  std::vector<std::int64_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return log_probs[a] > log_probs[b]; });
  const std::int64_t k = s.topk > 0 ? std::min(s.topk, V) : V;
  order.resize(static_cast<size_t>(k));  // (tempering keeps the order: T > 0)
  const double top = log_probs[order[0]];
  std::vector<double> tempered;
  for (std::int64_t i : order) tempered.push_back(std::exp((log_probs[i] - top) / s.temperature));
  const double total = std::accumulate(tempered.begin(), tempered.end(), 0.0);
  std::vector<double> p(static_cast<size_t>(V), 0.0);
  double before = 0, kept = 0;
  for (size_t j = 0; j < order.size(); ++j) {
    if (s.topp < 1 && before >= static_cast<double>(s.topp) * total) break;
    p[order[j]] = tempered[j];
    kept += tempered[j];
    before += tempered[j];
  }
  for (double& x : p) x /= kept;
  return p;
}

// ---- drawing through the sampler ----------------------------------------------------

class NoFinisher : public Finisher {
 public:
  void finish(std::int32_t, const Selection&, bool) override { FAIL("no row may end: there is no end token"); }
  std::int64_t registered(std::int32_t) const override { return 0; }
};

// The token of each of `rows` draws: sampling_select on `rows` live rows that all hold
// `log_probs`, row r being draw `draw_of(r)` of sentence `sentence_of(r)` (its id) at
// `step`: each (seed, id, draw, step) is its own random stream.
template <class SentenceOf, class DrawOf>
std::vector<std::int32_t> draw_tokens(const std::vector<float>& log_probs, const Sampling& s, std::uint64_t seed,
                                      std::int64_t rows, std::int64_t step, const SentenceOf& sentence_of,
                                      const DrawOf& draw_of) {
  const auto V = static_cast<std::int64_t>(log_probs.size());
  DecodeOptions o;
  o.sampling = true, o.temperature = s.temperature, o.sampling_topk = s.topk, o.sampling_topp = s.topp, o.seed = seed;
  std::vector<float> all;
  all.reserve(static_cast<size_t>(rows * V));
  for (std::int64_t r = 0; r < rows; ++r) all.insert(all.end(), log_probs.begin(), log_probs.end());
  std::int64_t sentences = 0;
  for (std::int64_t r = 0; r < rows; ++r) sentences = std::max<std::int64_t>(sentences, sentence_of(r) + 1);
  std::vector<SourceRef> batch(static_cast<size_t>(sentences));
  for (std::int64_t i = 0; i < sentences; ++i) batch[static_cast<size_t>(i)].id = static_cast<std::uint64_t>(1000 + i);
  std::vector<LiveRow> live(static_cast<size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r)
    live[static_cast<size_t>(r)] = {static_cast<std::int32_t>(sentence_of(r)), static_cast<std::int32_t>(draw_of(r)), 0.0f};
  const std::vector<std::uint8_t> last_step(static_cast<size_t>(sentences), 0);
  NoFinisher finisher;
  SearchInput in;
  in.step = step, in.rows = rows, in.vocab = V, in.log_probs = all.data(), in.live = live.data();
  in.end_ids = {}, in.options = &o, in.batch = batch, in.last_step = last_step.data(), in.finisher = &finisher;
  SamplingScratch scratch(V);
  std::vector<Selection> next(static_cast<size_t>(rows));
  REQUIRE(sampling_select(in, scratch, next.data()) == rows);
  std::vector<std::int32_t> tokens;
  std::int64_t misplaced = 0;  // (counted, not asserted per row: a million assertions cost seconds)
  for (std::int64_t r = 0; r < rows; ++r) {
    misplaced += next[static_cast<size_t>(r)].parent != r;
    tokens.push_back(next[static_cast<size_t>(r)].token);
  }
  REQUIRE(misplaced == 0);
  return tokens;
}

// kDraws independent sentences, one draw each, at step 0.
std::vector<std::int32_t> draw_sentences(const std::vector<float>& log_probs, const Sampling& s, std::uint64_t seed = 7) {
  return draw_tokens(log_probs, s, seed, kDraws, 0, [](std::int64_t r) { return r; }, [](std::int64_t) { return 0; });
}

std::vector<std::int64_t> counts_of(const std::vector<std::int32_t>& tokens, std::int64_t V) {
  std::vector<std::int64_t> counts(static_cast<size_t>(V), 0);
  std::int64_t outside = 0;
  for (std::int32_t t : tokens) {
    if (t < 0 || t >= V) ++outside;
    else ++counts[static_cast<size_t>(t)];
  }
  REQUIRE(outside == 0);
  return counts;
}

// Pearson's chi-square of `observed` against `expected` probabilities (cells with p = 0
// must be empty: checked exactly). Cells with an expected count below 5 are pooled, as
// the chi-square approximation asks. Returns the p-value.
double goodness_of_fit(const std::vector<std::int64_t>& observed, const std::vector<double>& expected) {
  REQUIRE(observed.size() == expected.size());
  const double n = static_cast<double>(std::accumulate(observed.begin(), observed.end(), std::int64_t{0}));
  double statistic = 0, pooled_observed = 0, pooled_expected = 0;
  std::int64_t cells = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    if (expected[i] == 0) {
      INFO("token " << i << " is not a candidate");
      CHECK(observed[i] == 0);
      continue;
    }
    const double e = n * expected[i];
    if (e < 5) {
      pooled_observed += static_cast<double>(observed[i]), pooled_expected += e;
      continue;
    }
    statistic += (static_cast<double>(observed[i]) - e) * (static_cast<double>(observed[i]) - e) / e;
    ++cells;
  }
  if (pooled_expected > 0) {
    statistic += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
    ++cells;
  }
  if (cells < 2) return 1;  // one candidate: nothing to fit (the support check above is the test)
  return chi_square_p_value(statistic, cells - 1);
}

std::string describe(const Sampling& s) {
  return "temperature " + std::to_string(s.temperature) + ", top-k " + std::to_string(s.topk) + ", top-p " +
         std::to_string(s.topp);
}

// Log-probabilities (a log-softmax, as the sampler receives them) of these logits.
std::vector<float> log_softmax(const std::vector<double>& logits) {
  double top = -std::numeric_limits<double>::infinity(), sum = 0;
  for (double x : logits) top = std::max(top, x);
  for (double x : logits) sum += std::exp(x - top);
  std::vector<float> out;
  for (double x : logits) out.push_back(static_cast<float>(x - top - std::log(sum)));
  return out;
}

// Ten tokens, distinct probabilities from 0.33 down to 0.0009, and one that is never allowed.
const std::vector<float>& fixed_log_probs() {
  static const std::vector<float> lp = [] {
    std::vector<float> v = log_softmax({2.1, 1.6, 1.2, 0.9, 0.3, 0.0, -0.4, -1.1, -2.0, -3.5});
    v.push_back(kNever);  // a suppressed token (the logits rules' −inf)
    return v;
  }();
  return lp;
}

void check_draws_follow(const std::vector<float>& lp, const Sampling& s, std::uint64_t seed = 7) {
  INFO(describe(s) << ", seed " << seed);
  const std::vector<double> want = expected_distribution(lp, s);
  const auto counts = counts_of(draw_sentences(lp, s, seed), static_cast<std::int64_t>(lp.size()));
  const double p = goodness_of_fit(counts, want);
  INFO("chi-square p-value " << p);
  CHECK(p >= kAlpha);
}

}  // namespace

TEST_CASE("sampling distribution: draws follow the softmax at each temperature", "[runtime][sampling]") {
  for (float temperature : {0.25f, 0.5f, 1.0f, 1.7f, 4.0f}) check_draws_follow(fixed_log_probs(), {temperature, 0, 1});
  // The temperature matters: at T = 0.5 the plain softmax (T = 1) is rejected, and the
  // other way round — so this test can tell temperatures apart.
  const auto at_half = counts_of(draw_sentences(fixed_log_probs(), {0.5f, 0, 1}), 11);
  CHECK(goodness_of_fit(at_half, expected_distribution(fixed_log_probs(), {1.0f, 0, 1})) < kAlpha);
}

TEST_CASE("sampling distribution: top-k keeps the k most likely tokens, renormalised", "[runtime][sampling]") {
  for (std::int64_t k : {2, 3, 7, 10, 11})
    for (float temperature : {0.6f, 1.0f, 2.5f}) check_draws_follow(fixed_log_probs(), {temperature, k, 1});
  // Exactly the k most likely are ever drawn.
  const auto counts = counts_of(draw_sentences(fixed_log_probs(), {1.0f, 3, 1}), 11);
  for (size_t i = 0; i < counts.size(); ++i) CHECK((counts[i] > 0) == (i < 3));
}

TEST_CASE("sampling distribution: top-p keeps the smallest prefix reaching p, after top-k and temperature",
          "[runtime][sampling]") {
  const std::vector<float>& lp = fixed_log_probs();
  for (float topp : {0.3f, 0.5f, 0.75f, 0.9f, 0.99f})
    for (float temperature : {0.5f, 1.0f, 2.0f}) {
      const Sampling s{temperature, 0, topp};
      // p is not within float rounding of a cumulative sum here (the boundary cases
      // below are exact instead), so the expected candidates are unambiguous.
      const std::vector<double> plain = expected_distribution(lp, {temperature, 0, 1});
      std::vector<double> sorted = plain;
      std::sort(sorted.rbegin(), sorted.rend());
      double cumulative = 0;
      for (double x : sorted) {
        cumulative += x;
        INFO(describe(s));
        REQUIRE(std::abs(cumulative - topp) > 1e-4);
      }
      check_draws_follow(lp, s);
    }
  // top-p applies to the top-k candidates, renormalised (CTranslate2's order).
  for (const auto& [k, topp] : std::vector<std::pair<std::int64_t, float>>{{4, 0.6f}, {5, 0.9f}, {2, 0.7f}})
    check_draws_follow(lp, {1.3f, k, topp});
  // A tiny top_p keeps the most likely token alone.
  const auto counts = counts_of(draw_sentences(lp, {1.0f, 0, 1e-6f}), 11);
  CHECK(counts[0] == kDraws);
}

TEST_CASE("sampling distribution: top-p boundaries and ties", "[runtime][sampling]") {
  // Four equally likely tokens (and two never allowed): each holds exactly 1/4 of the
  // mass, so the cumulative sums are exact.
  const std::vector<float> four = {-1.0f, kNever, -1.0f, -1.0f, kNever, -1.0f};
  // The cumulative mass is exactly top_p after two tokens: the third's preceding mass is
  // not below p, so it is left out — two tokens, the lower ids of the tie.
  for (float temperature : {0.5f, 1.0f, 3.0f}) {
    const auto counts = counts_of(draw_sentences(four, {temperature, 0, 0.5f}), 6);
    CHECK(counts[0] > 0);
    CHECK(counts[2] > 0);
    CHECK(counts[3] == 0);
    CHECK(counts[5] == 0);
    CHECK(goodness_of_fit(counts, {0.5, 0, 0.5, 0, 0, 0}) >= kAlpha);
  }
  // Just above the boundary the third joins; 0.75 keeps three; 1 (off) keeps all four.
  CHECK(goodness_of_fit(counts_of(draw_sentences(four, {1.0f, 0, 0.5001f}), 6), {1 / 3.0, 0, 1 / 3.0, 1 / 3.0, 0, 0}) >= kAlpha);
  CHECK(goodness_of_fit(counts_of(draw_sentences(four, {1.0f, 0, 0.75f}), 6), {1 / 3.0, 0, 1 / 3.0, 1 / 3.0, 0, 0}) >= kAlpha);
  CHECK(goodness_of_fit(counts_of(draw_sentences(four, {1.0f, 0, 1.0f}), 6), {0.25, 0, 0.25, 0.25, 0, 0.25}) >= kAlpha);
  // A tie straddling the cut: one likelier token, then three tied ones; top_p 0.55 of a
  // mass split 0.4 / 0.2 / 0.2 / 0.2 keeps the first and the lowest id of the tie only
  // (its preceding mass 0.4 < 0.55; the next one's, 0.6, is not).
  const double b = std::log(0.2), a = std::log(0.4);
  const std::vector<float> straddle = {static_cast<float>(b), static_cast<float>(b), static_cast<float>(a), static_cast<float>(b)};
  const auto counts = counts_of(draw_sentences(straddle, {1.0f, 0, 0.55f}), 4);
  CHECK(goodness_of_fit(counts, {1 / 3.0, 0, 2 / 3.0, 0}) >= kAlpha);
}

TEST_CASE("sampling distribution: top-k ties keep the lower ids", "[runtime][sampling]") {
  // Three tokens tied for first: top-k 2 keeps the two lowest ids of the tie, equally.
  const std::vector<float> tied = {-2.0f, -1.0f, -1.0f, -1.0f, -3.0f};
  for (float temperature : {0.5f, 1.0f, 2.0f}) {
    const auto counts = counts_of(draw_sentences(tied, {temperature, 2, 1}), 5);
    CHECK(goodness_of_fit(counts, {0, 0.5, 0.5, 0, 0}) >= kAlpha);
    check_draws_follow(tied, {temperature, 4, 1});  // the tie whole, and the next token
  }
}

TEST_CASE("sampling distribution: draws of one sentence, of its hypotheses and of its steps are independent",
          "[runtime][sampling]") {
  const std::vector<float>& lp = fixed_log_probs();
  const Sampling s{1.2f, 6, 1};
  const std::vector<double> p = expected_distribution(lp, s);
  const auto V = static_cast<std::int64_t>(lp.size());
  // Pairs of draws of one sentence — draws 0 and 1 at one step (num_hypotheses), or draw
  // 0 at steps 2 and 3 — against p(i)·p(j): repeated or correlated draws fail.
  const std::int64_t pairs = kDraws / 2;
  const auto by_draw = draw_tokens(lp, s, 11, 2 * pairs, 2, [](std::int64_t r) { return r / 2; },
                                   [](std::int64_t r) { return r % 2; });
  const auto step2 = draw_tokens(lp, s, 11, pairs, 2, [](std::int64_t r) { return r; }, [](std::int64_t) { return 0; });
  const auto step3 = draw_tokens(lp, s, 11, pairs, 3, [](std::int64_t r) { return r; }, [](std::int64_t) { return 0; });
  // Draw 0 of a sentence is the same stream whether or not it has more draws.
  std::int64_t other_stream = 0;
  for (std::int64_t i = 0; i < pairs; ++i) other_stream += by_draw[static_cast<size_t>(2 * i)] != step2[static_cast<size_t>(i)];
  CHECK(other_stream == 0);
  auto joint = [&](auto token_a, auto token_b) {
    std::vector<std::int64_t> counts(static_cast<size_t>(V * V), 0);
    for (std::int64_t i = 0; i < pairs; ++i) ++counts[static_cast<size_t>(token_a(i) * V + token_b(i))];
    std::vector<double> want(static_cast<size_t>(V * V));
    for (std::int64_t a = 0; a < V; ++a)
      for (std::int64_t b = 0; b < V; ++b) want[static_cast<size_t>(a * V + b)] = p[static_cast<size_t>(a)] * p[static_cast<size_t>(b)];
    return goodness_of_fit(counts, want);
  };
  CHECK(joint([&](std::int64_t i) { return by_draw[static_cast<size_t>(2 * i)]; },
              [&](std::int64_t i) { return by_draw[static_cast<size_t>(2 * i + 1)]; }) >= kAlpha);
  CHECK(joint([&](std::int64_t i) { return step2[static_cast<size_t>(i)]; },
              [&](std::int64_t i) { return step3[static_cast<size_t>(i)]; }) >= kAlpha);
  // Neighbouring sentences (ids i and i + 1) too.
  CHECK(joint([&](std::int64_t i) { return step2[static_cast<size_t>(i)]; },
              [&](std::int64_t i) { return step2[static_cast<size_t>((i + 1) % pairs)]; }) >= kAlpha);
  // Each draw index and each step alone follows p; and another seed gives other draws.
  std::vector<std::int32_t> second_draws;
  for (std::int64_t i = 0; i < pairs; ++i) second_draws.push_back(by_draw[static_cast<size_t>(2 * i + 1)]);
  CHECK(goodness_of_fit(counts_of(second_draws, V), p) >= kAlpha);
  CHECK(goodness_of_fit(counts_of(step3, V), p) >= kAlpha);
  const auto other_seed = draw_tokens(lp, s, 12, pairs, 2, [](std::int64_t r) { return r; }, [](std::int64_t) { return 0; });
  CHECK(joint([&](std::int64_t i) { return step2[static_cast<size_t>(i)]; },
              [&](std::int64_t i) { return other_seed[static_cast<size_t>(i)]; }) >= kAlpha);
}

// Through the translator, on a trained model: the first token of many sentences (each
// its own stream: the sentence id) and of their several hypotheses, against the model's
// own step-0 distribution, and the two draws of a sentence (num_hypotheses 2) against
// independent ones. That distribution is read with each token forced as a
// one-token target prefix (its log p is returned), so the sampler is not asked.
TEST_CASE("sampling distribution: a model's first tokens and hypotheses follow its softmax, through the translator",
          "[runtime][sampling]") {
  const auto model = test::trained_tiny_model();
  TranslatorConfig config;
  config.threads = 2, config.max_batch_size = 64, config.max_source_length = 16, config.max_target_length = 8;
  config.max_beam_size = 4;
  const Translator translator(model, config);
  const std::vector<std::int32_t> source = {11, 35, 37, 5};
  const auto V = model->config().tgt_vocab_size;
  DecodeOptions first_step;
  first_step.max_length = 1;
  std::vector<std::vector<std::int32_t>> sources(static_cast<size_t>(V), source), prefixes;
  for (std::int32_t v = 0; v < V; ++v) prefixes.push_back({v});
  std::vector<float> lp;
  for (const SentenceResult& r : translator.translate(sources, first_step, prefixes)) {
    REQUIRE(r.hypotheses.size() == 1);
    REQUIRE(r.hypotheses[0].token_log_probs.size() == 1);
    lp.push_back(r.hypotheses[0].token_log_probs[0]);  // −inf for the end token: min_length 1
  }
  CHECK(lp[static_cast<size_t>(model->config().eos_id)] == kNever);

  const std::int64_t n = 8000, hypotheses = 2;  // two: sorted best first, they are still the two draws
  for (const Sampling& s : {Sampling{1.5f, 0, 1}, Sampling{0.8f, 10, 0.9f}}) {
    INFO(describe(s));
    const std::vector<double> p = expected_distribution(lp, s);
    DecodeOptions o = first_step;
    o.sampling = true, o.temperature = s.temperature, o.sampling_topk = s.topk, o.sampling_topp = s.topp, o.seed = 5;
    o.num_hypotheses = hypotheses;
    const auto results = translator.translate(std::vector<std::vector<std::int32_t>>(static_cast<size_t>(n), source), o);
    std::vector<std::int32_t> firsts;
    std::vector<std::int64_t> pairs(static_cast<size_t>(V * V), 0);  // each sentence's two draws, unordered
    for (const SentenceResult& r : results) {
      REQUIRE(r.hypotheses.size() == static_cast<size_t>(hypotheses));
      for (const Hypothesis& h : r.hypotheses) {
        REQUIRE(h.tokens.size() == 1);
        firsts.push_back(h.tokens[0]);
      }
      const auto [a, b] = std::minmax(r.hypotheses[0].tokens[0], r.hypotheses[1].tokens[0]);
      ++pairs[static_cast<size_t>(a * V + b)];
    }
    CHECK(goodness_of_fit(counts_of(firsts, V), p) >= kAlpha);
    // Independent draws: {a, b} with probability 2·p(a)·p(b), {a, a} with p(a)².
    std::vector<double> want(static_cast<size_t>(V * V), 0.0);
    for (std::int64_t a = 0; a < V; ++a)
      for (std::int64_t b = a; b < V; ++b)
        want[static_cast<size_t>(a * V + b)] = (a == b ? 1 : 2) * p[static_cast<size_t>(a)] * p[static_cast<size_t>(b)];
    CHECK(goodness_of_fit(pairs, want) >= kAlpha);
  }
}

}  // namespace attend::runtime
