// The CLI's LineReader against a whole-line reference: lines over the cap keep their
// first bytes (a sentence pair: each text's), backed off to the start of a character,
// whatever pieces the input arrives in — a pipe fed a few bytes at a time splits lines,
// tabs, "\r\n" and characters across reads.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../../tools/cli/text_input.hpp"

namespace attend::test {
namespace {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string first_bytes(const std::string& text, std::size_t cap, bool& cut) {
  if (text.size() <= cap) return text;
  cut = true;
  std::size_t keep = cap;
  while (keep > 0 && continuation(text[keep])) --keep;
  return text.substr(0, keep);
}

// What a line (without its "\n") reads as: within the cap, whole less a final "\r";
// over it, each text (a pair's: before and after the first tab) its first cap bytes,
// a final "\r" dropped only where the last text was not cut.
std::string expected_line(std::string line, std::size_t cap, bool pairs, bool& cut) {
  cut = false;
  if (line.size() <= cap) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  }
  const std::size_t tab = pairs ? line.find('\t') : std::string::npos;
  bool last_cut = false;
  std::string out;
  if (tab == std::string::npos) {
    out = first_bytes(line, cap, last_cut);
  } else {
    out = first_bytes(line.substr(0, tab), cap, cut) + "\t" + first_bytes(line.substr(tab + 1), cap, last_cut);
  }
  cut = cut || last_cut;
  if (!last_cut && !out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

}  // namespace

TEST_CASE("line reader: lines and pairs over the cap read as the whole line cut, in any pieces", "[cli][lines]") {
  std::mt19937 rng(7);
  const std::vector<std::string> alphabet = {"a", "b", " ", "\t", "\r", "é", "€", "😀", "\x80", "z"};
  for (int round = 0; round < 600; ++round) {
    const std::size_t cap = 1 + rng() % 12;
    const bool pairs = rng() % 2 == 1;
    std::vector<std::string> lines;
    std::string input;
    bool final_newline = false;
    const int count = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < count; ++i) {
      std::string line;
      for (int k = static_cast<int>(rng() % 30); k > 0; --k) line += alphabet[rng() % alphabet.size()];
      lines.push_back(line);
      input += line;
      final_newline = i + 1 < count || rng() % 2 == 1;
      if (final_newline) input += "\n";
    }
    std::vector<std::string> expected;
    std::vector<std::uint64_t> expected_cuts;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      bool cut = false;
      expected.push_back(expected_line(lines[i], cap, pairs, cut));
      if (cut) expected_cuts.push_back(i + 1);
    }
    if (!final_newline && lines.back().empty()) expected.pop_back();  // nothing after the last "\n"

    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::thread writer([&input, fd = fds[1], seed = rng()] {
      std::mt19937 r(seed);
      for (std::size_t at = 0; at < input.size();) {
        const std::size_t n = std::min<std::size_t>(input.size() - at, 1 + r() % 5);
        if (::write(fd, input.data() + at, n) != static_cast<ssize_t>(n)) break;
        at += n;
      }
      ::close(fd);
    });
    std::vector<std::string> got;
    std::vector<std::uint64_t> cuts;
    {
      cli::LineReader reader("/dev/fd/" + std::to_string(fds[0]), "input");
      reader.cap_lines(cap, pairs);
      for (std::vector<std::string> chunk; !(chunk = reader.read(1 + rng() % 3, true)).empty();) {
        cuts.insert(cuts.end(), reader.cut_lines().begin(), reader.cut_lines().end());
        got.insert(got.end(), chunk.begin(), chunk.end());
      }
    }
    writer.join();
    ::close(fds[0]);
    INFO("round " << round << ", cap " << cap << (pairs ? ", pairs" : ""));
    REQUIRE(got == expected);
    REQUIRE(cuts == expected_cuts);
  }
}

}  // namespace attend::test
