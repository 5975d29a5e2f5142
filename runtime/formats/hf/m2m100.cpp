// M2M100ForConditionalGeneration — M2M100 and NLLB-200 (both model_type m2m_100), as
// transformers' modeling_m2m_100 runs them: pre-norm layers with final layer norms on
// both stacks, no embedding layer norm, token embeddings scaled by √d_model when
// scale_embedding, one table shared by both stacks and (tie_word_embeddings) the output,
// and fairseq's sinusoidal positions — not stored: [sin | cos] halves of frequency
// exp(−i·ln 10000/(d/2 − 1)), the row padding_idx zero, a token's position counted from
// padding_idx + 1, a pad token at padding_idx and not counted. Decoding starts from </s> (decoder_start_token_id) and the target
// language is forced as the first generated token (forced_bos_token_id).
#include <cmath>

#include "attend/error.hpp"
#include "formats/hf/bart_layers.hpp"
#include "formats/hf/seq2seq.hpp"

namespace attend::runtime {
namespace {

// transformers' M2M100SinusoidalPositionalEmbedding.get_embedding, in float32 as torch
// computes it (so the rows are the same numbers, not merely close).
std::vector<float> fairseq_positions(std::int64_t rows, std::int64_t d, std::int64_t padding_idx) {
  std::vector<float> t(static_cast<std::size_t>(rows * d), 0.0f);
  const std::int64_t half = d / 2;
  const float step = static_cast<float>(std::log(10000.0) / static_cast<double>(half - 1));
  std::vector<float> frequency(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) frequency[static_cast<std::size_t>(i)] = std::exp(static_cast<float>(i) * -step);
  for (std::int64_t p = 0; p < rows; ++p) {
    if (p == padding_idx) continue;  // the pad row stays zero
    for (std::int64_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(p) * frequency[static_cast<std::size_t>(i)];
      t[static_cast<std::size_t>(p * d + i)] = std::sin(angle);
      t[static_cast<std::size_t>(p * d + half + i)] = std::cos(angle);
    }
  }
  return t;
}

void read_m2m100(const JsonFile& config, TensorMap& map, ModelConfig& c) {
  read_bart_stacks(config, c);
  c.norm_placement = NormPlacement::pre;
  c.encoder_final_norm = c.decoder_final_norm = true;
  c.layernorm_embedding = false;
  c.shared_embeddings = true;
  c.tie_output_projection = config.flag_or("tie_word_embeddings", true);
  c.output_bias = false;
  if (c.d_model < 4) config.bad("d_model", "must be ≥ 4 for M2M100's sinusoidal positions");

  // A token's position is padding_idx + 1 + its index: a table of that many more rows.
  c.position_encoding = PositionEncoding::learned;
  c.position_offset = c.pad_id + 1;
  c.pad_positions = true;  // a <pad> token takes the zero row padding_idx, uncounted
  c.shared_position_table = false;
  const std::int64_t rows = c.position_offset + c.max_positions;
  const std::vector<float> table = fairseq_positions(rows, c.d_model, c.pad_id);
  map.computed("encoder.embed_positions.weight", {rows, c.d_model}, table);
  map.computed("decoder.embed_positions.weight", {rows, c.d_model}, table);

  map.alias("encoder.embed_tokens.weight", map.has("model.shared.weight") ? "model.shared.weight" : "model.encoder.embed_tokens.weight");
  map_bart_layers(map, c, "model.");
  map_norm(map, "encoder.layer_norm", "model.encoder.layer_norm");
  map_norm(map, "decoder.layer_norm", "model.decoder.layer_norm");
  if (!c.tie_output_projection) map.alias("output_projection.weight", "lm_head.weight");
}

bool m2m100_ignorable(const std::string& stored) {
  // Tied copies of the shared table, and position tables older versions stored.
  return stored == "model.encoder.embed_tokens.weight" || stored == "model.decoder.embed_tokens.weight" ||
         stored == "lm_head.weight" || stored.ends_with("embed_positions.weights") || is_bart_buffer(stored);
}

}  // namespace

const Seq2SeqFamily& m2m100_family() {
  static const Seq2SeqFamily f{"m2m_100", "M2M100ForConditionalGeneration, M2M100Model", read_m2m100, m2m100_ignorable};
  return f;
}

}  // namespace attend::runtime
