// A test-only writer of CTranslate2 model.bin files in any format version (1–6), and of
// small random Transformers in CTranslate2's layout.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/ct2_model_file.hpp"

namespace attend::test {

struct Ct2Out {
  std::string name;
  std::vector<std::int64_t> shape;
  runtime::Ct2DType dtype = runtime::Ct2DType::f32;
  std::vector<std::uint8_t> bytes;
};

struct Ct2File {
  std::uint32_t version = 6;
  std::string spec = "TransformerSpec";
  std::uint32_t revision = 7;
  std::vector<Ct2Out> variables;
  std::vector<std::pair<std::string, std::string>> aliases;
};

// The bytes of a model.bin (before v4 the dtype is written as an item size: only f32,
// i16 and i8 are possible there).
std::vector<std::uint8_t> ct2_bytes(const Ct2File& f);
// A model.bin read back into the writer's form (variables in file order), so tests can
// mutate a real file and write it out again.
Ct2File read_ct2_file(const std::string& path);
void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes);

Ct2Out f32_variable(const std::string& name, std::vector<std::int64_t> shape, const std::vector<float>& values);
Ct2Out scalar_i8(const std::string& name, std::int8_t v);
Ct2Out scalar_i16(const std::string& name, std::int16_t v);
Ct2Out scalar_f32(const std::string& name, float v);

}  // namespace attend::test
