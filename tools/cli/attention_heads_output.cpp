#include "attention_heads_output.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "commands.hpp"

namespace attend::cli {
namespace fs = std::filesystem;
namespace {

// "3,7", "0-4,9", "all" → the lines; false for "all".
bool parse_lines(const std::string& text, std::set<std::uint64_t>& out) {
  if (text == "all") return false;
  auto bad = [&](const std::string& why) {
    return UsageError("--attention-lines '" + text + "': " + why +
                      " (0-based input lines: 3,7 or 0-4,9 or all)");
  };
  auto number = [&](const std::string& part) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 18)
      throw bad("'" + part + "' is not a line number");
    return std::stoull(part);
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    const std::size_t dash = part.find('-');
    const std::uint64_t first = number(part.substr(0, dash));
    const std::uint64_t last = dash == std::string::npos ? first : number(part.substr(dash + 1));
    if (last < first) throw bad("the range " + part + " ends before it starts");
    if (last - first >= 1'000'000) throw bad("the range " + part + " names more than a million lines");
    for (std::uint64_t l = first; l <= last; ++l) out.insert(l);
    start = comma + 1;
  }
  return true;
}

}  // namespace

AttentionHeadsOutput::AttentionHeadsOutput(std::string path, const std::string& lines) : path_(std::move(path)) {
  all_ = !parse_lines(lines, lines_);
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  single_file_ = exists ? !S_ISDIR(st.st_mode) : fs::path(path_).extension() == ".npz";
  if (single_file_) {
    if (all_ || lines_.size() != 1)
      throw UsageError("--attention-all " + path_ + " is one file, for one line: --attention-lines names " +
                       (all_ ? std::string("all") : std::to_string(lines_.size())) +
                       " (give a directory to write line-N.npz for each)");
    const std::string parent = fs::path(path_).parent_path().empty() ? "." : fs::path(path_).parent_path().string();
    if (::access(exists ? path_.c_str() : parent.c_str(), W_OK) != 0)
      throw attend::Error("cannot write the attention file " + path_ + ": " + std::strerror(errno));
    return;
  }
  std::error_code error;
  fs::create_directories(path_, error);
  if (error) throw attend::Error("cannot create the attention directory " + path_ + ": " + error.message());
  if (::access(path_.c_str(), W_OK) != 0)
    throw attend::Error("cannot write in the attention directory " + path_ + ": " + std::strerror(errno));
}

std::string AttentionHeadsOutput::file_for(std::uint64_t line) const {
  return single_file_ ? path_ : (fs::path(path_) / ("line-" + std::to_string(line) + ".npz")).string();
}

void AttentionHeadsOutput::write(std::uint64_t line, attend::AttentionHeads heads, const std::string& text) {
  if (failure_) return;
  if (heads.source_texts.empty() && !text.empty()) heads.source_texts = {text};
  try {
    attend::save_attention_npz(heads, file_for(line), static_cast<std::int64_t>(line));
  } catch (const attend::Error& e) {
    failure_ = std::string(e.what()) + " (--attention-all; the translation itself was written in full)";
  }
}

void AttentionHeadsOutput::finish(std::uint64_t lines_read) const {
  if (!all_ && !lines_.empty() && *lines_.rbegin() >= lines_read)
    throw attend::Error("--attention-lines " + std::to_string(*lines_.rbegin()) + ": the input has " +
                        std::to_string(lines_read) + " line(s), numbered from 0 (the translation was written in full)");
  if (failure_) throw attend::Error(*failure_);
}

}  // namespace attend::cli
