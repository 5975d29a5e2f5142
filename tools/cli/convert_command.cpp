// attend convert: a CTranslate2 model directory to attend's format.
#include <cstdio>

#include "attend/attend.hpp"
#include "commands.hpp"

namespace attend::cli {

Command add_convert_command(CLI::App& parent) {
  struct Args {
    std::string input, output;
  };
  auto args = std::make_shared<Args>();
  CLI::App* app = parent.add_subcommand("convert", "Write a CTranslate2 model (model.bin + vocabularies) in attend's format");
  app->footer("The converted model decodes exactly like the original (docs/model-format.md).\n");
  app->add_option("input", args->input, "CTranslate2 model directory")->required();
  app->add_option("output", args->output, "Output directory (created if needed)")->required();
  return {app, [args] {
            attend::convert_model(args->input, args->output);
            const attend::ModelInfo info = attend::Model::load(args->output).info();  // proves the result loads
            std::printf("attend convert: %s → %s (%zu tensors, %.2f M parameters)\n", args->input.c_str(),
                        args->output.c_str(), info.tensors.size(), static_cast<double>(info.parameters) / 1e6);
            return 0;
          }};
}

}  // namespace attend::cli
