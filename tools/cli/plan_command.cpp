// attend plan: the static execution plan a model compiles to for given limits.
#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "flag_checks.hpp"
#include "option_flags.hpp"
#include "model_choice.hpp"

namespace attend::cli {
namespace {

struct PlanArgs {
  ModelChoice model;
  attend::TranslatorOptions limits;
};

}  // namespace

Command add_plan_command(CLI::App& parent) {
  auto args = std::make_shared<PlanArgs>();
  args->limits.max_source_length = 256;
  CLI::App* app = parent.add_subcommand("plan", "Show the static execution plan: steps, shapes, arena offsets, FLOPs, bytes");
  args->model.add_flags(*app, "");
  auto& l = args->limits;
  app->add_option("--max-batch", l.max_batch_size, "Sentences per batch")->check(batch_size_range())->capture_default_str();
  app->add_option("--max-src-len", l.max_source_length, "Tokens per source, at most the model's positions (default: 256, or the model's positions if fewer)")->check(at_least(1))->capture_default_str();
  app->add_option("--max-tgt-len", l.max_target_length, "Generated tokens")->check(in_range(1, ATTEND_MAX_TARGET_LENGTH))->capture_default_str();
  app->add_option("--max-batch-tokens", l.max_batch_tokens, "Padded source tokens per batch (0: batch × source length)")
      ->check(batch_tokens_range(0))->capture_default_str();
  app->add_option("--beam", l.max_beam_size, "Beam size")->check(beam_range())->capture_default_str();
  app->add_option("-t,--threads", l.threads, "Compute threads (0: one per core)")->check(threads_range())->capture_default_str();
  return {app, [args, app] {
            if (!args->model.directory.empty() && attend::is_encoder_model(args->model.directory)) {
              // Encoders: batches of --max-batch sequences, --max-batch-tokens packed tokens.
              attend::EncoderOptions eo;
              eo.isa = args->model.isa, eo.compute_type = args->model.compute_type, eo.threads = args->limits.threads;
              eo.max_batch_size = args->limits.max_batch_size;
              if (args->limits.max_batch_tokens > 0) eo.max_batch_tokens = args->limits.max_batch_tokens;
              std::printf("%s", attend::Encoder(args->model.directory, eo).plan_description().c_str());
              return 0;
            }
            const attend::Model model = args->model.load();
            if (app->count("--max-src-len") == 0)
              args->limits.max_source_length = std::min<std::int64_t>(args->limits.max_source_length, model.max_positions());
            std::optional<attend::Translator> translator;
            try {
              translator.emplace(model, args->limits);
            } catch (const attend::OptionError& e) {  // a flag out of the translator's range: named as plan's flag
              static constexpr std::pair<const char*, const char*> kFlags[] = {
                  {"max_batch_size", "--max-batch"}, {"max_source_length", "--max-src-len"},
                  {"max_target_length", "--max-tgt-len"}, {"max_beam_size", "--beam"}};
              std::string flag = flag_of(e.option());
              for (const auto& [name, plan_flag] : kFlags)
                if (e.option() == name) flag = plan_flag;
              throw UsageError(flag + " " + e.value() + ": " + e.requirement());
            } catch (const attend::Error& e) {  // limits the flags asked for that the model cannot take
              throw UsageError(e.what());
            }
            std::printf("%s", translator->plan_description().c_str());
            return 0;
          }};
}

}  // namespace attend::cli
