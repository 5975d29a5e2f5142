// The architecture of an encoder-decoder transformer: config.json of a model directory.
// Every field is documented in docs/model-format.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "attend/ops/types.hpp"

namespace attend::runtime {

enum class NormPlacement { pre, post };  // LayerNorm before each sublayer, or after its residual add
enum class PositionEncoding {
  sinusoidal_interleaved,    // sin/cos alternating (Vaswani; the PyTorch tutorial)
  sinusoidal_concatenated,   // [sin | cos] halves (fairseq, Marian, OpenNMT, CTranslate2)
  learned,                   // a stored table, learned or precomputed
  none,                      // no absolute positions (relative attention gives them)
};
enum class NormType {
  layer_norm,  // (x − mean)/√(var + ε)·γ + β
  rms_norm,    // x/√(mean(x²) + ε)·γ (T5): no β, no centring
};
// Position terms inside self-attention (ops::RelativePositions), from the clipped
// distance δ = clamp(j − i, −R, R) of key j to query i:
enum class RelativeAttention {
  none,
  t5_bias,  // a learned bias per head and log-bucketed distance (T5), shared by the
            // layers of a stack: bidirectional in the encoder, causal in the decoder
  shaw,     // learned key and value vectors per clipped distance, per layer (Shaw et al.
            // 2018; OpenNMT-py's max_relative_positions)
};

constexpr std::int32_t kNoToken = -1;  // a special token the model does not have

struct ModelConfig {
  std::int64_t d_model = 0;
  std::int64_t num_heads = 0;
  // heads × head dimension: the width of the Q, K and V projections and of the input of
  // out_proj. 0: d_model (every CTranslate2 model); T5's d_kv × num_heads may differ
  // (mT5-small: 6 × 64 = 384 ≠ 512).
  std::int64_t attention_dim = 0;
  std::int64_t ffn_dim = 0;
  std::int64_t encoder_layers = 0;
  std::int64_t decoder_layers = 0;
  std::int64_t src_vocab_size = 0;
  std::int64_t tgt_vocab_size = 0;
  std::int64_t max_positions = 1024;

  ops::Activation activation = ops::Activation::relu;
  NormPlacement norm_placement = NormPlacement::pre;
  float layer_norm_epsilon = 1e-5f;
  bool encoder_final_norm = true;
  bool decoder_final_norm = true;
  bool layernorm_embedding = false;
  bool linear_bias = true;
  NormType norm_type = NormType::layer_norm;
  bool ffn_gated = false;               // fc2(act(fc1(x)) ⊙ fc1_noact(x))
  float attention_scale = 0.0f;         // scores = scale·q·k; 0 → 1/√head_dim

  PositionEncoding position_encoding = PositionEncoding::sinusoidal_interleaved;
  std::int64_t position_offset = 0;     // position index given to the first token
  // M2M100/NLLB's create_position_ids_from_input_ids: a pad_id token takes position pad_id
  // (model/token_positions.hpp); in a source the tokens after it are not moved on.
  bool pad_positions = false;
  bool shared_position_table = false;   // learned: the decoder reads the encoder's table
  float embedding_scale = 1.0f;         // token embeddings are multiplied by this
  RelativeAttention relative_attention = RelativeAttention::none;
  std::int64_t relative_attention_buckets = 0;       // t5_bias: buckets (both directions)
  std::int64_t relative_attention_max_distance = 0;  // t5_bias: distance of the last bucket;
                                                     // shaw: the clipping distance R
  // The decoder's first step embeds nothing: a zero vector (+ its position), whatever the
  // start token (Marian).
  bool decoder_start_zero_embedding = false;
  float decoder_output_scale = 1.0f;    // the last decoder state is scaled before the
                                        // output projection (tied T5: d_model^−0.5)

  bool shared_embeddings = false;       // one table for source and target tokens
  bool tie_output_projection = false;   // output projection = target embedding table
  bool output_bias = false;

  std::int32_t pad_id = 0;
  std::int32_t bos_id = 1;   // kNoToken: the model has none (CTranslate2's Marian conversion)
  std::int32_t eos_id = 2;
  std::int32_t unk_id = 3;  // in the target vocabulary
  std::int32_t decoder_start_id = 1;
  // Text front-ends add these to every source (CTranslate2's add_source_bos/eos).
  bool add_source_bos = false;
  bool add_source_eos = false;
  // Which cross-attention return_attention reports (CTranslate2's decoder attributes):
  // the layer (negative: from the end) and how many heads, from the first, are averaged
  // (0: all of them).
  std::int64_t alignment_layer = -1;
  std::int64_t alignment_heads = 1;
  std::string name;

  std::int64_t attention_width() const { return attention_dim > 0 ? attention_dim : d_model; }
  std::int64_t head_dim() const { return attention_width() / num_heads; }
  std::int64_t alignment_layer_index() const { return alignment_layer < 0 ? decoder_layers + alignment_layer : alignment_layer; }
  std::int64_t alignment_head_count() const { return alignment_heads == 0 ? num_heads : alignment_heads; }

  // Parses and validates; errors name `origin` and the field.
  static ModelConfig from_json(std::string_view text, const std::string& origin);
  std::string to_json() const;
  // Throws attend::Error naming `origin` and the field at fault.
  void validate(const std::string& origin) const;
};

const char* norm_placement_name(NormPlacement p);
const char* position_encoding_name(PositionEncoding p);
const char* norm_type_name(NormType n);
const char* relative_attention_name(RelativeAttention r);

}  // namespace attend::runtime
