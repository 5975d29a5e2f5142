// Compute types (runtime/model/compute_type.hpp): which one a request resolves to, that
// each packs the GEMM weights and holds the embedding tables as it says, and how close int8 and bfloat16 come to
// float32 on random Transformer-base: the logits of the same forced steps.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <numeric>
#include <tuple>

#include "attend/ops/bf16.hpp"
#include "decoding/workspace.hpp"
#include "formats/ct2_model.hpp"
#include "formats/model_io.hpp"
#include "model/compute_type.hpp"
#include "model/random_model.hpp"
#include "plan/execution_plan.hpp"

namespace attend::runtime {
namespace {

using ops::Isa;
using ops::WeightType;

TEST_CASE("compute types: names, aliases, the stored type and the CPU decide", "[runtime][compute-type]") {
  // CPUs described to the chooser (a pure function): none needs to be this one.
  const CpuGemmSpeed best{Isa::avx512_bf16, true, "vdpbf16ps runs 180 GFLOP/s per core against the fp32 FMA's 180"};
  const CpuGemmSpeed slow_bf16{Isa::avx512_bf16, false, "vdpbf16ps runs 87 GFLOP/s per core against the fp32 FMA's 180"};
  const CpuGemmSpeed vnni{Isa::avx512_vnni, false, "avx512_vnni has no AVX512_BF16 (bf16 is widened to fp32)"};
  const CpuGemmSpeed avx2{Isa::avx2, false, "avx2 has no AVX512_BF16 (bf16 is widened to fp32)"};
  const CpuGemmSpeed sse2{Isa::sse2, false, "sse2 has no AVX512_BF16 (bf16 is widened to fp32)"};
  CHECK(resolve_compute_type("float32", DType::i8, best).gemm_weights == WeightType::f32);
  CHECK(resolve_compute_type("int8", DType::f32, best).gemm_weights == WeightType::s8);
  CHECK(resolve_compute_type("int8_float32", DType::f32, best).name == "int8");
  CHECK(resolve_compute_type("bfloat16", DType::f32, best).gemm_weights == WeightType::bf16);
  const ComputeType mixed = resolve_compute_type("int8_bfloat16", DType::f32, best);
  CHECK(mixed.name == "int8");
  CHECK_THAT(mixed.reason, Catch::Contains("int8_bfloat16"));

  // default: what the model stores, as far as it is faster than float32 here.
  CHECK(resolve_compute_type("default", DType::f32, best).name == "float32");
  CHECK(resolve_compute_type("default", DType::i8, best).name == "int8");
  CHECK(resolve_compute_type("default", DType::i8, sse2).name == "int8");  // still int8 (said to be slow: name_kernel)
  CHECK(resolve_compute_type("default", DType::bf16, best).name == "bfloat16");
  for (const CpuGemmSpeed& cpu : {slow_bf16, vnni, avx2}) {
    const ComputeType bf16_slower = resolve_compute_type("default", DType::bf16, cpu);
    CHECK(bf16_slower.name == "float32");
    CHECK_THAT(bf16_slower.reason, Catch::Contains(cpu.bf16_evidence) && Catch::Contains("float32 is faster"));
  }
  CHECK(resolve_compute_type("default", DType::f16, best).name == "float32");

  // auto: the fastest here.
  CHECK(resolve_compute_type("auto", DType::f32, best).name == "int8");
  CHECK(resolve_compute_type("auto", DType::f32, avx2).name == "int8");
  CHECK(resolve_compute_type("auto", DType::f32, sse2).name == "float32");

  // bfloat16 asked for where it is slower: it runs, and says so.
  const ComputeType asked_slow = resolve_compute_type("bfloat16", DType::f32, slow_bf16);
  CHECK(asked_slow.name == "bfloat16");
  CHECK_THAT(asked_slow.reason, Catch::Contains("slower than float32") && Catch::Contains("87 GFLOP/s"));
  CHECK_THAT(resolve_compute_type("bfloat16", DType::f32, avx2).reason, Catch::Contains("slower than float32"));
  CHECK(resolve_compute_type("bfloat16", DType::f32, best).reason == "asked for");

  // The kernel that runs is named, on this CPU's ISAs.
  for (Isa isa : ops::available_isas()) {
    ComputeType c = resolve_compute_type("int8", DType::f32, best);
    name_kernel(c, isa);
    CHECK_THAT(c.reason, Catch::Contains(ops::gemm_kernel_name(isa, WeightType::s8)));
    if (isa == Isa::sse2) CHECK_THAT(c.reason, Catch::Contains("scalar"));
  }
  // The measured rates: both positive where the CPU has AVX512_BF16, and the verdict follows them.
  const CpuGemmSpeed here = measure_cpu_gemm_speed(ops::available_isas().front());
  INFO(here.bf16_evidence);
  if (here.isa >= Isa::avx512_bf16) {  // (avx512_amx includes it)
    const ops::DotRates r = ops::measured_dot_rates();
    CHECK(r.f32_fma_gflops > 0);
    CHECK(r.bf16_dot_gflops > 0);
    CHECK(here.bf16_faster == (r.bf16_dot_gflops >= 0.75 * r.f32_fma_gflops));
  } else {
    CHECK_FALSE(here.bf16_faster);
  }

  // The attention caches: bf16 beside int8 and bfloat16 GEMMs, f32 beside float32; asked for.
  CHECK(resolve_compute_type("float32", DType::f32, best).kv_cache == ops::KvType::f32);
  CHECK(resolve_compute_type("int8", DType::f32, best).kv_cache == ops::KvType::bf16);
  CHECK(resolve_compute_type("bfloat16", DType::f32, best).kv_cache == ops::KvType::bf16);
  CHECK(resolve_compute_type("default", DType::bf16, vnni).kv_cache == ops::KvType::f32);  // runs float32
  ComputeType asked = resolve_compute_type("int8", DType::f32, best);
  resolve_kv_cache_type("float32", asked);
  CHECK(asked.kv_cache == ops::KvType::f32);
  CHECK_THAT(asked.reason, Catch::Contains("attention caches float32 as asked"));
  resolve_kv_cache_type("bfloat16", asked);
  CHECK(asked.kv_cache == ops::KvType::bf16);
  resolve_kv_cache_type("default", asked);
  CHECK(asked.kv_cache == ops::KvType::bf16);
  for (const char* bad : {"int8", "float16", "bf16", "Float32"})
    CHECK_THROWS_WITH(resolve_kv_cache_type(bad, asked), Catch::Contains(bad) && Catch::Contains("default, float32, bfloat16"));

  // Types CPUs do not compute in, and typos, are refused with the accepted names.
  for (const char* bad : {"float16", "int8_float16", "int16", "int4", "Int8", "fp32"})
    CHECK_THROWS_WITH(resolve_compute_type(bad, DType::f32, best),
                      Catch::Contains(bad) && Catch::Contains("float32, int8 (int8_float32), bfloat16"));
}

TEST_CASE("compute types: the model packs every GEMM weight in the type chosen", "[runtime][compute-type]") {
  const ModelConfig c = preset_config("tiny");
  auto weights = random_weights(c, 3);
  for (const auto& [name, type] : {std::pair{"float32", WeightType::f32}, {"int8", WeightType::s8},
                                   {"bfloat16", WeightType::bf16}}) {
    LoadOptions o;
    o.compute_type = name;
    auto m = Model::build(c, weights, {}, o);
    INFO(name);
    CHECK(m->compute_type().name == name);
    CHECK(m->compute_type().gemm_weights == type);
    CHECK(m->encoder[0].qkv.weight.type() == type);
    CHECK(m->decoder[1].fc2.weight.type() == type);
    CHECK(m->cross_kv.weight.type() == type);
    CHECK(m->output.weight.type() == type);
    // The token embeddings in the same narrow type; the positions stay fp32.
    CHECK(m->compute_type().embedding_tables == type);
    CHECK(m->source_embedding.type() == type);
    CHECK(m->target_embedding_table().type() == type);
    CHECK(m->source_positions.type() == WeightType::f32);
  }
}

TEST_CASE("compute types: a table narrowed at load holds the fp32 values rounded as the GEMM weights are",
          "[runtime][compute-type]") {
  const ModelConfig c = preset_config("tiny");
  auto weights = random_weights(c, 5);
  const std::vector<float> w = to_f32(*weights->find("encoder.embed_tokens.weight"));
  const std::int64_t rows = c.src_vocab_size, cols = c.d_model;
  for (const char* name : {"int8", "bfloat16"}) {
    LoadOptions o;
    o.compute_type = name;
    const auto model = Model::build(c, weights, {}, o);
    const Table& t = model->source_embedding;
    INFO(name);
    const ops::EmbeddingTable v = t.view();
    REQUIRE(v.rows == rows);
    CHECK(t.owned_bytes() == static_cast<size_t>(rows * cols) * (v.type == WeightType::s8 ? 1 : 2) +
                                 (v.type == WeightType::s8 ? static_cast<size_t>(rows) * 4 : 0));
    // bf16: the weight rounded to nearest even; s8: CTranslate2's q, with the factor
    // 1 / (127 / max|w_row|), as pack_weight(…, s8) packs the GEMM weights.
    std::vector<std::int8_t> q(w.size());
    std::vector<float> scales(static_cast<size_t>(rows));
    ops::quantize_weight_s8({w.data(), rows, cols}, q.data(), scales.data());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k < cols; ++k) {
        const size_t at = static_cast<size_t>(r * cols + k);
        if (v.type == WeightType::bf16) {
          REQUIRE(static_cast<const std::uint16_t*>(v.data)[at] == ops::bf16_from_float(w[at]));
        } else {
          REQUIRE(static_cast<const std::int8_t*>(v.data)[at] == q[at]);
          REQUIRE(v.factors[r] == 1.0f / scales[static_cast<size_t>(r)]);
        }
      }
  }
  LoadOptions int8;
  int8.compute_type = "int8";
  CHECK_THROWS_WITH(Model::build(c, weights, {}, int8)->source_embedding.f32(), Catch::Contains("internal: a s8 table read as fp32"));

  // A tied output projection is packed from the table's fp32 values, not from the
  // narrowed table, even with the source releasing each tensor once read.
  ModelConfig tied = c;
  tied.tie_output_projection = true;
  auto tied_weights = random_weights(tied, 5);
  const std::vector<float> table = to_f32(*tied_weights->find("encoder.embed_tokens.weight"));
  tied_weights->set_release_after_read(true);
  const auto m = Model::build(tied, tied_weights, {}, int8);
  CHECK(m->source_embedding.type() == WeightType::s8);
  const ops::PackedWeight expected = ops::pack_weight(ops::ConstMatrix(table.data(), rows, cols), WeightType::s8, m->isa());
  std::vector<float> got(table.size()), want(table.size());
  ops::unpack_weight(m->output.weight.view(), {got.data(), rows, cols});
  ops::unpack_weight(expected.view(), {want.data(), rows, cols});
  CHECK(got == want);
}

TEST_CASE("compute types: CTranslate2's int8 model.bin packs its stored int8 weights as they are",
          "[runtime][compute-type]") {
  const std::string dir = std::string(ATTEND_SOURCE_DIR) + "/tests/data/models/ct2-aren-transliteration-int8";
  auto as_int8 = load_model(dir);  // default: the stored type
  CHECK(as_int8->compute_type().name == "int8");
  CHECK_THAT(as_int8->compute_type().reason, Catch::Contains("stores int8"));
  LoadOptions f32;
  f32.compute_type = "float32";
  auto as_f32 = load_model(dir, f32);
  REQUIRE(as_f32->compute_type().name == "float32");
  // The int8 packing holds q·(1/scale), the fp32 one q/scale: equal to a rounding.
  for (const auto& [a, b] : {std::pair{&as_int8->encoder[0].qkv, &as_f32->encoder[0].qkv},
                             {&as_int8->decoder[5].fc1, &as_f32->decoder[5].fc1}, {&as_int8->cross_kv, &as_f32->cross_kv},
                             {&as_int8->output, &as_f32->output}}) {
    REQUIRE(a->weight.type() == WeightType::s8);
    std::vector<float> wa(static_cast<size_t>(a->weight.n() * a->weight.k())), wb(wa.size());
    ops::unpack_weight(a->weight.view(), {wa.data(), a->weight.n(), a->weight.k()});
    ops::unpack_weight(b->weight.view(), {wb.data(), b->weight.n(), b->weight.k()});
    for (size_t i = 0; i < wa.size(); ++i) REQUIRE(wa[i] == Approx(wb[i]).epsilon(1e-6).margin(1e-9));
  }
  // The embedding tables too: CTranslate2 stores them int8 with scales, and the int8
  // model keeps the stored q, with factor = 1 / scale (what CTranslate2 multiplies by);
  // float32 holds them dequantized.
  const Ct2Model file = read_ct2_model(dir);
  for (const auto& [name, table, f32_table] :
       {std::tuple{"encoder.embed_tokens.weight", &as_int8->source_embedding, &as_f32->source_embedding},
        {"decoder.embed_tokens.weight", &as_int8->target_embedding, &as_f32->target_embedding}}) {
    INFO(name);
    const TensorRecord& stored = *file.tensors->find(name);
    REQUIRE(stored.dtype == DType::i8);
    const ops::EmbeddingTable v = table->view();
    REQUIRE(v.type == WeightType::s8);
    REQUIRE(f32_table->type() == WeightType::f32);
    CHECK(std::memcmp(v.data, stored.data, stored.bytes()) == 0);
    for (std::int64_t r = 0; r < v.rows; ++r) {
      CHECK(v.factors[r] == 1.0f / stored.scales[r]);
      for (std::int64_t k = 0; k < v.cols; ++k)
        REQUIRE(f32_table->f32()(r, k) == Approx(static_cast<const std::int8_t*>(v.data)[r * v.cols + k] * v.factors[r])
                                              .epsilon(1e-6)
                                              .margin(1e-9));
    }
  }
}

// Every row's logits at every step.
struct LogitsCapture : LogitsObserver {
  std::vector<std::vector<float>> rows;
  void on_step(std::int64_t, std::int64_t n, const std::int32_t*, const float* logits, std::int64_t vocab) override {
    for (std::int64_t r = 0; r < n; ++r) rows.emplace_back(logits + r * vocab, logits + (r + 1) * vocab);
  }
};

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return ab / std::sqrt(aa * bb);
}

TEST_CASE("compute types: random Transformer-base logits against float32 (cosine ≥ 0.999 bf16, ≥ 0.99 int8, ≥ 0.9999 "
          "bf16 caches alone)",
          "[runtime][compute-type]") {
  const ModelConfig c = preset_config("base");
  auto weights = random_weights(c, 1);
  const std::int64_t kSentences = 4, kSourceLength = 24, kSteps = 16;
  std::vector<std::vector<std::int32_t>> sources(kSentences);
  for (std::int64_t s = 0; s < kSentences; ++s)
    for (std::int64_t t = 0; t < kSourceLength; ++t) sources[s].push_back(static_cast<std::int32_t>(4 + (s * 977 + t * 131) % 31000));
  PlanLimits limits;
  limits.max_batch = kSentences, limits.max_source_length = kSourceLength, limits.max_target_length = kSteps + 1;
  limits.threads = 2;
  DecodeOptions o;
  o.max_length = kSteps;
  o.min_length = kSteps;  // every sentence runs every step

  auto run = [&](const std::string& type, const std::string& kv, const std::vector<std::vector<std::int32_t>>& prefixes,
                 LogitsCapture* capture) {
    LoadOptions lo;
    lo.compute_type = type;
    lo.kv_cache_type = kv;
    Workspace w(ExecutionPlan::compile(Model::build(c, weights, {}, lo), limits));
    std::vector<SourceRef> refs;
    for (std::int64_t s = 0; s < kSentences; ++s)
      refs.push_back({sources[s], prefixes.empty() ? std::span<const std::int32_t>() : prefixes[s], static_cast<std::uint64_t>(s)});
    w.decode(refs, o, capture);
    std::vector<std::vector<std::int32_t>> tokens;
    for (std::int64_t s = 0; s < kSentences; ++s) {
      SentenceResult r;
      w.result(s, r);
      tokens.push_back(r.hypotheses[0].tokens);
    }
    return tokens;
  };
  LogitsCapture reference;
  const auto fp32_tokens = run("float32", "default", {}, &reference);
  // Each compute type with its default attention caches (bf16), then each cache type alone.
  struct Setting {
    std::string type, kv;
    double bound;
  };
  for (const auto& [type, kv, bound] : {Setting{"bfloat16", "default", 0.999}, Setting{"int8", "default", 0.99},
                                        Setting{"float32", "bfloat16", 0.9999}, Setting{"int8", "float32", 0.99}}) {
    // Forced along float32's tokens, so every step sees the same history.
    LogitsCapture forced;
    run(type, kv, fp32_tokens, &forced);
    REQUIRE(forced.rows.size() == reference.rows.size());
    double worst = 1, sum = 0;
    for (size_t i = 0; i < forced.rows.size(); ++i) {
      const double cs = cosine(forced.rows[i], reference.rows[i]);
      worst = std::min(worst, cs), sum += cs;
    }
    // Free decoding: how many tokens agree with float32's, reported.
    const auto free_tokens = run(type, kv, {}, nullptr);
    std::int64_t same = 0, total = 0;
    for (std::int64_t s = 0; s < kSentences; ++s)
      for (size_t t = 0; t < fp32_tokens[s].size(); ++t, ++total) same += t < free_tokens[s].size() && free_tokens[s][t] == fp32_tokens[s][t];
    WARN(type << " with " << kv << " attention caches: logits cosine vs float32 min " << worst << ", mean " << sum / forced.rows.size() << "; greedy tokens equal "
              << same << "/" << total);
    CHECK(worst >= bound);
  }
}

}  // namespace
}  // namespace attend::runtime
