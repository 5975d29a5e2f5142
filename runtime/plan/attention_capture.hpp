// Every layer and head's attention weights of one sequence, written by the plan's
// attention steps when a caller asks for them (PhaseShape::capture) — never during
// ordinary inference. Each attention step recomputes its probabilities with the ops of
// attend/ops/attention_probs.hpp from the arguments it has just given the fused
// kernel, so the weights are the ones that kernel applied.
//
// Any model kind can fill one: an encoder-decoder trace (Workspace::trace_attention)
// fills all three maps; an encoder-only model would call ops::attention_weights with its
// layer's AttentionArgs and encoder_self.layer(l), and leave the decoder's maps empty.
#pragma once

#include <cstdint>
#include <vector>

#include "attend/ops/attention_probs.hpp"

namespace attend::runtime {

// One kind of attention: [layers, heads, rows, columns] floats, row-major. Row i of
// (layer, head) is a distribution over the columns it sees, 0 at the others.
struct AttentionMaps {
  std::int64_t layers = 0, heads = 0, rows = 0, columns = 0;
  std::vector<float> weights;

  // Zeros in that shape (allocates: call before the run that fills it).
  void reset(std::int64_t layers, std::int64_t heads, std::int64_t rows, std::int64_t columns);
  // Where layer l's weights go, as the ops write them, starting at row `first_row` (a
  // decoding step's): head h, row i at weights + ((l·heads + h)·rows + first_row + i)·columns.
  // One sequence: the view's batch index must be 0.
  ops::WeightsView layer(std::int64_t l, std::int64_t first_row = 0);
};

struct AttentionCapture {
  AttentionMaps encoder_self;  // [encoder layers, heads, S, S]: source positions over source positions
  AttentionMaps decoder_self;  // [decoder layers, heads, T, T]: decoder steps over the steps up to them
  AttentionMaps cross;         // [decoder layers, heads, T, S]: decoder steps over source positions
};

}  // namespace attend::runtime
