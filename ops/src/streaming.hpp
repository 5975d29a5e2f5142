// Driver side of streaming stores (see attend/ops/streaming_stores.hpp).
#pragma once

#include <emmintrin.h>

#include <cstddef>

namespace attend::ops::detail {

bool use_streaming_stores(std::size_t output_bytes);

// Streaming stores are weakly ordered: each thread fences after its last one, before
// the op returns and another thread may read what it wrote.
inline void streaming_fence() { _mm_sfence(); }

}  // namespace attend::ops::detail
