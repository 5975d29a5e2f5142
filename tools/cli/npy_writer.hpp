// Rows of float32 written as a NumPy .npy file ([rows, dim], C order, little-endian),
// streamed: the header is written first with room for any row count and rewritten at
// the end, so a file of any length never sits in memory. A stream that cannot seek
// (a pipe) gets the rows buffered and written at the end.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace attend::cli {

class NpyWriter {
 public:
  // `label` names the file in messages ("the output out.npy").
  NpyWriter(std::FILE* out, std::int64_t dim, std::string label);
  void add(std::span<const float> row);
  // Writes the final header (and buffered rows); throws attend::Error naming the file on
  // a write failure.
  void finish();
  std::uint64_t rows() const { return rows_; }

 private:
  std::string header(std::uint64_t rows) const;

  std::FILE* out_;
  std::int64_t dim_;
  std::string label_;
  bool seekable_;
  long start_ = 0;
  std::uint64_t rows_ = 0;
  std::vector<float> buffered_;
};

}  // namespace attend::cli
