// An encoder-only transformer ready to run (the BERT family): configuration plus
// weights, the layers' GEMM weights packed in the compute type. The second kind of
// model beside the encoder-decoder (model.hpp), sharing its layer, linear, norm and
// table types, the weight reader and the compute types. Immutable once built, so many
// threads can share it (each with its own EncoderWorkspace).
#pragma once

#include <memory>
#include <vector>

#include "model/encoder_config.hpp"
#include "model/model.hpp"

namespace attend::runtime {

class EncoderModel {
 public:
  // From attend's encoder tensor names (expected_encoder_tensors); `source` is kept
  // alive for the tables read in place. Throws attend::Error naming the origin and the
  // tensor.
  static std::shared_ptr<const EncoderModel> build(EncoderConfig config, std::shared_ptr<const TensorSource> source,
                                                   LoadReport report, const LoadOptions& options = {});

  const EncoderConfig& config() const { return config_; }
  const LoadReport& report() const { return report_; }
  ops::Isa isa() const { return isa_; }
  const ComputeType& compute_type() const { return compute_type_; }

  Table token_embedding;            // in the compute type's table type
  // fp32 [position_rows, D] with token type 0's vector added to every row: a sequence
  // of type 0 (every RoBERTa input, every single BERT sentence) then costs no extra
  // add, and type t adds type_deltas[t] = types[t] − types[0].
  Table positions;
  std::vector<float> type_deltas;   // [type_vocab_size, D] (row 0 zero), or empty
  LayerNormWeights embedding_norm;
  std::vector<EncoderLayer> layers;
  LayerNormWeights final_norm;      // pre-LN stacks only
  // Heads, in fp32 whatever the compute type (they run on one row per sentence).
  Linear pooler;                    // BERT's pooler (dense, then tanh), or empty
  Linear classifier_dense, classifier_out;
  std::vector<Linear> dense;        // sentence-transformers Dense modules, in order

 private:
  EncoderModel() = default;
  EncoderConfig config_;
  LoadReport report_;
  ops::Isa isa_ = ops::Isa::sse2;
  ComputeType compute_type_;
  std::shared_ptr<const TensorSource> source_;
};

}  // namespace attend::runtime
