// T5's relative attention bias: relative distances to buckets, and the per-distance
// table the attention kernels read (ops::RelativePositions::bias).
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.hpp"

namespace attend::runtime {

// The bucket of relative position j − i, as T5 and CTranslate2 compute it (float
// arithmetic included, so boundary distances land in the same bucket): half the
// buckets per direction when bidirectional (encoder), only j ≤ i when causal (decoder);
// below max_exact = buckets/2 (per direction) one bucket per distance, then log-spaced
// up to max_distance, beyond which everything shares the last bucket.
std::int32_t t5_relative_bucket(std::int64_t relative_position, bool bidirectional, std::int64_t num_buckets,
                                std::int64_t max_distance);

// Expands `table` [buckets, heads] to DistanceBias rows of 2R + 1 distances per head,
// R = max(max_distance, buckets): past R the bucket no longer changes, so clipping the
// distance there is exact.
DistanceBias expand_t5_bias(const std::vector<float>& table, std::int64_t buckets, std::int64_t heads,
                            std::int64_t max_distance, bool bidirectional);

}  // namespace attend::runtime
