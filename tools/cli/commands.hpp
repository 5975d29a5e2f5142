// The attend CLI's subcommands. Each adds itself to the app with its flags and returns
// the function that runs it once the command line is parsed. Exit codes: 0 success,
// 1 failure (a bad model or input: the message says what and where), 2 bad usage.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace attend::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_translate_command(CLI::App& parent);
Command add_bench_command(CLI::App& parent);
Command add_plan_command(CLI::App& parent);
Command add_inspect_command(CLI::App& parent);
Command add_convert_command(CLI::App& parent);
// Encoder-only models (encoder_commands.cpp).
Command add_embed_command(CLI::App& parent);
Command add_classify_command(CLI::App& parent);
Command add_tokenize_command(CLI::App& parent);
// The HTTP server (serve_command.cpp).
Command add_serve_command(CLI::App& parent);

// A usage error found after parsing (e.g. flags that contradict each other): exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace attend::cli
