#include "huge_page_blocks.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <memory>
#include <new>
#include <vector>

namespace attend::ops::detail {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// 16 huge pages: a few per model, little tail left when a slice does not fit.
constexpr std::size_t kBlockBytes = std::size_t{32} << 20;
constexpr std::size_t kSliceAlignment = 64;

struct HugePageBlock {
  std::byte* base = nullptr;
  std::size_t size = 0;
  std::size_t used = 0;
  std::size_t live = 0;  // slices handed out and not released
};

namespace {

// Never destroyed: buffers in static objects may be released after this file's statics.
struct Registry {
  std::mutex mutex;
  std::vector<HugePageBlock*> blocks;  // every block allocated, in allocation order
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

HugePageBlock* new_block(std::size_t bytes) {
  auto block = std::make_unique<HugePageBlock>();
  block->size = std::max(kBlockBytes, round_up(bytes, kHugePage));
  block->base = static_cast<std::byte*>(std::aligned_alloc(kHugePage, block->size));
  if (block->base == nullptr) throw std::bad_alloc();
  // Before the first touch, so the page faults take huge pages. Where THP is off (or
  // the kernel has none to give) this fails or is ignored: small pages, same bytes.
  ::madvise(block->base, block->size, MADV_HUGEPAGE);
  registry().blocks.push_back(block.get());
  return block.release();
}

}  // namespace

std::byte* huge_page_slice(std::size_t bytes, HugePageBlock*& block) {
  const std::size_t size = round_up(std::max<std::size_t>(bytes, 1), kSliceAlignment);
  std::byte* slice = nullptr;
  {
    Registry& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    // First fit: earlier blocks' tails fill before a new block is started.
    const auto fits = std::find_if(r.blocks.begin(), r.blocks.end(),
                                   [&](const HugePageBlock* b) { return b->size - b->used >= size; });
    block = fits != r.blocks.end() ? *fits : new_block(size);
    slice = block->base + block->used;
    block->used += size;
    ++block->live;
  }
  std::memset(slice, 0, size);  // reused tails hold old bytes; fresh pages are faulted in here
  return slice;
}

void release_huge_page_slice(HugePageBlock* block) {
  if (block == nullptr) return;
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  if (--block->live != 0) return;
  // Its last slice: give the whole block back (a block's space is never reused below
  // its high-water mark, so an empty block is dead weight).
  r.blocks.erase(std::find(r.blocks.begin(), r.blocks.end(), block));
  std::free(block->base);
  delete block;
}

}  // namespace attend::ops::detail

namespace attend::ops {

SharedHugePageBlocks shared_huge_page_blocks() {
  detail::Registry& r = detail::registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  SharedHugePageBlocks s;
  s.blocks = r.blocks.size();
  for (const detail::HugePageBlock* b : r.blocks) s.bytes += b->size;
  return s;
}

}  // namespace attend::ops
