// An owning, 64-byte-aligned, zero-initialised float buffer.
//
// Aligned to a cache line so that packed GEMM panels and arena slices can use aligned
// vector loads on every ISA. Move-only: packed weights and arenas are never copied by
// accident.
//
// Large buffers (≥ 2 MiB: arenas, the output projection) are backed by 2 MiB pages
// where Linux gives them (transparent huge pages on request); packed weights of any
// size ask for Pages::shared_huge, slices of huge-page blocks that many weights share
// (huge_page_blocks.hpp says why: weights are streamed, and 4 KiB pages cost the
// stream 10%).
#pragma once

#include <cstddef>

#include "attend/ops/types.hpp"

namespace attend::ops {
namespace detail {
struct HugePageBlock;
}

class AlignedBuffer {
 public:
  static constexpr std::size_t kAlignment = 64;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  // own: a buffer of its own (on huge pages from kHugePage up); shared_huge: a slice
  // of a block of huge pages shared with other such buffers.
  enum class Pages { own, shared_huge };

  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes, Pages pages = Pages::own);
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
  void release();

  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  detail::HugePageBlock* block_ = nullptr;  // the shared block holding data_ (shared_huge)
};

// The blocks behind Pages::shared_huge buffers now: how many, and their bytes (memory
// reports; a block is freed with its last buffer).
struct SharedHugePageBlocks {
  std::size_t blocks = 0;
  std::size_t bytes = 0;
};
SharedHugePageBlocks shared_huge_page_blocks();

}  // namespace attend::ops
