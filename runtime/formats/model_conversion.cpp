#include "formats/model_conversion.hpp"

#include <filesystem>

#include "attend/error.hpp"
#include "formats/ct2_model.hpp"
#include "formats/model_io.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;

ConversionReport convert_model(const std::string& input_dir, const std::string& output_dir) {
  if (detect_model_format(input_dir) == ModelFormat::attend)
    throw error_of(input_dir, ": already in attend's format (config.json + model.safetensors)");
  if (fs::exists(output_dir) && !fs::is_empty(output_dir)) throw error_of(output_dir, ": exists and is not empty");
  const Ct2Model m = read_ct2_model(input_dir);
  save_model(output_dir, m.config, *m.tensors);
  ConversionReport r;
  r.input_format = m.report.format;
  for (const std::string& name : m.tensors->names()) {
    ++r.tensors;
    r.parameters += m.tensors->find(name)->elements();
  }
  for (const std::string& file : {m.source_vocabulary, m.target_vocabulary}) {
    const fs::path to = fs::path(output_dir) / fs::path(file).filename();
    if (fs::exists(to)) continue;  // a shared vocabulary is one file
    fs::copy_file(file, to);
    r.copied_files.push_back(to.filename().string());
  }
  return r;
}

}  // namespace attend::runtime
