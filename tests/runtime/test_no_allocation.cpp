// Running a plan allocates nothing: Workspace::decode is counted for every heap
// allocation (malloc, calloc, realloc, aligned_alloc, posix_memalign, operator new)
// after a warm-up call, for greedy, beam and sampling, with 1 and 2 threads.
//
// This binary replaces the allocation functions, so it is separate from the others.
// Under AddressSanitizer (which owns malloc) only operator new is counted.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "plan/execution_plan.hpp"
#include "formats/model_io.hpp"
#include "decoding/workspace.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
void count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

#if !defined(__SANITIZE_ADDRESS__)
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* malloc(size_t n) {
  count();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  count();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  count();
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  count();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  count();
  *out = __libc_memalign(alignment, n);
  return *out ? 0 : ENOMEM;
}
}
#else
void* operator new(size_t n) {
  count();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  count();
  return std::malloc(n ? n : 1);
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
// Every deallocation form, so that nothing allocated here reaches the sanitizer's
// operator delete (it reports new/free mismatches).
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif

namespace attend::runtime {

TEST_CASE("decoding with a compiled plan performs no heap allocation", "[runtime][allocation]") {
  // attend's own format, and CTranslate2 families with position terms inside attention
  // (T5's bias, Shaw's relative keys/values), RMSNorm, gated FFN, a zero start embedding.
  const std::string data = std::string(ATTEND_SOURCE_DIR) + "/tests/data/";
  const std::string dir = GENERATE_COPY(data + "parity/pre-ln-relu/model", data + "ct2-variants/t5",
                                        data + "ct2-variants/onmt_relative", data + "ct2-variants/marian");
  INFO(dir);
  auto model = load_model(dir);
  const std::vector<std::vector<std::int32_t>> sources = {{7, 12, 14, 12, 40}, {11, 35, 37, 5}, {24, 21}, {30, 31, 33}};
  const std::vector<std::int32_t> prefix = {5};
  std::vector<SourceRef> refs;
  for (size_t i = 0; i < sources.size(); ++i) refs.push_back({sources[i], i == 1 ? std::span(prefix) : std::span<const std::int32_t>(), i});

  for (int threads : {1, 2}) {
    PlanLimits limits;
    limits.max_batch = 4, limits.max_source_length = 8, limits.max_target_length = 16, limits.beam_size = 4;
    limits.threads = threads;
    Workspace w(ExecutionPlan::compile(model, limits));
    DecodeOptions greedy, beam, sampling, rules, attention;
    greedy.max_length = beam.max_length = sampling.max_length = rules.max_length = attention.max_length = 16;
    beam.beam_size = 4, beam.num_hypotheses = 3;
    sampling.sampling = true, sampling.sampling_topk = 5, sampling.sampling_topp = 0.9f, sampling.num_hypotheses = 3;
    // Every logits rule, and attention with the coverage penalty (its history is reserved
    // by the first decode that asks for it).
    rules.repetition_penalty = 1.3f, rules.no_repeat_ngram_size = 2, rules.disable_unk = true, rules.min_length = 3;
    rules.suppress_ids = {{7}, {7, 8}}, rules.end_ids = {2, 9};
    attention.beam_size = 4, attention.return_attention = true, attention.coverage_penalty = 0.2f;
    w.set_profiling(true);
    for (const DecodeOptions* o : {&greedy, &beam, &sampling, &rules, &attention}) {
      w.decode(refs, *o);  // warm-up: thread pool, lazily initialised statics
      g_allocations = 0;
      g_counting = true;
      w.decode(refs, *o);
      g_counting = false;
      INFO(threads << " thread(s), beam " << o->beam_size << (o->sampling ? ", sampling" : ""));
      CHECK(g_allocations.load() == 0);
      SentenceResult r;  // results are copied out afterwards (that allocates, by design)
      w.result(0, r);
      CHECK_FALSE(r.hypotheses.empty());
    }
  }
}

}  // namespace attend::runtime
