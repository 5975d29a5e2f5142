// MarianMTModel (Helsinki-NLP opus-mt and the other Marian conversions), as transformers'
// modeling_marian runs it: post-norm layers, no embedding or final layer norms, token
// embeddings scaled by √d_model (scale_embedding), sinusoidal positions from 0 with the
// sines in the first half and the cosines in the second (frequency 1/10000^(2i/d)),
// decoding from the pad token (whose embedding row is zero in a trained model: it is
// read, not assumed), an output projection tied to the decoder embedding plus
// final_logits_bias. share_encoder_decoder_embeddings false gives the decoder its own
// vocabulary (decoder_vocab_size).
#include <cmath>

#include "attend/error.hpp"
#include "formats/hf/bart_layers.hpp"
#include "formats/hf/seq2seq.hpp"

namespace attend::runtime {
namespace {

// transformers' MarianSinusoidalPositionalEmbedding: computed in float64, stored as fp32.
std::vector<float> marian_positions(std::int64_t rows, std::int64_t d) {
  std::vector<float> t(static_cast<std::size_t>(rows * d));
  const std::int64_t half = d / 2 + d % 2;  // the sine columns: ⌈d/2⌉
  for (std::int64_t p = 0; p < rows; ++p)
    for (std::int64_t j = 0; j < d; ++j) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / static_cast<double>(d));
      // even j → the sin half (column j/2), odd j → the cos half (column half + j/2)
      if (j % 2 == 0) t[static_cast<std::size_t>(p * d + j / 2)] = static_cast<float>(std::sin(angle));
      else t[static_cast<std::size_t>(p * d + half + j / 2)] = static_cast<float>(std::cos(angle));
    }
  return t;
}

void read_marian(const JsonFile& config, TensorMap& map, ModelConfig& c) {
  read_bart_stacks(config, c);
  c.norm_placement = NormPlacement::post;
  c.encoder_final_norm = c.decoder_final_norm = false;
  c.layernorm_embedding = false;
  c.bos_id = c.eos_id;  // Marian has no BOS; nothing generates or needs one
  c.pad_id = static_cast<std::int32_t>(config.integer("pad_token_id"));
  c.decoder_start_id = static_cast<std::int32_t>(config.integer_or("decoder_start_token_id", c.pad_id));
  const bool shared = config.flag_or("share_encoder_decoder_embeddings", true);
  c.tgt_vocab_size = config.integer_or("decoder_vocab_size", c.src_vocab_size);
  if (shared && c.tgt_vocab_size != c.src_vocab_size)
    config.bad("decoder_vocab_size", "differs from vocab_size while share_encoder_decoder_embeddings is true");
  if (c.decoder_start_id >= c.tgt_vocab_size || c.eos_id >= c.tgt_vocab_size)
    config.bad("decoder_vocab_size", "leaves out the decoder start or end-of-sequence token");
  c.shared_embeddings = shared;
  c.tie_output_projection = config.flag_or("tie_word_embeddings", true);
  c.output_bias = true;  // final_logits_bias

  // Positions: not stored by recent transformers (or stored as the same table by older
  // versions, which transformers then recomputes): computed here.
  c.position_encoding = PositionEncoding::learned;
  c.position_offset = 0;
  c.shared_position_table = false;
  const std::vector<float> table = marian_positions(c.max_positions, c.d_model);
  map.computed("encoder.embed_positions.weight", {c.max_positions, c.d_model}, table);
  map.computed("decoder.embed_positions.weight", {c.max_positions, c.d_model}, table);

  const std::string shared_table = map.has("model.shared.weight") ? "model.shared.weight" : "model.encoder.embed_tokens.weight";
  if (shared) {
    map.alias("encoder.embed_tokens.weight", shared_table);
  } else {
    map.alias("encoder.embed_tokens.weight", "model.encoder.embed_tokens.weight");
    map.alias("decoder.embed_tokens.weight", "model.decoder.embed_tokens.weight");
  }
  map_bart_layers(map, c, "model.");
  if (!c.tie_output_projection) map.alias("output_projection.weight", "lm_head.weight");
  map.alias("output_projection.bias", "final_logits_bias", {c.tgt_vocab_size});
}

bool marian_ignorable(const std::string& stored) {
  // Tied copies (the same table under the names of its users) and the stored positions.
  return stored == "model.encoder.embed_tokens.weight" || stored == "model.decoder.embed_tokens.weight" ||
         stored == "lm_head.weight" || stored.ends_with("embed_positions.weight") || is_bart_buffer(stored);
}

}  // namespace

const Seq2SeqFamily& marian_family() {
  static const Seq2SeqFamily f{"marian", "MarianMTModel, MarianModel", read_marian, marian_ignorable};
  return f;
}

}  // namespace attend::runtime
