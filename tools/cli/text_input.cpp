#include "text_input.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <fstream>
#include <utility>

#include "attend/error.hpp"

namespace attend::cli {
LineReader::LineReader(const std::string& path, const std::string& what) {
  label_ = "the " + what + " " + (path == "-" ? std::string("(standard input)") : path);
  if (path == "-") {
    fd_ = 0;
    if (::fcntl(fd_, F_GETFL) < 0) throw attend::Error("cannot read " + label_ + ": standard input is closed");
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw attend::Error("cannot open " + label_ + ": " + std::strerror(errno));
    owned_ = true;
  }
  struct stat st {};
  if (::fstat(fd_, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      if (owned_) ::close(fd_);
      throw attend::Error("cannot read " + label_ + ": " + std::strerror(EISDIR));
    }
    regular_ = S_ISREG(st.st_mode);
  }
}

LineReader::~LineReader() {
  if (owned_) ::close(fd_);
}

// A UTF-8 byte-order mark opens some files (Windows editors write one): it is not text.
// Looked for once, when the stream's first three bytes (or its first line) are in, so a
// producer that sends one byte at a time loses it too.
bool LineReader::skip_byte_order_mark() {
  static constexpr std::string_view kMark = "\xEF\xBB\xBF";
  const std::string_view head = std::string_view(buffer_).substr(pos_, kMark.size());
  if (head.size() < kMark.size() && !eof_ && head.find('\n') == std::string_view::npos) return false;
  if (head == kMark) pos_ += kMark.size();
  mark_checked_ = true;
  return true;
}

bool LineReader::next_line(std::string& line) {
  if (!mark_checked_ && !skip_byte_order_mark()) return false;
  if (assembling_) return assemble(line);  // the rest of a line over the cap, as it arrives
  const std::size_t end = buffer_.find('\n', std::max(pos_, scanned_));
  const std::size_t length = (end == std::string::npos ? buffer_.size() : end) - pos_;
  if (cap_ > 0 && length > cap_) {
    assembling_ = true;
    assembled_.clear();
    text_start_ = text_bytes_ = line_bytes_ = 0;
    dropping_ = past_tab_ = cut_ = false;
    return assemble(line);
  }
  if (end == std::string::npos) {
    scanned_ = buffer_.size();
    if (!eof_ || pos_ == buffer_.size()) return false;
    line.assign(buffer_, pos_);  // the last line, without its newline
    pos_ = buffer_.size();
  } else {
    line.assign(buffer_, pos_, end - pos_);
    pos_ = end + 1;
  }
  scanned_ = pos_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

// Takes the line at pos_ as far as it has arrived: each text (the line, or a pair's two
// texts) keeps its first cap_ bytes and drops the rest. True once the line is complete
// (its newline, or the input's end), in `line`.
bool LineReader::assemble(std::string& line) {
  for (;;) {
    const std::size_t stop = pairs_ && !past_tab_ ? buffer_.find_first_of("\t\n", pos_) : buffer_.find('\n', pos_);
    const std::size_t end = stop == std::string::npos ? buffer_.size() : stop;
    keep_text(std::string_view(buffer_).substr(pos_, end - pos_));
    pos_ = scanned_ = end;
    if (stop == std::string::npos) {
      if (!eof_) return false;
      break;
    }
    pos_ = scanned_ = end + 1;
    if (buffer_[stop] == '\n') break;
    assembled_ += '\t';  // a pair's second text starts: a cap of its own
    ++line_bytes_;
    past_tab_ = true, dropping_ = false;
    text_start_ = assembled_.size(), text_bytes_ = 0;
  }
  if (!dropping_ && !assembled_.empty() && assembled_.back() == '\r') assembled_.pop_back();
  line = std::move(assembled_);
  assembled_.clear();
  assembling_ = false;
  if (cut_) {
    cut_lines_.push_back(lines_ + 1);
    if (cut_count_++ == 0) first_cut_ = lines_ + 1, first_cut_bytes_ = line_bytes_;
  }
  return true;
}

// Keeps what fits of `part` in the current text's cap; where the cap falls inside a
// character, the text ends before that character (as a cut line always has).
void LineReader::keep_text(std::string_view part) {
  line_bytes_ += part.size();
  if (dropping_) return;
  const std::size_t room = cap_ - text_bytes_;
  if (part.size() <= room) {
    assembled_.append(part);
    text_bytes_ += part.size();
    return;
  }
  assembled_.append(part.substr(0, room));
  auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  if (continuation(part[room])) {
    while (assembled_.size() > text_start_ && continuation(assembled_.back())) assembled_.pop_back();
    if (assembled_.size() > text_start_) assembled_.pop_back();  // the character's first byte
  }
  dropping_ = cut_ = true;
}

bool LineReader::input_waiting() const {
  if (regular_) return true;
  pollfd p{fd_, POLLIN, 0};
  int n;
  while ((n = ::poll(&p, 1, 0)) < 0 && errno == EINTR) {
  }
  return n != 0;  // ready, at its end, or in error: read() will say which
}

void LineReader::fill() {
  if (pos_ > 0) {
    buffer_.erase(0, pos_);
    scanned_ -= std::min(scanned_, pos_);
    pos_ = 0;
  }
  constexpr std::size_t kBlock = 1 << 16;
  const std::size_t have = buffer_.size();
  buffer_.resize(have + kBlock);
  ssize_t n;
  while ((n = ::read(fd_, buffer_.data() + have, kBlock)) < 0 && errno == EINTR) {
  }
  if (n < 0) {
    const int error = errno;
    buffer_.resize(have);
    throw attend::Error("cannot read " + label_ + ": " + std::strerror(error));
  }
  buffer_.resize(have + static_cast<std::size_t>(n));
  eof_ = n == 0;
}

std::vector<std::string> LineReader::read(std::size_t max_lines, bool wait_for_all, std::size_t max_bytes) {
  std::vector<std::string> out;
  std::string line;
  std::size_t bytes = 0;
  cut_lines_.clear();
  while (out.size() < max_lines && (max_bytes == 0 || bytes < max_bytes)) {
    if (next_line(line)) {
      bytes += line.size();
      out.push_back(std::move(line));
      ++lines_;
      continue;
    }
    if (eof_) break;
    if (!out.empty() && !wait_for_all && !input_waiting()) break;  // answer what has arrived
    fill();
  }
  return out;
}

void LineReader::print_warnings(std::FILE* to, const char* who) const {
  if (cut_count_ == 0) return;
  std::fprintf(to,
               "%s: warning: %llu line(s) %slonger than %zu bytes were read only up to that, the rest dropped before "
               "tokenizing (first: line %llu, %llu bytes)\n",
               who, static_cast<unsigned long long>(cut_count_), pairs_ ? "with a text " : "", cap_, static_cast<unsigned long long>(first_cut_),
               static_cast<unsigned long long>(first_cut_bytes_));
}

std::optional<std::uint64_t> count_lines(const std::string& path) {
  struct stat st {};
  if (path.empty() || path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::uint64_t lines = 0;
  char last = '\n';
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    const std::streamsize got = in.gcount();
    for (std::streamsize i = 0; i < got; ++i) lines += buf[i] == '\n';
    last = buf[got - 1];
  }
  return lines + (last != '\n' ? 1 : 0);
}

}  // namespace attend::cli
