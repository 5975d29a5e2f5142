// The API tests' model and sentences: the small SentencePiece model and corpus that
// ctest's "cli: build the test models and tokenizers" writes to ATTEND_CLI_FIXTURE.
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace attend::api_test {

inline const std::string kModel = std::string(ATTEND_CLI_FIXTURE) + "/model";

// The corpus's first n lines.
inline std::vector<std::string> corpus(std::size_t n) {
  std::ifstream in(std::string(ATTEND_CLI_FIXTURE) + "/corpus.txt");
  std::vector<std::string> out;
  for (std::string line; out.size() < n && std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace attend::api_test
