// The runtime's captured attention (runtime/plan/attention_capture.hpp) as the public
// attend::AttentionMaps, for every model kind's API.
#pragma once

#include <utility>

#include "attend/attend.hpp"
#include "plan/attention_capture.hpp"

namespace attend {

inline AttentionMaps maps_of(runtime::AttentionMaps&& m) {
  AttentionMaps out;
  out.layers = m.layers, out.heads = m.heads, out.rows = m.rows, out.columns = m.columns;
  out.weights = std::move(m.weights);
  return out;
}

}  // namespace attend
