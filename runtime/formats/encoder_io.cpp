#include "formats/encoder_io.hpp"

#include "attend/error.hpp"
#include "formats/ct2_encoder.hpp"
#include "formats/model_kind.hpp"

namespace attend::runtime {

bool is_encoder_directory(const std::string& dir) {
  try {
    return is_encoder_kind(detect_model(dir));
  } catch (const Error&) {
    return false;
  }
}

HfEncoderFiles read_encoder(const std::string& dir) {
  const ModelFiles files = ModelFiles::directory(dir);
  const ModelKind kind = detect_model(files);
  require_model_kind(files, kind, /*encoder=*/true);
  return kind == ModelKind::ct2_encoder ? read_ct2_encoder(dir) : read_hf_encoder(dir);
}

std::shared_ptr<const EncoderModel> load_encoder(const std::string& dir, const LoadOptions& options) {
  HfEncoderFiles f = read_encoder(dir);
  return EncoderModel::build(std::move(f.config), std::move(f.tensors), std::move(f.report), options);
}

}  // namespace attend::runtime
