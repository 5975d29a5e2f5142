#include "plan/arena_planner.hpp"

#include <algorithm>
#include <numeric>

namespace attend::runtime {

ArenaLayout plan_arena(const std::vector<ArenaRequest>& requests, std::size_t alignment) {
  ArenaLayout out;
  out.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });

  auto round_up = [&](std::size_t v) { return (v + alignment - 1) / alignment * alignment; };
  std::vector<size_t> placed;
  for (size_t i : order) {
    const ArenaRequest& r = requests[i];
    out.requested_bytes += r.bytes;
    // Ranges taken by placed buffers alive at the same time, by offset.
    std::vector<std::pair<std::size_t, std::size_t>> busy;
    for (size_t j : placed) {
      const ArenaRequest& o = requests[j];
      if (o.first_use <= r.last_use && r.first_use <= o.last_use)
        busy.emplace_back(out.offsets[j], out.offsets[j] + round_up(o.bytes));
    }
    std::sort(busy.begin(), busy.end());
    std::size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + round_up(r.bytes) <= begin) break;  // fits in the gap before this one
      offset = std::max(offset, end);
    }
    out.offsets[i] = offset;
    out.arena_bytes = std::max(out.arena_bytes, offset + round_up(r.bytes));
    placed.push_back(i);
  }
  return out;
}

}  // namespace attend::runtime
