#include "output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "attend/error.hpp"

namespace attend::cli {
namespace fs = std::filesystem;

namespace {

std::string failure(const std::string& action, const std::string& what, const std::string& path) {
  return "cannot " + action + " the " + what + " " + path + ": " + std::strerror(errno);
}

// The mode a new file gets from this process (0666 less the umask).
mode_t default_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat x {}, y {};
  return ::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

OutputFile::OutputFile(const std::string& path, std::string what) : path_(path), what_(std::move(what)) {
  if (path == "-") {
    stream_ = stdout;
    return;
  }
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    throw attend::Error(failure("write", what_, path));
  }
  if (exists && !S_ISREG(st.st_mode)) {  // a device or a pipe: nothing to destroy
    stream_ = std::fopen(path.c_str(), "w");
    if (stream_ == nullptr) throw attend::Error(failure("open", what_, path));
    return;
  }
  // Beside the real file (through a symlink), so that the rename stays on one file system.
  if (exists) path_ = fs::canonical(path).string();
  std::string hidden(1, '.');
  hidden.append(fs::path(path_).filename().string()).append(".attend-XXXXXX");
  std::string pattern = (fs::path(path_).parent_path() / hidden).string();
  const auto held = OnInterrupt::hold();  // a signal waits until the new file is registered for cleanup
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) throw attend::Error(failure("create a temporary file beside", what_, path));
  ::fchmod(fd, exists ? (st.st_mode & 07777) : default_mode());
  stream_ = ::fdopen(fd, "w");
  if (stream_ == nullptr) {
    ::close(fd);
    ::unlink(pattern.c_str());
    throw attend::Error(failure("open", what_, pattern));
  }
  temporary_ = pattern;
  on_interrupt_.emplace([this] { end_on_interrupt(); });
}

// The main thread may be writing: the stream's lock waits for the line it is writing
// and is never released, so nothing is written after the flush; the process ends.
void OutputFile::end_on_interrupt() {
  if (done_ || temporary_.empty()) return;
  ::flockfile(stream_);
  const bool flushed = std::fflush(stream_) == 0;
  struct stat st {};
  const bool written = flushed && ::fstat(::fileno(stream_), &st) == 0 && st.st_size > 0;
  const std::string partial = path_ + ".partial";
  if (keep_partial_ && written && ::rename(temporary_.c_str(), partial.c_str()) == 0) {
    std::fprintf(stderr, "attend: what was written before the interrupt is in %s (%s is unchanged)\n", partial.c_str(),
                 path_.c_str());
    return;
  }
  ::unlink(temporary_.c_str());
}

std::string OutputFile::label() const {
  return "the " + what_ + " " + (stream_ == stdout ? std::string("(standard output)") : path_);
}

OutputFile::~OutputFile() {
  const auto held = OnInterrupt::hold();
  on_interrupt_.reset();
  if (!done_ && !temporary_.empty()) {
    std::fclose(stream_);
    ::unlink(temporary_.c_str());
  } else if (!done_ && stream_ != stdout && stream_ != nullptr) {
    std::fclose(stream_);
  }
}

void OutputFile::commit() {
  const auto held = OnInterrupt::hold();  // an interrupt now finds the file in place, or the temporary one
  done_ = true;
  if (stream_ == stdout) {
    if (std::fflush(stdout) != 0) throw attend::Error(failure("write", what_, "(standard output)"));
    return;
  }
  const bool flushed = std::fflush(stream_) == 0 && !std::ferror(stream_);
  const int flush_error = errno;
  const bool closed = std::fclose(stream_) == 0;
  if (!flushed || !closed) {
    if (!flushed) errno = flush_error;
    const std::string message = failure("write", what_, path_);
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
    throw attend::Error(message + (temporary_.empty() ? "" : " (the file is unchanged)"));
  }
  if (!temporary_.empty() && ::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const std::string message = failure("replace", what_, path_);
    ::unlink(temporary_.c_str());
    throw attend::Error(message);
  }
}

void OutputFile::abandon(std::uint64_t lines_written, const char* who) {
  const auto held = OnInterrupt::hold();
  if (done_ || temporary_.empty()) return;
  done_ = true;
  std::fclose(stream_);
  const std::string partial = path_ + ".partial";
  if (lines_written > 0 && ::rename(temporary_.c_str(), partial.c_str()) == 0) {
    std::fprintf(stderr, "%s: the %llu line(s) written before the error are in %s (%s is unchanged)\n", who,
                 static_cast<unsigned long long>(lines_written), partial.c_str(), path_.c_str());
    return;
  }
  ::unlink(temporary_.c_str());
}

}  // namespace attend::cli
