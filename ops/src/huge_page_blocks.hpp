// Blocks of 2 MiB pages shared by many buffers: the home of packed weights.
//
// A decoder step streams every weight matrix from memory once (144 MB in float32 for
// Transformer-base). On 4 KiB pages that is a TLB miss every 4 KiB and a hardware
// prefetcher that stops at each page edge; on 2 MiB pages (Linux transparent huge
// pages, asked for with madvise, as distributions default to) both go away: measured
// +10% for a float32 GEMM streaming its weights (M 32, N 32000, K 512, AVX2 kernels on
// Zen 4), +5–8% end to end for float32 greedy decoding and +10–15% for int8. But most
// matrices are smaller than a huge page (int8 512×512: 256 KiB), and one huge page
// each would multiply their memory — so they are carved, 64 bytes aligned, out of
// blocks of huge pages that many of them share. A block is freed when its last slice
// is; a block's tail is reused by later slices that fit. Space a freed slice leaves
// inside a block is not reused: weights loaded alongside longer-lived ones (two models
// loading at once, then one unloaded) keep their blocks' bytes until those go too — at
// most the blocks the survivor touches, 32 MiB each.
#pragma once

#include <cstddef>

#include "attend/ops/aligned_buffer.hpp"

namespace attend::ops::detail {

struct HugePageBlock;

// A zeroed slice of `bytes` (> 0), 64-byte aligned, in a block of 2 MiB pages; `block`
// is set to the block to release it to. Throws std::bad_alloc.
std::byte* huge_page_slice(std::size_t bytes, HugePageBlock*& block);
void release_huge_page_slice(HugePageBlock* block);

}  // namespace attend::ops::detail
