// attend convert: a CTranslate2 model directory to attend's format.
#include <cstdio>

#include "attend/attend.hpp"
#include "commands.hpp"

namespace attend::cli {

Command add_convert_command(CLI::App& parent) {
  struct Args {
    std::string input, output, compute_type = "default";
  };
  auto args = std::make_shared<Args>();
  CLI::App* app = parent.add_subcommand(
      "convert", "Write a CTranslate2 model (model.bin + vocabularies) in attend's format, or retype an attend model");
  app->footer("With the default compute type the converted model decodes exactly like the original; int8 and bfloat16\n"
              "store the GEMM weights and embedding tables quantized, so loading needs no quantization\n"
              "(docs/model-format.md).\n");
  app->add_option("input", args->input, "CTranslate2 model directory (or an attend model, with --compute-type)")->required();
  app->add_option("output", args->output, "Output directory (created if needed)")->required();
  app->add_option("--compute-type", args->compute_type,
                  "Type of the GEMM weights and embedding tables written: default (as stored), int8, bfloat16, float32")
      ->capture_default_str()
      ->check(CLI::IsMember({"default", "int8", "int8_float32", "bfloat16", "float32"}));
  return {app, [args] {
            attend::convert_model(args->input, args->output, args->compute_type);
            const attend::ModelInfo info = attend::Model::load(args->output).info();  // proves the result loads
            std::printf("attend convert: %s → %s (%zu tensors, %.2f M parameters, computes in %s by default)\n",
                        args->input.c_str(), args->output.c_str(), info.tensors.size(),
                        static_cast<double>(info.parameters) / 1e6, info.compute_type.c_str());
            return 0;
          }};
}

}  // namespace attend::cli
