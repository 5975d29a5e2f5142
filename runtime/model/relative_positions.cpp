#include "model/relative_positions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attend::runtime {

std::int32_t t5_relative_bucket(std::int64_t relative_position, bool bidirectional, std::int64_t num_buckets,
                                std::int64_t max_distance) {
  if (bidirectional) num_buckets /= 2;
  const std::int64_t max_exact = num_buckets / 2;
  const float log_range = std::log(static_cast<float>(max_distance) / static_cast<float>(max_exact));
  auto distance = static_cast<std::int32_t>(relative_position);
  std::int32_t bucket = 0;
  if (bidirectional) {
    if (distance > 0)
      bucket += static_cast<std::int32_t>(num_buckets);  // keys after the query: the upper half
    else
      distance = std::abs(distance);
  } else {
    distance = -std::min(distance, 0);  // keys after the query never count
  }
  if (distance >= max_exact) {
    const float logarithmic = static_cast<float>(max_exact) +
                              std::log(static_cast<float>(distance) / static_cast<float>(max_exact)) / log_range *
                                  static_cast<float>(num_buckets - max_exact);
    distance = std::min(static_cast<std::int32_t>(logarithmic), static_cast<std::int32_t>(num_buckets - 1));
  }
  return bucket + distance;
}

DistanceBias expand_t5_bias(const std::vector<float>& table, std::int64_t buckets, std::int64_t heads,
                            std::int64_t max_distance, bool bidirectional) {
  DistanceBias out;
  out.max_distance = std::max(max_distance, buckets);
  const std::int64_t n = 2 * out.max_distance + 1;
  out.bias.resize(static_cast<size_t>(heads * n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t bucket = t5_relative_bucket(i - out.max_distance, bidirectional, buckets, max_distance);
    for (std::int64_t h = 0; h < heads; ++h) out.bias[h * n + i] = table[bucket * heads + h];
  }
  return out;
}

}  // namespace attend::runtime
