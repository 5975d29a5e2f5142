// Output in input order from results that arrive in any order (batches run sorted by
// length): each line is written as soon as every line before it is, then flushed, so
// a reader (`| head`) sees the first lines long before the input is done.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>

namespace attend::cli {

class OrderedOutput {
 public:
  // `label` names the stream in errors ("the output out.txt"): a full disk says where.
  OrderedOutput(std::FILE* out, std::string label) : out_(out), label_(std::move(label)) {}

  // Output for line `index` (0-based, below every index put so far + the pending
  // window); `text` holds its whole output, newlines included.
  void put(std::uint64_t index, std::string text);
  std::uint64_t written() const { return next_; }
  std::size_t pending() const { return window_.size(); }

 private:
  std::FILE* out_;
  std::string label_;
  std::uint64_t next_ = 0;                       // first line not yet written
  std::deque<std::optional<std::string>> window_; // lines next_, next_ + 1, …
};

}  // namespace attend::cli
