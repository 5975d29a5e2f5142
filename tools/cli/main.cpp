// attend: batch text inference, throughput benchmarking and model inspection.
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "attend/attend.hpp"
#include "commands.hpp"
#include "interrupts.hpp"
#include "option_flags.hpp"

int main(int argc, char** argv) {
  using namespace attend::cli;
  watch_interrupts();  // before any thread starts
  CLI::App app{"attend — encoder-decoder transformer inference on x86 CPUs"};
  app.set_version_flag("--version", std::string("attend ") + attend::version());
  app.require_subcommand(1);
  app.footer("Run `attend COMMAND --help` for a command's flags.\n");

  const std::vector<Command> commands = {add_translate_command(app), add_bench_command(app), add_plan_command(app),
                                         add_inspect_command(app), add_convert_command(app), add_embed_command(app),
                                         add_classify_command(app), add_tokenize_command(app),
                                         add_serve_command(app)};
  // An unknown command is an error even beside --help (CLI11 would print the help and exit 0).
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const Command& c : commands) known = known || c.app->get_name() == argv[1];
    if (!known) {
      std::fprintf(stderr, "attend: unknown command '%s'\nRun `attend --help` for the commands.\n", argv[1]);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version, or the error and a hint
    return code == 0 ? 0 : 2;
  }

  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    const std::string who = "attend " + c.app->get_name();
    try {
      return c.run();
    } catch (const UsageError& e) {
      std::fprintf(stderr, "%s: %s\nRun with --help for more information.\n", who.c_str(), e.what());
      return 2;
    } catch (const attend::OptionError& e) {  // a setting the model or the library refuses: a usage error too
      std::fprintf(stderr, "%s: %s\nRun with --help for more information.\n", who.c_str(), usage_message(e).c_str());
      return 2;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "%s: error: out of memory (a model or limits too large for this machine)\n", who.c_str());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: error: %s\n", who.c_str(), e.what());
      return 1;
    }
  }
  return 2;  // unreachable: require_subcommand(1)
}
