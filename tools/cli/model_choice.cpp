#include "model_choice.hpp"

#include "commands.hpp"
#include "flag_checks.hpp"

namespace attend::cli {

void ModelChoice::add_flags(CLI::App& app, const std::string& default_preset) {
  default_preset_ = default_preset;
  auto* model = app.add_option("-m,--model", directory, "Model directory (attend's format or CTranslate2's)");
  std::string preset_help = "Built-in model with deterministic random weights: tiny, base (Transformer-base), big";
  if (!default_preset.empty()) preset_help += " (default: " + default_preset + ")";
  auto* preset_option = app.add_option("--preset", preset, preset_help)->check(CLI::IsMember({"tiny", "base", "big"}));
  model->excludes(preset_option);
  app.add_option("--seed", seed, "Seed of the preset's weights and of any random workload or sampling")
      ->check(any_uint64())
      ->capture_default_str();
  app.add_option("--isa", isa, "Kernels to use: avx512, avx2, sse2 (default: the best this CPU runs, or $ATTEND_ISA)")
      ->check(CLI::IsMember({"avx512_amx", "avx512_bf16", "avx512_vnni", "avx512", "avx2", "sse2"}));
  app.add_option("--compute-type", compute_type,
                 "Arithmetic of the matrix products, CTranslate2's names: default (the model's stored type), auto "
                 "(the fastest here), float32, int8 (int8_float32), bfloat16, int8_bfloat16")
      ->capture_default_str()
      ->check(CLI::IsMember({"default", "auto", "float32", "int8", "int8_float32", "bfloat16", "int8_bfloat16"}));
  app.add_option("--kv-cache-type", kv_cache_type,
                 "The decoder's attention caches: default (bfloat16 when the compute type is int8 or bfloat16, else "
                 "float32), float32 (as CTranslate2 keeps them), bfloat16")
      ->capture_default_str()
      ->check(CLI::IsMember({"default", "float32", "bfloat16"}));
  app.add_option("--decoding-rules", decoding_rules,
                 "Decoding semantics: auto (transformers' generate() for a Hugging Face directory, CTranslate2's for "
                 "the others), transformers, ctranslate2")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "transformers", "ctranslate2"}));
}

attend::Model ModelChoice::load() const {
  attend::LoadOptions options;
  options.isa = isa;
  options.compute_type = compute_type;
  options.kv_cache_type = kv_cache_type;
  options.decoding_rules = decoding_rules;
  if (!directory.empty()) return attend::Model::load(directory, options);
  const std::string name = preset.empty() ? default_preset_ : preset;
  if (name.empty()) throw UsageError("give a model: --model DIR or --preset tiny|base|big");
  return attend::Model::preset(name, seed, options);
}

std::string ModelChoice::describe() const {
  if (!directory.empty()) return directory;
  return "preset " + (preset.empty() ? default_preset_ : preset) + " (seed " + std::to_string(seed) + ")";
}

}  // namespace attend::cli
