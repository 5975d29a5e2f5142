#include "attend/ops/cache_sizes.hpp"

#include <unistd.h>

namespace attend::ops {

std::size_t l2_cache_bytes() {
  static const std::size_t bytes = [] {
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return l2 > 0 ? static_cast<std::size_t>(l2) : std::size_t{1} << 20;  // unknown: the common 1 MiB
  }();
  return bytes;
}

}  // namespace attend::ops
