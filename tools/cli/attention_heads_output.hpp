// --attention-all PATH --attention-lines LIST: every layer and head's attention of the
// chosen input lines, one NumPy .npz per line (attend::save_attention_npz), for any
// command that has it (translate; embed once encoder-only models run).
//
// PATH is a directory (created if missing) that gets line-N.npz for each chosen line N
// (0-based, as --attention's "line" and --n-best's INDEX count), or — ending in .npz, or
// an existing file or device — the one file of a single chosen line. Every check that
// can be made before translating is made then; a write that fails later is reported at
// the end, after the translation has been written in full.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "attend/attend.hpp"

namespace attend::cli {

class AttentionHeadsOutput {
 public:
  // Throws UsageError for a LIST that does not parse or a .npz PATH given several lines,
  // attend::Error for a PATH that cannot be written.
  AttentionHeadsOutput(std::string path, const std::string& lines);

  bool wants(std::uint64_t line) const { return all_ || lines_.count(line) != 0; }
  // Writes line's file, with the input line's `text` where the heads have none (the page
  // and the pictures show it). A failure is kept (later lines are not written) and thrown
  // by finish().
  void write(std::uint64_t line, attend::AttentionHeads heads, const std::string& text = {});
  // After the input is read (`lines_read` lines): throws attend::Error for a chosen line
  // past the input, or for the first write that failed.
  void finish(std::uint64_t lines_read) const;

 private:
  std::string file_for(std::uint64_t line) const;

  std::string path_;
  bool single_file_ = false, all_ = false;
  std::set<std::uint64_t> lines_;
  std::optional<std::string> failure_;
};

}  // namespace attend::cli
