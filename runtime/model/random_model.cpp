#include "model/random_model.hpp"

#include <cmath>
#include <span>

#include "attend/error.hpp"
#include "model/model.hpp"

namespace attend::runtime {
namespace {

// splitmix64: tiny, fast and the same on every platform (std distributions are not).
// Its state advances by a constant per draw, so the generator after n draws is
// SplitMix{seed + n·kStep}: each tensor can be generated alone, in any order.
struct SplitMix {
  static constexpr std::uint64_t kStep = 0x9e3779b97f4a7c15ull;
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += kStep);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(next() >> 40) * 0x1p-24f; }
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The values of one tensor: what its name says it is, from the generator `rng`.
void fill_tensor(const std::string& name, const std::vector<std::int64_t>& shape, SplitMix rng, std::span<float> v) {
  const bool is_norm = name.find("layer_norm") != std::string::npos || name.find("layernorm") != std::string::npos;
  if (is_norm && ends_with(name, ".weight")) {
    for (float& x : v) x = rng.uniform(0.9f, 1.1f);
  } else if (is_norm || ends_with(name, ".bias")) {
    for (float& x : v) x = rng.uniform(-0.05f, 0.05f);
  } else {
    const float a = 1.0f / std::sqrt(static_cast<float>(shape.back()));
    for (float& x : v) x = rng.uniform(-a, a);
  }
}

}  // namespace

std::shared_ptr<MemoryTensorSource> random_weights(const ModelConfig& config, std::uint64_t seed, bool on_demand) {
  auto out = std::make_shared<MemoryTensorSource>("random model (seed " + std::to_string(seed) + ")");
  std::uint64_t drawn = 0;  // values generated before this tensor, in file order
  for (auto& [name, shape] : expected_tensors(config)) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    const SplitMix rng{seed + drawn * SplitMix::kStep};
    drawn += static_cast<std::uint64_t>(n);
    if (on_demand) {
      out->add_on_demand(name, shape, [name, shape, rng](std::span<float> v) { fill_tensor(name, shape, rng, v); });
    } else {
      std::vector<float> v(static_cast<size_t>(n));
      fill_tensor(name, shape, rng, v);
      out->add(name, shape, std::move(v));
    }
  }
  return out;
}

ModelConfig preset_config(const std::string& name) {
  ModelConfig c;
  c.name = name;
  c.norm_placement = NormPlacement::pre;
  c.activation = ops::Activation::relu;
  c.position_encoding = PositionEncoding::sinusoidal_interleaved;
  c.shared_embeddings = true;
  c.tie_output_projection = false;
  c.output_bias = true;
  c.pad_id = 1, c.bos_id = 2, c.eos_id = 3, c.unk_id = 0, c.decoder_start_id = 2;
  if (name == "tiny") {
    c.d_model = 64, c.num_heads = 4, c.ffn_dim = 256, c.encoder_layers = 2, c.decoder_layers = 2;
    c.src_vocab_size = c.tgt_vocab_size = 1000;
    c.max_positions = 512;
  } else if (name == "base") {
    c.d_model = 512, c.num_heads = 8, c.ffn_dim = 2048, c.encoder_layers = 6, c.decoder_layers = 6;
    c.src_vocab_size = c.tgt_vocab_size = 32000;
    c.max_positions = 1024;
  } else if (name == "big") {
    c.d_model = 1024, c.num_heads = 16, c.ffn_dim = 4096, c.encoder_layers = 6, c.decoder_layers = 6;
    c.src_vocab_size = c.tgt_vocab_size = 32000;
    c.max_positions = 1024;
  } else {
    throw error_of("unknown preset '", name, "' (expected tiny, base or big)");
  }
  c.embedding_scale = std::sqrt(static_cast<float>(c.d_model));
  return c;
}

}  // namespace attend::runtime
