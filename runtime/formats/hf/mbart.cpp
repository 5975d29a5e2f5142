// MBartForConditionalGeneration (mBART-50, mBART-25), as transformers' modeling_mbart runs
// it: pre-norm layers with final layer norms on both stacks, layernorm_embedding after
// the token and position embeddings, token embeddings scaled by √d_model when
// scale_embedding, learned positions stored with 2 extra rows (a token's position is
// its index + 2), one table shared by both stacks and (tie_word_embeddings) the output,
// plus final_logits_bias. Decoding starts from </s> and the target language is forced as
// the first generated token (forced_bos_token_id).
// BartForConditionalGeneration (bart-large, bart-large-cnn, distilbart) is the same but
// post-norm, without the final layer norms, and generate() forces <s> first.
#include "attend/error.hpp"
#include "formats/hf/bart_layers.hpp"
#include "formats/hf/seq2seq.hpp"

namespace attend::runtime {
namespace {

constexpr std::int64_t kPositionOffset = 2;  // MBartLearnedPositionalEmbedding.offset

void read_bart_family(const JsonFile& config, TensorMap& map, ModelConfig& c, bool pre_norm) {
  read_bart_stacks(config, c);
  c.norm_placement = pre_norm ? NormPlacement::pre : NormPlacement::post;
  c.encoder_final_norm = c.decoder_final_norm = pre_norm;
  c.layernorm_embedding = true;
  c.shared_embeddings = true;
  c.tie_output_projection = config.flag_or("tie_word_embeddings", true);
  c.output_bias = map.has("final_logits_bias");  // a buffer transformers saves; zeros if absent

  c.position_encoding = PositionEncoding::learned;
  c.position_offset = kPositionOffset;
  c.shared_position_table = false;
  const std::int64_t rows = c.max_positions + kPositionOffset;
  for (const char* stack : {"encoder", "decoder"}) {
    const std::string stored = std::string("model.") + stack + ".embed_positions.weight";
    const TensorRecord& t = map.stored(stored);
    if (t.shape.size() != 2 || t.shape[0] != rows || t.shape[1] != c.d_model)
      throw error_of(map.origin(), ": ", stored, " is ", t.shape_string(), ", not [", rows, ", ", c.d_model,
                     "] (max_position_embeddings + 2 rows of d_model)");
    map.alias(std::string(stack) + ".embed_positions.weight", stored);
    map_norm(map, std::string(stack) + ".layernorm_embedding", std::string("model.") + stack + ".layernorm_embedding");
    if (pre_norm) map_norm(map, std::string(stack) + ".layer_norm", std::string("model.") + stack + ".layer_norm");
  }

  map.alias("encoder.embed_tokens.weight", map.has("model.shared.weight") ? "model.shared.weight" : "model.encoder.embed_tokens.weight");
  map_bart_layers(map, c, "model.");
  if (!c.tie_output_projection) map.alias("output_projection.weight", "lm_head.weight");
  if (c.output_bias) map.alias("output_projection.bias", "final_logits_bias", {c.tgt_vocab_size});
}

void read_mbart(const JsonFile& config, TensorMap& map, ModelConfig& c) { read_bart_family(config, map, c, true); }
void read_bart(const JsonFile& config, TensorMap& map, ModelConfig& c) { read_bart_family(config, map, c, false); }

bool mbart_ignorable(const std::string& stored) {
  return stored == "model.encoder.embed_tokens.weight" || stored == "model.decoder.embed_tokens.weight" ||
         stored == "lm_head.weight" || is_bart_buffer(stored);
}

}  // namespace

const Seq2SeqFamily& mbart_family() {
  static const Seq2SeqFamily f{"mbart", "MBartForConditionalGeneration, MBartModel", read_mbart, mbart_ignorable};
  return f;
}

const Seq2SeqFamily& bart_family() {
  static const Seq2SeqFamily f{"bart", "BartForConditionalGeneration, BartModel", read_bart, mbart_ignorable};
  return f;
}

}  // namespace attend::runtime
