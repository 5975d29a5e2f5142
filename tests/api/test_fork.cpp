// fork() after the engine's threads started: a child — a C or C++ program's fork(), as
// Python's os.fork() and multiprocessing's "fork" pools do underneath — must be able
// to use the translators and encoders its parent made and used, with the parent's
// results, never waiting for worker threads that do not exist in it or for a lock one
// of them held when it forked. Every child runs under a deadline: a hang fails the
// test instead of hanging the suite.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "api_fixture.hpp"
#include "attend/attend.h"
#include "attend/attend.hpp"

namespace {

using attend::api_test::corpus;
using attend::api_test::kModel;

const std::string kEncoder = std::string(ATTEND_SOURCE_DIR) + "/tests/data/encoders/bert";

enum class Child { passed, failed, hung, crashed };

// Runs `check` in a forked child; what became of it within `seconds`.
Child in_child(const std::function<bool()>& check, int seconds = 30) {
  const pid_t pid = ::fork();
  if (pid < 0) return Child::crashed;
  if (pid == 0) {
    bool ok = false;
    try {
      ok = check();
    } catch (...) {
    }
    ::_exit(ok ? 0 : 1);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return Child::hung;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!WIFEXITED(status)) return Child::crashed;
  return WEXITSTATUS(status) == 0 ? Child::passed : Child::failed;
}

std::vector<std::string> texts_of(const std::vector<attend::TranslationResult>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) out.push_back(r.hypotheses.at(0).text);
  return out;
}

attend::TranslationOptions sampling() {
  attend::TranslationOptions o;
  o.sampling = true, o.sampling_topk = 10, o.seed = 7, o.max_length = 24;
  return o;
}

}  // namespace

TEST_CASE("fork: a C++ Translator with inter_threads 2 translates in the child as in the parent", "[fork]") {
  const attend::Model model = attend::Model::load(kModel);
  attend::TranslatorOptions options;
  options.inter_threads = 2, options.intra_threads = 1, options.max_batch_size = 4;
  const attend::Translator translator(model, options);
  const auto lines = corpus(24);  // 6 batches: both workers take some
  const auto expected = texts_of(translator.translate_text(lines, sampling()));
  CHECK(in_child([&] { return texts_of(translator.translate_text(lines, sampling())) == expected; }) == Child::passed);
  // A grandchild too, and the parent still has its own workers.
  CHECK(in_child([&] {
    return texts_of(translator.translate_text(lines, sampling())) == expected &&
           in_child([&] { return texts_of(translator.translate_text(lines, sampling())) == expected; }) == Child::passed;
  }) == Child::passed);
  CHECK(texts_of(translator.translate_text(lines, sampling())) == expected);
}

TEST_CASE("fork: a C++ Encoder with inter_threads 2 embeds in the child as in the parent", "[fork]") {
  attend::EncoderOptions options;  // two compute threads a batch: each batch worker has a thread team too
  options.inter_threads = 2, options.intra_threads = 2, options.max_batch_size = 2;
  const attend::Encoder encoder(kEncoder, options);
  const std::vector<std::string> texts = {"a first text", "the second one", "three", "and a fourth", "five", "six of them"};
  const auto expected = encoder.embed(texts);
  CHECK(in_child([&] { return encoder.embed(texts) == expected; }) == Child::passed);
  CHECK(encoder.embed(texts) == expected);
}

TEST_CASE("fork: the C API's translator and encoder work in the child", "[fork]") {
  attend_model* model = nullptr;
  REQUIRE(attend_model_load(kModel.c_str(), nullptr, &model) == ATTEND_OK);
  attend_translator_options topt;
  attend_translator_options_init(&topt);
  topt.inter_threads = 2, topt.intra_threads = 1, topt.max_batch_size = 4;
  attend_translator* translator = nullptr;
  REQUIRE(attend_translator_create(model, &topt, &translator) == ATTEND_OK);
  const auto lines = corpus(16);
  std::vector<const char*> c_lines;
  for (const auto& l : lines) c_lines.push_back(l.c_str());
  auto translate = [&] {
    attend_result* result = nullptr;
    std::vector<std::string> out;
    if (attend_translate_text(translator, c_lines.data(), c_lines.size(), nullptr, &result) != ATTEND_OK) return out;
    for (size_t i = 0; i < attend_result_sentences(result); ++i) out.emplace_back(attend_result_text(result, i, 0));
    attend_result_free(result);
    return out;
  };
  const auto expected = translate();
  REQUIRE(expected.size() == lines.size());

  attend_encoder_options eopt;
  attend_encoder_options_init(&eopt);
  eopt.inter_threads = 2, eopt.intra_threads = 1, eopt.max_batch_size = 1;
  attend_encoder* encoder = nullptr;
  REQUIRE(attend_encoder_load(kEncoder.c_str(), &eopt, &encoder) == ATTEND_OK);
  const char* texts[] = {"one", "two texts", "and three", "four"};
  auto embed = [&] {
    std::vector<float> out(4 * attend_encoder_embedding_dim(encoder));
    if (attend_encoder_embed_text(encoder, texts, 4, -1, out.data()) != ATTEND_OK) out.clear();
    return out;
  };
  const auto embeddings = embed();
  REQUIRE(!embeddings.empty());

  CHECK(in_child([&] { return translate() == expected && embed() == embeddings; }) == Child::passed);
  CHECK(translate() == expected);
  attend_encoder_free(encoder);
  attend_translator_free(translator);
  attend_model_free(model);
}

// Another thread is inside a call — holding the translator's locks, its workers busy —
// whenever the parent forks: the child never inherits a lock that nobody will release.
TEST_CASE("fork: while other threads translate and embed, every child still works", "[fork]") {
#if defined(__SANITIZE_ADDRESS__)
  // GCC 12's AddressSanitizer does not hold its own allocator's locks across fork(): a
  // child forked while another thread is inside ASan's malloc waits forever on that lock
  // (seen: the child's worker in SizeClassAllocator64::GetFromAllocator). glibc's malloc
  // is fork-safe, so the release suite runs this case; under ASan it cannot be judged.
  WARN("not run under AddressSanitizer: its allocator is not fork-safe with other threads allocating");
  return;
#endif
  const attend::Model model = attend::Model::load(kModel);
  attend::TranslatorOptions options;
  options.inter_threads = 2, options.intra_threads = 1, options.max_batch_size = 2;
  const attend::Translator translator(model, options);
  attend::EncoderOptions eoptions;
  eoptions.inter_threads = 2, eoptions.intra_threads = 1, eoptions.max_batch_size = 1;
  const attend::Encoder encoder(kEncoder, eoptions);
  const auto lines = corpus(6);
  const std::vector<std::string> texts = {"one", "two", "three"};
  const auto expected = texts_of(translator.translate_text(lines, sampling()));
  const auto embeddings = encoder.embed(texts);
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  std::vector<std::thread> busy;
  for (int t = 0; t < 2; ++t)
    busy.emplace_back([&] {
      while (!stop) {
        (void)translator.translate_text(lines, sampling());
        (void)encoder.embed(texts);
        ++calls;
      }
    });
  int passed = 0;
  for (int round = 0; round < 12; ++round) {
    const Child c = in_child([&] { return texts_of(translator.translate_text(lines, sampling())) == expected &&
                                          encoder.embed(texts) == embeddings; });
    passed += c == Child::passed;
    CHECK(c == Child::passed);
  }
  stop = true;
  for (auto& t : busy) t.join();
  CHECK(passed == 12);
  CHECK(calls.load() > 0);
}
