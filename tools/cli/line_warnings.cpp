#include "line_warnings.hpp"

namespace attend::cli {
namespace {
constexpr std::uint64_t kMaxListed = 10;  // then only counted
}  // namespace

std::string at_line(std::uint64_t number) {
  return number == 0 ? std::string("--target-prefix: ") : "line " + std::to_string(number) + ": ";
}

void LineWarnings::add(const std::string& kind, std::uint64_t line, const std::string& what) {
  Kind* k = nullptr;
  for (Kind& existing : kinds_)
    if (existing.name == kind) k = &existing;
  if (k == nullptr) k = &kinds_.emplace_back(Kind{kind, 0, 0, line});
  ++k->count;
  if (listed_ < kMaxListed) {
    std::fprintf(stderr, "%s: warning: %s%s\n", who_.c_str(), at_line(line).c_str(), what.c_str());
    ++listed_, ++k->listed;
  }
}

void LineWarnings::summarize(std::FILE* to) const {
  for (const Kind& k : kinds_)
    if (k.count > k.listed)
      std::fprintf(to, "%s: warning: %llu %s in all (first: line %llu; %llu not listed above)\n", who_.c_str(),
                   static_cast<unsigned long long>(k.count), k.name.c_str(), static_cast<unsigned long long>(k.first_line),
                   static_cast<unsigned long long>(k.count - k.listed));
}

std::uint64_t LineWarnings::count(const std::string& kind) const {
  for (const Kind& k : kinds_)
    if (k.name == kind) return k.count;
  return 0;
}

}  // namespace attend::cli
