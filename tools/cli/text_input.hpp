// Reading input lines for the CLI, streaming by chunks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attend::cli {

// Lines from a file or standard input ('-'), in chunks, numbered from 1. Trailing
// "\r\n" or "\n" is removed; the last line's newline is optional; a UTF-8 byte-order
// mark at the start of the stream is dropped. Never holds more
// than one chunk (and one partial line). Read with read(2), so that it can tell whether
// more input is already waiting: a chunk ends early, with at least one line, when the
// rest has not arrived yet — a coprocess or a slow producer gets each answer as soon as
// its line is in, instead of after the chunk fills.
//
// With a cap on line length (cap_lines), a longer line is read only up to the cap: its
// first bytes are kept (at a character boundary), the rest is read and dropped as it
// arrives, so that a line of a gigabyte never needs a gigabyte; read() says which lines
// were cut, and print_warnings() counts them. A line of a sentence pair (a text, a tab,
// the second text) is capped text by text instead, so that a cut never drops the second.
class LineReader {
 public:
  // `what` names the stream in messages ("input", "target prefix file"). Throws
  // attend::Error naming it if it cannot be opened, is a directory, or (standard input)
  // is closed.
  LineReader(const std::string& path, const std::string& what);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Up to `max_lines` lines (all of them if `wait_for_all`, unless the input ends);
  // empty at the end of input. A read error is an attend::Error naming the stream,
  // never taken for the end of input.
  // `max_bytes` (0: no limit) ends the chunk early once its lines hold that many bytes
  // (at least one line is read).
  std::vector<std::string> read(std::size_t max_lines, bool wait_for_all = false, std::size_t max_bytes = 0);
  std::uint64_t lines_read() const { return lines_; }
  // Lines longer than `bytes` (0: no cap) are read only up to it; with `pairs`, the
  // text before a line's first tab and the text after it, each.
  void cap_lines(std::size_t bytes, bool pairs = false) { cap_ = bytes, pairs_ = pairs; }
  // The numbers (1-based) of the lines of the last read() that were cut at the cap.
  const std::vector<std::uint64_t>& cut_lines() const { return cut_lines_; }
  // One warning line on `to` if any line was cut, prefixed by `who`.
  void print_warnings(std::FILE* to, const char* who) const;
  const std::string& label() const { return label_; }  // "the input in.txt", "the input (standard input)"

 private:
  bool next_line(std::string& line);  // a complete line from the buffer
  bool skip_byte_order_mark();        // false: too few bytes yet to tell
  bool input_waiting() const;
  void fill();                        // one read(2) into the buffer (blocks)
  bool assemble(std::string& line);   // a line over the cap, put together as it arrives
  void keep_text(std::string_view part);  // the next bytes of the text being assembled

  int fd_ = -1;
  bool owned_ = false, regular_ = false, eof_ = false, mark_checked_ = false;
  std::string label_;
  std::string buffer_;
  std::size_t pos_ = 0;      // start of the unread part of buffer_
  std::size_t scanned_ = 0;  // buffer_[pos_, scanned_) holds no newline
  std::uint64_t lines_ = 0;
  std::size_t cap_ = 0;
  bool pairs_ = false;
  // The line being assembled (a line over the cap): what is kept of it, where its
  // current text starts there and how many of its bytes are kept, whether the rest of
  // that text is being dropped, whether its first tab has been passed, whether any text
  // was cut, and the line's length so far.
  bool assembling_ = false;
  std::string assembled_;
  std::size_t text_start_ = 0, text_bytes_ = 0;
  bool dropping_ = false, past_tab_ = false, cut_ = false;
  std::uint64_t line_bytes_ = 0;
  std::vector<std::uint64_t> cut_lines_;
  std::uint64_t cut_count_ = 0, first_cut_ = 0, first_cut_bytes_ = 0;
};

// Lines in a regular file (a fast newline count), or nullopt for pipes and terminals.
std::optional<std::uint64_t> count_lines(const std::string& path);

}  // namespace attend::cli
