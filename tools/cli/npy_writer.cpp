#include "npy_writer.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "attend/error.hpp"

namespace attend::cli {

namespace {
constexpr std::size_t kHeaderBytes = 128;  // magic, version, length, the dict padded: 64-byte aligned data
}

NpyWriter::NpyWriter(std::FILE* out, std::int64_t dim, std::string label) : out_(out), dim_(dim), label_(std::move(label)) {
  start_ = std::ftell(out_);
  seekable_ = start_ >= 0 && std::fseek(out_, start_, SEEK_SET) == 0;
  if (seekable_) std::fwrite(header(0).data(), 1, kHeaderBytes, out_);
}

std::string NpyWriter::header(std::uint64_t rows) const {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                     std::to_string(dim_) + "), }";
  std::string h = "\x93NUMPY";
  h += '\x01', h += '\x00';
  const std::size_t length = kHeaderBytes - 10;
  h += static_cast<char>(length & 0xff), h += static_cast<char>(length >> 8);
  dict.append(length - dict.size() - 1, ' ');
  return h + dict + "\n";
}

void NpyWriter::add(std::span<const float> row) {
  if (static_cast<std::int64_t>(row.size()) != dim_)
    throw attend::Error("internal: an embedding of " + std::to_string(row.size()) + " values for a " + std::to_string(dim_) +
                        "-column .npy");
  ++rows_;
  if (!seekable_) {
    buffered_.insert(buffered_.end(), row.begin(), row.end());
    return;
  }
  std::fwrite(row.data(), sizeof(float), row.size(), out_);
}

void NpyWriter::finish() {
  if (seekable_) {
    const long end = std::ftell(out_);
    std::fseek(out_, start_, SEEK_SET);
    std::fwrite(header(rows_).data(), 1, kHeaderBytes, out_);
    std::fseek(out_, end, SEEK_SET);
  } else {
    std::fwrite(header(rows_).data(), 1, kHeaderBytes, out_);
    std::fwrite(buffered_.data(), sizeof(float), buffered_.size(), out_);
  }
  if (std::fflush(out_) != 0 || std::ferror(out_)) throw attend::Error("cannot write " + label_ + ": " + std::strerror(errno));
}

}  // namespace attend::cli
