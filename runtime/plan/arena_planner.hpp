// Places buffers in one arena by liveness: two buffers share bytes only if no step uses
// both. Greedy, largest first, each at the lowest offset that does not collide with an
// already placed buffer whose lifetime overlaps (the approach of TFLite's arena planner).
#pragma once

#include <cstddef>
#include <vector>

namespace attend::runtime {

struct ArenaRequest {
  std::size_t bytes = 0;
  int first_use = 0;  // step indices, inclusive
  int last_use = 0;
};

struct ArenaLayout {
  std::vector<std::size_t> offsets;  // per request, aligned to `alignment`
  std::size_t arena_bytes = 0;
  std::size_t requested_bytes = 0;   // sum of all requests (what no sharing would take)
};

ArenaLayout plan_arena(const std::vector<ArenaRequest>& requests, std::size_t alignment = 64);

}  // namespace attend::runtime
