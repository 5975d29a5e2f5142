// attend inspect: what a model directory holds and what loading it checked.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "model_choice.hpp"

namespace attend::cli {
namespace {

struct InspectArgs {
  ModelChoice model;
  bool json = false;
};

void print_text(const attend::ModelInfo& i) {
  std::printf("model:       %s\n", i.directory.c_str());
  std::printf("format:      %s\n", i.format.c_str());
  if (i.file_bytes > 0) std::printf("file size:   %.2f MiB\n", static_cast<double>(i.file_bytes) / (1 << 20));
  std::printf("parameters:  %lld (%.2f M; %.1f MiB as fp32)\n", static_cast<long long>(i.parameters),
              static_cast<double>(i.parameters) / 1e6, static_cast<double>(i.parameters) * 4 / (1 << 20));
  std::printf("kernels:     %s\n", i.isa.c_str());
  std::printf("compute:     %s — %s\n", i.compute_type.c_str(), i.compute_type_reason.c_str());
  if (!i.kv_cache_type.empty()) std::printf("kv caches:   %s\n", i.kv_cache_type.c_str());
  std::printf("decoding:    %s\n", i.decoding_rules.c_str());
  for (const auto& f : i.generation_defaults) std::printf("  generate() default: %s\n", f.c_str());
  std::printf("text:        %s\n", i.text_tokenizer.empty() ? "(no SentencePiece model)" : i.text_tokenizer.c_str());
  std::printf("tokens:      %s\n", i.vocabulary.empty() ? "(no vocabulary)" : i.vocabulary.c_str());
  std::printf("\nconfig:\n%s\n", nlohmann::json::parse(i.config_json).dump(2).c_str());
  std::printf("\ntensors (%zu):\n", i.tensors.size());
  for (const auto& t : i.tensors)
    std::printf("  %-55s %-6s %-16s %12lld\n", t.name.c_str(), t.dtype.c_str(), t.shape.c_str(), static_cast<long long>(t.elements));
  std::printf("\nchecked when loading:\n");
  for (const auto& c : i.checks) std::printf("  - %s\n", c.c_str());
}

}  // namespace

Command add_inspect_command(CLI::App& parent) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* app = parent.add_subcommand("inspect", "Show a model's config, tensors, size and what the loader checked");
  args->model.add_flags(*app, "");
  app->add_flag("--json", args->json, "Print as one JSON object");
  return {app, [args] {
            const bool encoder = !args->model.directory.empty() && attend::is_encoder_model(args->model.directory);
            attend::EncoderOptions eo;
            eo.isa = args->model.isa, eo.compute_type = args->model.compute_type;
            const attend::ModelInfo i = encoder ? attend::Encoder(args->model.directory, eo).info() : args->model.load().info();
            if (!args->json) {
              print_text(i);
              return 0;
            }
            nlohmann::ordered_json j;
            j["model"] = i.directory, j["format"] = i.format, j["file_bytes"] = i.file_bytes;
            j["parameters"] = i.parameters, j["isa"] = i.isa;
            j["compute_type"] = i.compute_type, j["compute_type_reason"] = i.compute_type_reason;
            j["kv_cache_type"] = i.kv_cache_type;
            j["decoding_rules"] = i.decoding_rules;
            j["generation_defaults"] = i.generation_defaults;
            j["text_tokenizer"] = i.text_tokenizer, j["vocabulary"] = i.vocabulary;
            j["config"] = nlohmann::json::parse(i.config_json);
            j["tensors"] = nlohmann::ordered_json::array();
            for (const auto& t : i.tensors)
              j["tensors"].push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"elements", t.elements}});
            j["checks"] = i.checks;
            std::cout << j.dump(2) << "\n";
            return 0;
          }};
}

}  // namespace attend::cli
