// Running the attend CLI (or any command) from a test: stdin from a string, stdout and
// stderr captured, the exit status returned. Commands go through /bin/sh, so pipes
// (`| head`) can be tested too.
#pragma once

#include <string>
#include <vector>

namespace attend::test {

struct CommandResult {
  int status = -1;  // exit code; 128 + N if killed by signal N
  std::string out, err;
  // The command's peak resident memory: the largest of the shell and the processes it
  // waited for (wait4) — this command's alone, not of anything the test ran before.
  double peak_rss_mib = 0;
};

// A private scratch directory, removed at exit.
const std::string& scratch_directory();
std::string write_scratch_file(const std::string& name, const std::string& contents);
std::string read_file(const std::string& path);

// `sh -c command`, with `input` on stdin.
CommandResult run_shell(const std::string& command, const std::string& input = "");
// The attend CLI with these arguments (each quoted for the shell).
CommandResult run_attend(const std::vector<std::string>& args, const std::string& input = "");
std::string attend_path();
std::string quote(const std::string& s);

std::vector<std::string> split_lines(const std::string& text);  // "a\nb\n" → {"a", "b"}

}  // namespace attend::test
