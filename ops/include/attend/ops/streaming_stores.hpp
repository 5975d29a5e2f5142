// When the element-wise and normalisation ops write with streaming stores.
//
// A normal store first reads the destination line into cache (read-for-ownership), so
// an op whose output streams to DRAM moves three bytes per output byte; a streaming
// (non-temporal) store writes the line without reading it, two bytes — what memcpy
// does for large copies. It is worth it only for outputs that would be evicted before
// anyone reads them, hence a size threshold.
#pragma once

#include <cstddef>

namespace attend::ops {

// activation, layer_norm and rms_norm write an output of at least this many bytes with
// streaming stores. Default: the last-level cache size the OS reports (32 MiB if it
// reports none). 0 streams every output; SIZE_MAX none.
std::size_t streaming_store_threshold();
void set_streaming_store_threshold(std::size_t bytes);

}  // namespace attend::ops
