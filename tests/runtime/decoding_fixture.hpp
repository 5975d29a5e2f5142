// Shared by the runtime tests: the committed trained tiny model (its outputs are varied
// and end with end-of-sequence, unlike a random model's) and some sources for it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/model_io.hpp"
#include "model/random_model.hpp"

namespace attend::runtime::test {

inline std::shared_ptr<const Model> trained_tiny_model() {
  static const auto model = load_model(std::string(ATTEND_SOURCE_DIR) + "/tests/data/parity/pre-ln-relu/model");
  return model;
}

// The `tiny` preset with random weights (seed 1): cheap to build, enough to decode.
inline std::shared_ptr<const Model> tiny_preset_model() {
  static const auto model = [] {
    const ModelConfig c = preset_config("tiny");
    LoadReport report;
    return Model::build(c, random_weights(c, 1), report, {});
  }();
  return model;
}

// Lengths 1 to 14, shuffled, one repeated.
inline std::vector<std::vector<std::int32_t>> tiny_sources() {
  return {{11, 35, 37, 5}, {24, 21}, {7, 12, 14, 12, 40, 43, 30, 5, 8, 19, 23, 32, 26}, {9},
          {43, 17, 47, 4, 7, 48, 47, 17, 10, 18, 5}, {30, 31, 33, 34, 35, 36}, {24, 21},
          {34, 30, 15, 25, 12, 39, 25, 5, 15, 36, 27, 21, 15, 8}, {6, 7, 8}, {40, 41, 42, 43, 44, 45, 46}};
}

}  // namespace attend::runtime::test
