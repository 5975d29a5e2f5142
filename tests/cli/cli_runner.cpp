#include "cli_runner.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attend::test {
namespace fs = std::filesystem;

namespace {

// Made on first use, removed when the program ends.
struct ScratchDirectory {
  std::string path;
  ScratchDirectory() {
    std::string pattern = (fs::temp_directory_path() / "attend-cli-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

const std::string& scratch_directory() {
  static const ScratchDirectory dir;
  return dir.path;
}

std::string write_scratch_file(const std::string& name, const std::string& contents) {
  const std::string path = (fs::path(scratch_directory()) / name).string();
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CommandResult run_shell(const std::string& command, const std::string& input) {
  static int counter = 0;
  const std::string base = scratch_directory() + "/run" + std::to_string(++counter);
  std::ofstream(base + ".in", std::ios::binary) << input;
  const std::string full = "(" + command + ") < " + quote(base + ".in") + " > " + quote(base + ".out") + " 2> " +
                           quote(base + ".err");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int raw = 0;
  rusage usage{};
  while (::wait4(pid, &raw, 0, &usage) < 0)
    if (errno != EINTR) throw std::runtime_error("wait4 failed");
  CommandResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024;  // KiB
  r.out = read_file(base + ".out");
  r.err = read_file(base + ".err");
  return r;
}

// $ATTEND_CLI_UNDER_TEST runs the tests against another build's binary (e.g. main's, to
// show that a new test fails there).
std::string attend_path() {
  const char* other = std::getenv("ATTEND_CLI_UNDER_TEST");
  return other != nullptr && *other != '\0' ? other : ATTEND_CLI;
}

CommandResult run_attend(const std::vector<std::string>& args, const std::string& input) {
  std::string command = quote(attend_path());
  for (const auto& a : args) command.append(" ").append(quote(a));
  return run_shell(command, input);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace attend::test
