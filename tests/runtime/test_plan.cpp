// The static execution plan: buffer placement by liveness, operands in bounds, the
// printed form, limit validation.
#include <catch2/catch.hpp>

#include "attend/error.hpp"
#include "plan/execution_plan.hpp"
#include "model/random_model.hpp"

using Catch::Matchers::Contains;

namespace attend::runtime {
namespace {

std::shared_ptr<const Model> small_model(NormPlacement norm, bool embedding_norm) {
  ModelConfig c = preset_config("tiny");
  c.norm_placement = norm;
  c.layernorm_embedding = embedding_norm;
  c.encoder_layers = 3, c.decoder_layers = 2;
  return Model::build(c, random_weights(c, 1), {});
}

void check_invariants(const ExecutionPlan& plan) {
  const auto& buffers = plan.buffers();
  std::size_t sum = 0;
  for (const PlanBuffer& b : buffers) {
    INFO("buffer " << b.name);
    CHECK(b.offset % 64 == 0);
    CHECK(b.offset + b.bytes <= plan.arena_bytes());
    CHECK(b.first_use <= b.last_use);
    sum += b.bytes;
  }
  CHECK(plan.buffers_bytes() == sum);
  CHECK(plan.arena_bytes() <= sum);
  // Buffers alive at the same step never share a byte.
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const PlanBuffer &a = buffers[i], &b = buffers[j];
      const bool alive_together = a.first_use <= b.last_use && b.first_use <= a.last_use;
      const bool overlap = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      INFO(a.name << " [" << a.first_use << ", " << a.last_use << "] and " << b.name << " [" << b.first_use << ", "
                  << b.last_use << "]");
      CHECK_FALSE((alive_together && overlap));
    }
  for (const PlanStep& s : plan.steps()) {
    INFO("step " << s.name);
    for (const Operand* o : {&s.in, &s.out, &s.residual})
      if (o->buffer >= 0) CHECK(o->col + o->cols <= buffers[o->buffer].cols);
    CHECK(s.flops > 0);
    CHECK(s.bytes > 0);
  }
}

}  // namespace

TEST_CASE("plans place buffers by liveness, never two live ones on the same bytes", "[runtime][plan]") {
  for (NormPlacement norm : {NormPlacement::pre, NormPlacement::post})
    for (bool embedding_norm : {false, true})
      for (std::int64_t beam : {1, 4}) {
        PlanLimits l;
        l.max_batch = 3, l.max_source_length = 20, l.max_target_length = 15, l.beam_size = beam, l.threads = 2;
        const auto plan = ExecutionPlan::compile(small_model(norm, embedding_norm), l);
        INFO(norm_placement_name(norm) << "-LN, embedding norm " << embedding_norm << ", beam " << beam);
        check_invariants(*plan);
        CHECK(plan->arena_bytes() < plan->buffers_bytes());  // encoder and decoder share memory
      }
}

TEST_CASE("a plan lists its steps in program order", "[runtime][plan]") {
  PlanLimits l;
  l.max_batch = 2, l.max_source_length = 10, l.max_target_length = 8;
  const auto plan = ExecutionPlan::compile(small_model(NormPlacement::pre, false), l);
  const auto& steps = plan->steps();
  // Encoder: embed, 7 steps per pre-LN layer, final norm, stacked cross K/V.
  const auto encoder = std::count_if(steps.begin(), steps.end(), [](const PlanStep& s) { return s.phase == Phase::encoder; });
  CHECK(encoder == 1 + 3 * 7 + 1 + 1);
  // Decoder: embed, 12 steps per pre-LN layer (3 norms, QKV, cache store, self-attention,
  // out-proj, cross Q, cross-attention, cross out-proj, fc1, fc2), the alignment layer's
  // attention probabilities (the last layer's; run only when asked), final norm, output
  // projection, log-softmax.
  CHECK(static_cast<std::int64_t>(steps.size()) - encoder == 1 + 2 * 12 + 1 + 1 + 1 + 1);
  const auto alignment = std::find_if(steps.begin(), steps.end(), [](const PlanStep& s) { return s.kind == StepKind::alignment; });
  REQUIRE(alignment != steps.end());
  CHECK(alignment->layer == 1);
  CHECK((alignment - 1)->kind == StepKind::cross_attention);
  CHECK(steps.front().kind == StepKind::embed_source);
  CHECK(steps.back().kind == StepKind::log_softmax);
  const std::string text = plan->describe();
  for (const PlanStep& s : steps) CHECK_THAT(text, Contains(s.name));
  CHECK_THAT(text, Contains("arena: ") && Contains("liveness sharing saves") && Contains("per decoder step"));
}

TEST_CASE("plan limits are validated against the model", "[runtime][plan][errors]") {
  auto model = small_model(NormPlacement::pre, false);  // max_positions 512
  PlanLimits l;
  l.max_source_length = 600;
  CHECK_THROWS_WITH(ExecutionPlan::compile(model, l), Contains("max_source_length = 600 exceeds the model's max_positions 512"));
  l = PlanLimits{};
  l.beam_size = 0;
  CHECK_THROWS_WITH(ExecutionPlan::compile(model, l), Contains("beam_size = 0"));
  l = PlanLimits{};
  l.threads = 0;
  CHECK_THROWS_WITH(ExecutionPlan::compile(model, l), Contains("threads = 0"));
  l = PlanLimits{};
  l.max_batch_tokens = 10;
  CHECK_THROWS_WITH(ExecutionPlan::compile(model, l), Contains("must hold one longest source"));
}

}  // namespace attend::runtime
