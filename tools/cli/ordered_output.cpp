#include "ordered_output.hpp"

#include <cerrno>
#include <cstring>

#include "attend/error.hpp"

namespace attend::cli {

void OrderedOutput::put(std::uint64_t index, std::string text) {
  if (index < next_) throw attend::Error("output line " + std::to_string(index + 1) + " given twice");
  const std::uint64_t slot = index - next_;
  if (slot >= window_.size()) window_.resize(slot + 1);
  window_[slot] = std::move(text);

  bool wrote = false;
  while (!window_.empty() && window_.front()) {
    const std::string& s = *window_.front();
    if (std::fwrite(s.data(), 1, s.size(), out_) != s.size())
      throw attend::Error("cannot write " + label_ + ": " + std::strerror(errno));
    window_.pop_front();
    ++next_;
    wrote = true;
  }
  if (wrote && std::fflush(out_) != 0) throw attend::Error("cannot write " + label_ + ": " + std::strerror(errno));
}

}  // namespace attend::cli
