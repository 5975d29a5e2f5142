#include "formats/encoder_io.hpp"

#include <filesystem>

#include "attend/error.hpp"
#include "formats/ct2_encoder.hpp"
#include "formats/model_io.hpp"

namespace attend::runtime {

bool is_encoder_directory(const std::string& dir) {
  return is_hf_encoder_directory(dir) || is_ct2_encoder_directory(dir);
}

HfEncoderFiles read_encoder(const std::string& dir) {
  require_model_directory(dir);
  if (is_ct2_encoder_directory(dir)) return read_ct2_encoder(dir);
  if (!is_hf_encoder_directory(dir) && (std::filesystem::exists(std::filesystem::path(dir) / "model.bin") ||
                                        std::filesystem::exists(std::filesystem::path(dir) / "config.json"))) {
    // An encoder-decoder (attend's format or CTranslate2's) is not refused as a broken encoder.
    bool encoder_decoder = false;
    try {
      encoder_decoder = detect_model_format(dir) == ModelFormat::ctranslate2 || !read_attend_model(dir).tensors->names().empty();
    } catch (const Error&) {
    }
    if (encoder_decoder) throw error_of(dir, ": an encoder-decoder model, not an encoder-only one — use `attend translate`");
  }
  return read_hf_encoder(dir);
}

std::shared_ptr<const EncoderModel> load_encoder(const std::string& dir, const LoadOptions& options) {
  HfEncoderFiles f = read_encoder(dir);
  return EncoderModel::build(std::move(f.config), std::move(f.tensors), std::move(f.report), options);
}

}  // namespace attend::runtime
