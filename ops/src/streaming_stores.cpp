#include "attend/ops/streaming_stores.hpp"

#include <unistd.h>

#include <atomic>

#include "streaming.hpp"

namespace attend::ops {
namespace {

std::size_t last_level_cache_bytes() {
  long bytes = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (bytes <= 0) bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return bytes > 0 ? static_cast<std::size_t>(bytes) : std::size_t{32} << 20;
}

std::atomic<std::size_t>& threshold() {
  static std::atomic<std::size_t> bytes{last_level_cache_bytes()};
  return bytes;
}

}  // namespace

std::size_t streaming_store_threshold() { return threshold().load(std::memory_order_relaxed); }
void set_streaming_store_threshold(std::size_t bytes) { threshold().store(bytes, std::memory_order_relaxed); }

namespace detail {
bool use_streaming_stores(std::size_t output_bytes) { return output_bytes >= streaming_store_threshold(); }
}  // namespace detail

}  // namespace attend::ops
