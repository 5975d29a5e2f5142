// EncoderModel::build: every tensor checked against the configuration, the layers'
// GEMM weights packed in the compute type, the token table held in it, the rest fp32.
#include "model/encoder_model.hpp"

#include "attend/error.hpp"
#include "model/weight_reader.hpp"

namespace attend::runtime {

std::shared_ptr<const EncoderModel> EncoderModel::build(EncoderConfig config, std::shared_ptr<const TensorSource> source,
                                                        LoadReport report, const LoadOptions& options) {
  config.validate(source->origin());
  std::shared_ptr<EncoderModel> m(new EncoderModel());
  m->config_ = std::move(config);
  m->isa_ = options.isa;
  m->source_ = source;
  const EncoderConfig& c = m->config_;
  const TensorRecord* first = source->find("encoder.layers.0.self_attn.qkv_proj.weight");
  m->compute_type_ = resolve_compute_type(options.compute_type, first ? first->dtype : DType::f32, options.cpu());
  name_kernel(m->compute_type_, options.isa);
  const Packing packing{m->compute_type_.gemm_weights, options.isa};
  const Packing heads{ops::WeightType::f32, options.isa};
  WeightReader r(*source, expected_encoder_tensors(c));
  r.check_all();

  const std::int64_t D = c.d_model;
  m->token_embedding = r.table("encoder.embed_tokens.weight", m->compute_type_.embedding_tables);
  std::vector<float> positions = r.floats("encoder.embed_positions.weight");
  if (c.type_vocab_size > 0) {
    m->type_deltas = r.floats("encoder.embed_types.weight");
    for (std::int64_t p = 0; p < c.position_rows; ++p)
      for (std::int64_t k = 0; k < D; ++k) positions[p * D + k] += m->type_deltas[k];
    for (std::int64_t t = c.type_vocab_size - 1; t >= 0; --t)
      for (std::int64_t k = 0; k < D; ++k) m->type_deltas[t * D + k] -= m->type_deltas[k];
  }
  m->positions = Table(std::move(positions), c.position_rows, D);
  m->embedding_norm = r.norm("encoder.layernorm_embedding", NormType::layer_norm);
  for (std::int64_t i = 0; i < c.layers; ++i) {
    const std::string p = tensor_names::encoder_layer(i);
    EncoderLayer l;
    l.qkv = r.linear(p + "self_attn.qkv_proj", true, packing);
    l.out = r.linear(p + "self_attn.out_proj", true, packing);
    l.self_attn_norm = r.norm(p + "self_attn_layer_norm", NormType::layer_norm);
    l.fc1 = r.linear(p + "fc1", true, packing);
    l.fc2 = r.linear(p + "fc2", true, packing);
    l.ffn_norm = r.norm(p + "final_layer_norm", NormType::layer_norm);
    m->layers.push_back(std::move(l));
  }
  if (c.final_norm) m->final_norm = r.norm("encoder.layer_norm", NormType::layer_norm);
  if (c.pooler) m->pooler = r.linear("pooler.dense", true, heads);
  if (c.classifier == ClassifierHead::dense_tanh || c.classifier == ClassifierHead::dense_relu)
    m->classifier_dense = r.linear("classifier.dense", true, heads);
  if (c.classifier != ClassifierHead::none) m->classifier_out = r.linear("classifier.out_proj", true, heads);
  for (size_t i = 0; i < c.dense.size(); ++i) m->dense.push_back(r.linear("dense." + std::to_string(i), c.dense[i].bias, heads));
  r.reject_unexpected();

  report.parameters = r.parameters();
  report.checks.push_back("every tensor the configuration implies is present, with the implied shape");
  report.checks.push_back("no unexpected tensors");
  report.checks.push_back("every weight value is finite");
  report.checks.push_back(std::string("layer GEMM weights packed as ") + ops::weight_type_name(packing.type) + " for " +
                          ops::isa_name(packing.isa) + " (" + ops::gemm_kernel_name(packing.isa, packing.type) +
                          "); heads (pooler, classifier, Dense) fp32");
  report.checks.push_back(std::string("token embedding table held as ") +
                          ops::weight_type_name(m->compute_type_.embedding_tables));
  m->report_ = std::move(report);
  return_freed_memory(*source);
  return m;
}

}  // namespace attend::runtime
