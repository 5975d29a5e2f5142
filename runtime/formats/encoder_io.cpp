#include "formats/encoder_io.hpp"

#include <filesystem>

#include "attend/error.hpp"
#include "formats/ct2_encoder.hpp"

namespace attend::runtime {

bool is_encoder_directory(const std::string& dir) {
  return is_hf_encoder_directory(dir) || is_ct2_encoder_directory(dir);
}

HfEncoderFiles read_encoder(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw error_of(dir, ": model directory does not exist");
  if (is_ct2_encoder_directory(dir)) return read_ct2_encoder(dir);
  return read_hf_encoder(dir);
}

std::shared_ptr<const EncoderModel> load_encoder(const std::string& dir, const LoadOptions& options) {
  HfEncoderFiles f = read_encoder(dir);
  return EncoderModel::build(std::move(f.config), std::move(f.tensors), std::move(f.report), options);
}

}  // namespace attend::runtime
