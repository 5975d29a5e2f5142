// A real signal to a real `attend` process: Ctrl-C (SIGINT), SIGTERM or SIGHUP while
// translate or embed writes -o FILE. The process dies of the signal (a shell reports
// 128 + its number), FILE keeps its old contents, the lines written before the signal
// are in FILE.partial — exactly the lines a run over the same input writes — and no
// hidden temporary file is left beside it.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli_runner.hpp"

namespace attend::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

const std::string kModel = std::string(ATTEND_CLI_FIXTURE) + "/model";
const std::string kEncoder = std::string(ATTEND_TEST_DATA) + "/encoders/bert";

// A running attend whose standard input the test writes.
class Running {
 public:
  Running(const std::vector<std::string>& args, const std::string& err_path) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(fds[0], 0);
      ::close(fds[0]), ::close(fds[1]);
      const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(err, 2);
      std::vector<std::string> all = {attend_path()};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[0]);
    input_ = fds[1];
  }
  ~Running() {
    if (input_ >= 0) ::close(input_);
    if (pid_ > 0 && !reaped_) ::kill(pid_, SIGKILL), ::waitpid(pid_, nullptr, 0);
  }

  void write(const std::string& text) { REQUIRE(::write(input_, text.data(), text.size()) == static_cast<ssize_t>(text.size())); }
  void signal(int signal) { REQUIRE(::kill(pid_, signal) == 0); }

  // The wait status, or -1 if it has not ended within `seconds`.
  int wait(int seconds = 20) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    reaped_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int input_ = -1;
  bool reaped_ = false;
};

// The hidden temporary files OutputFile makes beside `file`.
std::vector<fs::path> temporaries_of(const fs::path& file) {
  std::string prefix(1, '.');  // (appended piecewise: GCC 12 misreads "." + std::string as an overlap)
  prefix.append(file.filename().string()).append(".attend-");
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(file.parent_path()))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  return out;
}

std::size_t lines_in(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// Waits until a temporary file beside `file` holds `lines` lines (the process has
// written them and flushed).
bool wait_for_lines(const fs::path& file, std::size_t lines, int seconds = 30) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const fs::path& t : temporaries_of(file))
      if (lines_in(read_file(t.string())) >= lines) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

fs::path fresh_directory(const std::string& name) {
  const fs::path dir = fs::path(scratch_directory()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const char* name_of(int signal) { return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "SIGHUP"; }

}  // namespace

TEST_CASE("interrupts: translate -o FILE killed by a signal keeps FILE, the lines so far in FILE.partial, no temporary",
          "[cli][interrupts]") {
  const std::string lines = "Hello world.\nThe quick brown fox.\nA small cat.\n";
  const CommandResult expected = run_attend({"translate", "-m", kModel, "-q"}, lines);
  REQUIRE(expected.status == 0);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    INFO(name_of(sig));
    const fs::path dir = fresh_directory(std::string("translate-") + name_of(sig));
    const fs::path out = dir / "out.txt";
    write_scratch_file(out.lexically_relative(scratch_directory()).string(), "the old contents\n");
    const std::string err = (dir / "stderr").string();
    Running attend({"translate", "-m", kModel, "-o", out.string(), "-q"}, err);
    attend.write(lines);  // translated as soon as they arrive; then it waits for more input
    REQUIRE(wait_for_lines(out, 3));
    attend.signal(sig);
    const int status = attend.wait();
    REQUIRE(status != -1);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);  // a shell reports 128 + sig
    CHECK(temporaries_of(out).empty());
    CHECK(read_file(out.string()) == "the old contents\n");
    CHECK(read_file(out.string() + ".partial") == expected.out);
    CHECK_THAT(read_file(err), Contains(std::string("interrupted by ") + name_of(sig)) && Contains("out.txt.partial"));
  }
}

TEST_CASE("interrupts: a signal before any line is written leaves no file at all", "[cli][interrupts]") {
  const fs::path dir = fresh_directory("translate-early");
  const fs::path out = dir / "out.txt";
  Running attend({"translate", "-m", kModel, "-o", out.string(), "-q"}, (dir / "stderr").string());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (temporaries_of(out).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(!temporaries_of(out).empty());
  attend.signal(SIGTERM);
  const int status = attend.wait();
  REQUIRE(status != -1);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM));
  CHECK(temporaries_of(out).empty());
  CHECK(!fs::exists(out));
  CHECK(!fs::exists(out.string() + ".partial"));
}

TEST_CASE("interrupts: embed -o FILE.jsonl keeps its rows so far, -o FILE.npy nothing (a cut .npy is no array)",
          "[cli][interrupts]") {
  const std::string texts = "a first text\nthe second one\n";
  const CommandResult expected = run_attend({"embed", "-m", kEncoder, "-q", "--output-format", "jsonl"}, texts);
  REQUIRE(expected.status == 0);
  for (const std::string name : {"out.jsonl", "out.npy"}) {
    INFO(name);
    const fs::path dir = fresh_directory("embed-" + name);
    const fs::path out = dir / name;
    Running attend({"embed", "-m", kEncoder, "-o", out.string(), "-q"}, (dir / "stderr").string());
    attend.write(texts);
    if (name == "out.jsonl") {
      REQUIRE(wait_for_lines(out, 2));
    } else {  // binary rows: wait for the header and two rows of 32 floats
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      auto size = [&] { return temporaries_of(out).empty() ? 0 : fs::file_size(temporaries_of(out)[0]); };
      while (size() < 128 + 2 * 32 * 4 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      REQUIRE(size() >= 128 + 2 * 32 * 4);
    }
    attend.signal(SIGINT);
    const int status = attend.wait();
    REQUIRE(status != -1);
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGINT));
    CHECK(temporaries_of(out).empty());
    CHECK(!fs::exists(out));
    if (name == "out.jsonl") CHECK(read_file(out.string() + ".partial") == expected.out);
    else CHECK(!fs::exists(out.string() + ".partial"));
  }
}

TEST_CASE("interrupts: attend serve takes SIGINT, SIGTERM and SIGHUP as a graceful shutdown and exits 0", "[cli][interrupts]") {
  // The server handles the signals itself (stop accepting, answer what was accepted):
  // the process must not die of them as the other commands do.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    INFO(name_of(sig));
    const fs::path dir = fresh_directory(std::string("serve-") + name_of(sig));
    const std::string err = (dir / "stderr").string();
    Running attend({"serve", "-m", kEncoder, "--port", "0", "--no-access-log"}, err);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (read_file(err).find("ready") == std::string::npos && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE_THAT(read_file(err), Contains("ready"));
    attend.signal(sig);
    const int status = attend.wait();
    REQUIRE(status != -1);
    INFO(read_file(err));
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CHECK_THAT(read_file(err), Contains("stopped"));
  }
}

}  // namespace attend::test
