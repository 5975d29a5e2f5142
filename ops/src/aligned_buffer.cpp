#include "attend/ops/aligned_buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "huge_page_blocks.hpp"

namespace attend::ops {

AlignedBuffer::AlignedBuffer(std::size_t bytes, Pages pages) {
  if (bytes == 0) return;
  if (pages == Pages::shared_huge) {
    data_ = detail::huge_page_slice(bytes, block_);
    bytes_ = bytes;
    return;
  }
  const bool huge = bytes >= kHugePage;
  const std::size_t align = huge ? kHugePage : kAlignment;
  const std::size_t rounded = (bytes + align - 1) / align * align;
  data_ = static_cast<std::byte*>(std::aligned_alloc(align, rounded));
  if (data_ == nullptr) throw std::bad_alloc();
  if (huge) ::madvise(data_, rounded, MADV_HUGEPAGE);  // before the first touch (the memset)
  std::memset(data_, 0, rounded);
  bytes_ = bytes;
}

void AlignedBuffer::release() {
  if (block_ != nullptr) {
    detail::release_huge_page_slice(block_);
  } else {
    std::free(data_);
  }
  data_ = nullptr, bytes_ = 0, block_ = nullptr;
}

AlignedBuffer::~AlignedBuffer() { release(); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      block_(std::exchange(other.block_, nullptr)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    block_ = std::exchange(other.block_, nullptr);
  }
  return *this;
}

}  // namespace attend::ops
