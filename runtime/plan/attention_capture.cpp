#include "plan/attention_capture.hpp"

#include "attend/error.hpp"

namespace attend::runtime {

void AttentionMaps::reset(std::int64_t l, std::int64_t h, std::int64_t r, std::int64_t c) {
  layers = l, heads = h, rows = r, columns = c;
  weights.assign(static_cast<std::size_t>(l * h * r * c), 0.0f);
}

ops::WeightsView AttentionMaps::layer(std::int64_t l, std::int64_t first_row) {
  if (l < 0 || l >= layers || first_row < 0 || first_row >= rows)
    throw error_of("internal: attention maps of ", layers, " layers × ", rows, " rows have no layer ", l, " row ", first_row);
  return {weights.data() + (l * heads * rows + first_row) * columns, 0, rows * columns, columns};
}

}  // namespace attend::runtime
