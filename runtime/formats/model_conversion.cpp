#include "formats/model_conversion.hpp"

#include <unistd.h>

#include <filesystem>

#include "attend/error.hpp"
#include "formats/ct2_model.hpp"
#include "formats/model_io.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;

namespace {

// A new directory beside `target` (same file system, so it can be renamed into place),
// hidden and named after it: `.OUT.attend-partial-PID-N`, with the permissions a new
// directory gets here.
fs::path temporary_beside(const fs::path& target) {
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  fs::create_directories(parent);
  for (int n = 0;; ++n) {
    std::string name(1, '.');
    name.append(target.filename().string()).append(".attend-partial-");
    name.append(std::to_string(::getpid())).append("-").append(std::to_string(n));
    if (fs::create_directory(parent / name)) return parent / name;
  }
}

// Writes the converted model into `dir`; returns what it wrote.
ConversionReport write_converted(const Ct2Model& m, const fs::path& dir) {
  save_model(dir.string(), m.config, *m.tensors);
  ConversionReport r;
  r.input_format = m.report.format;
  for (const std::string& name : m.tensors->names()) {
    ++r.tensors;
    r.parameters += m.tensors->find(name)->elements();
  }
  for (const std::string& file : {m.source_vocabulary, m.target_vocabulary}) {
    const fs::path to = dir / fs::path(file).filename();
    if (fs::exists(to)) continue;  // a shared vocabulary is one file
    fs::copy_file(file, to);
    r.copied_files.push_back(to.filename().string());
  }
  return r;
}

}  // namespace

// Written into a temporary directory and renamed to `output_dir` at the end: a failure
// half-way (a full disk, a kill) never leaves a partial model under the name asked for.
ConversionReport convert_model(const std::string& input_dir, const std::string& output_dir) {
  if (detect_model_format(input_dir) == ModelFormat::attend)
    throw error_of(input_dir, ": already in attend's format (config.json + model.safetensors)");
  if (fs::exists(output_dir) && !fs::is_empty(output_dir)) throw error_of(output_dir, ": exists and is not empty");
  const Ct2Model m = read_ct2_model(input_dir);
  fs::path target = fs::path(output_dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();  // "out/" names "out"
  const fs::path temporary = temporary_beside(target);
  try {
    ConversionReport r = write_converted(m, temporary);
    fs::rename(temporary, target);  // replaces an empty directory of that name
    return r;
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(temporary);
    throw error_of(output_dir, ": cannot write the converted model (", e.code().message(), ")");
  } catch (...) {
    fs::remove_all(temporary);
    throw;
  }
}

}  // namespace attend::runtime
