// Concurrency: one translator shared by many threads, profiling switched and read while
// they translate, thread teams started from many threads at once, nested, and from
// threads that come and go. Built on its own with -fsanitize=thread by
// tests/tsan/run_tsan.sh (a ctest test), so ThreadSanitizer checks every one of these.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "attend/ops/gemm.hpp"
#include "decoding_fixture.hpp"
#include "model/random_model.hpp"
#include "translator/translator.hpp"

namespace attend::runtime {
namespace {

std::shared_ptr<const Model> tiny_model() { return test::tiny_preset_model(); }

std::vector<std::vector<std::int32_t>> sources(int n, int seed) {
  std::vector<std::vector<std::int32_t>> out;
  for (int i = 0; i < n; ++i) {
    std::vector<std::int32_t> s;
    for (int k = 0; k < 3 + (i * 7 + seed) % 13; ++k) s.push_back(4 + (i * 31 + k * 17 + seed) % 900);
    out.push_back(s);
  }
  return out;
}

std::vector<std::vector<std::int32_t>> best(const std::vector<SentenceResult>& results) {
  std::vector<std::vector<std::int32_t>> out;
  for (const auto& r : results) out.push_back(r.hypotheses.at(0).tokens);
  return out;
}

DecodeOptions options(std::int64_t beam) {
  DecodeOptions o;
  o.beam_size = beam, o.max_length = 12;
  return o;
}

TranslatorConfig config(int threads) {
  TranslatorConfig c;
  c.threads = threads, c.max_batch_size = 8, c.max_target_length = 12, c.max_beam_size = 2;
  return c;
}

}  // namespace

TEST_CASE("one translator shared by many threads, each with its own compute threads", "[concurrency]") {
  const Translator shared(tiny_model(), config(2));
  const auto input = sources(24, 1);
  const Translator alone(tiny_model(), config(1));
  const std::vector<std::vector<std::vector<std::int32_t>>> expected = {best(alone.translate(input, options(1))),
                                                                        best(alone.translate(input, options(2)))};
  std::vector<std::vector<std::vector<std::int32_t>>> got(6);
  auto beam_of = [](int thread, int round) { return 1 + (thread + round) % 2; };
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2; ++round) got[t] = best(shared.translate(input, options(beam_of(t, round))));
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < 6; ++t) {
    INFO("thread " << t);
    CHECK(got[t] == expected[beam_of(t, 1) - 1]);  // the single-threaded translator's answer
  }
}

TEST_CASE("profiling is switched, read and reset while other threads translate", "[concurrency]") {
  const Translator t(tiny_model(), config(2));
  std::atomic<bool> done{false};
  std::atomic<std::int64_t> translated{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 3; ++w)
    workers.emplace_back([&, w] {
      const auto input = sources(6, w);
      while (!done.load()) translated += static_cast<std::int64_t>(t.translate(input, options(1 + w % 2)).size());
    });
  double seen = 0;
  // At least 200 rounds, and on until some translation has finished: on a loaded
  // machine 200 rounds can pass before the first one does (bounded: a minute).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int i = 0; i < 200 || (translated.load() == 0 && std::chrono::steady_clock::now() < deadline); ++i) {
    t.set_profiling(i % 3 != 0);
    for (double s : t.step_seconds()) seen += s;
    seen += t.search_seconds();
    (void)t.counters();
    if (i % 50 == 49) t.reset_statistics();
    std::this_thread::yield();
  }
  done = true;
  for (auto& w : workers) w.join();
  CHECK(translated.load() > 0);
  CHECK(seen >= 0);
  // Quiescent: the totals count exactly what was translated since the reset.
  t.reset_statistics();
  t.set_profiling(true);
  const auto input = sources(10, 7);
  t.translate(input, options(1));
  CHECK(t.counters().sentences == 10);
  double profiled = 0;
  for (double s : t.step_seconds()) profiled += s;
  CHECK(profiled > 0);
}

TEST_CASE("thread teams: many callers at once, nested work, callers that come and go", "[concurrency]") {
  // C = A·Bᵀ on 1 thread is the reference; every threaded run must match it exactly
  // (the same blocking, each output tile computed once).
  const ops::index_t M = 256, N = 192, K = 128;  // large enough to use several threads
  std::vector<float> a(M * K), b(N * K);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 37) % 101) / 101.0f - 0.5f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 53) % 97) / 97.0f - 0.5f;
  const ops::PackedWeight w = ops::pack_weight(ops::ConstMatrix(b.data(), N, K), ops::active_isa());
  auto gemm = [&](int threads) {
    std::vector<float> c(M * N);
    ops::gemm(ops::ConstMatrix(a.data(), M, K), w, ops::Matrix(c.data(), M, N), {}, threads);
    return c;
  };
  const std::vector<float> expected = gemm(1);

  std::atomic<int> mismatches{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)  // several teams at once
    callers.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) mismatches += gemm(2 + (t + i) % 3) != expected;
    });
  for (auto& c : callers) c.join();
  for (int round = 0; round < 10; ++round) {  // threads whose teams are made and torn down
    std::thread short_lived([&] { mismatches += gemm(3) != expected; });
    short_lived.join();
  }
  CHECK(mismatches.load() == 0);
}

TEST_CASE("thread teams survive fork(): the child makes its own", "[concurrency][fork]") {
  const ops::index_t M = 128, N = 128, K = 128;
  std::vector<float> a(M * K, 0.5f), b(N * K, 0.25f), c(M * N);
  const ops::PackedWeight w = ops::pack_weight(ops::ConstMatrix(b.data(), N, K), ops::active_isa());
  ops::gemm(ops::ConstMatrix(a.data(), M, K), w, ops::Matrix(c.data(), M, N), {}, 2);  // the parent's team exists
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // in the child: threaded work must complete, not wait on workers that do not exist
    ops::gemm(ops::ConstMatrix(a.data(), M, K), w, ops::Matrix(c.data(), M, N), {}, 2);
    ::_exit(c[0] == 0.5f * 0.25f * K ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace attend::runtime
