// Deterministic random models: the benchmark presets (tiny, base, big) and test models.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "formats/memory_tensor_source.hpp"
#include "model/model_config.hpp"

namespace attend::runtime {

// Every tensor expected_tensors(config) lists, filled from `seed`: weights uniform in
// ±1/√fan_in (activations keep their scale through the layers), LayerNorm γ near 1 and
// β near 0, embeddings uniform in ±1/√d_model. Same config and seed, same bits.
// `on_demand`: each tensor is generated when the model acquires it (the same bits), so
// building a model from it never holds the whole fp32 model — with release after read,
// at most one tensor — which would otherwise set a quantized model's peak memory.
std::shared_ptr<MemoryTensorSource> random_weights(const ModelConfig& config, std::uint64_t seed, bool on_demand = false);

// Transformer shapes by name: "tiny" (d 64, 2+2 layers, vocab 1000), "base" (d 512,
// 8 heads, FFN 2048, 6+6, vocab 32000 shared, pre-LN, ReLU — the standard workload),
// "big" (d 1024, 16 heads, FFN 4096, 6+6, vocab 32000 shared). Throws on other names.
ModelConfig preset_config(const std::string& name);

}  // namespace attend::runtime
