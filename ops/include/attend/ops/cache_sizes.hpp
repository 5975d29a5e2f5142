// The caches the OS reports, for choosing block and chunk sizes (never for results:
// every size chosen from them gives the same bits).
#pragma once

#include <cstddef>

namespace attend::ops {

// One core's L2 in bytes as the OS reports it (sysconf), 1 MiB when it reports none.
// Zen 3: 512 KiB; Zen 4: 1 MiB; Sapphire/Emerald Rapids: 2 MiB.
std::size_t l2_cache_bytes();

}  // namespace attend::ops
