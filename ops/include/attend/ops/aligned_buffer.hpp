// An owning, 64-byte-aligned, zero-initialised float buffer.
//
// Aligned to a cache line so that packed GEMM panels and arena slices can use aligned
// vector loads on every ISA. Move-only: packed weights and arenas are never copied by
// accident.
#pragma once

#include <cstddef>

#include "attend/ops/types.hpp"

namespace attend::ops {

class AlignedBuffer {
 public:
  static constexpr std::size_t kAlignment = 64;

  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes);
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  std::byte* data() const { return data_; }
  float* floats() const { return reinterpret_cast<float*>(data_); }
  std::size_t bytes() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace attend::ops
