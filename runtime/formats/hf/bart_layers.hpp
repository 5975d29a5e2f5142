// What the BART-shaped families share (Marian, BART, mBART, M2M100/NLLB): the config.json
// fields of their stacks, and the layers' tensor names — model.{encoder,decoder}.layers.N.
// {self_attn.{q,k,v,out}_proj, self_attn_layer_norm, encoder_attn.*, encoder_attn_layer_norm,
// fc1, fc2, final_layer_norm} — mapped onto attend's.
#pragma once

#include <string>

#include "formats/json_file.hpp"
#include "formats/hf/activation.hpp"
#include "formats/hf/tensor_map.hpp"
#include "model/model_config.hpp"

namespace attend::runtime {

// d_model, heads, feed-forward size and layers of both stacks (attend runs stacks of
// equal heads and feed-forward size), activation_function, vocab_size,
// max_position_embeddings, the special token ids, scale_embedding.
void read_bart_stacks(const JsonFile& config, ModelConfig& c);

// Every layer of both stacks; `prefix` is "model." (the stored names' prefix).
void map_bart_layers(TensorMap& map, const ModelConfig& c, const std::string& prefix);

// A norm (weight, and bias for LayerNorm).
void map_norm(TensorMap& map, const std::string& attend, const std::string& stored, bool bias = true);
// A linear layer (weight, and bias if `bias`).
void map_linear(TensorMap& map, const std::string& attend, const std::string& stored, bool bias = true);

// Tensors any of these checkpoints may carry beside the model (buffers of older
// transformers versions): never an error.
bool is_bart_buffer(const std::string& stored);

}  // namespace attend::runtime
