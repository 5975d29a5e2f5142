// CTranslate2's model.bin, format versions 1 to 6 (python/ctranslate2/specs/model_spec.py):
//
//   u32 version
//   v ≥ 2: string spec name, u32 spec revision           (a string: u16 length incl. NUL, bytes, NUL)
//   u32 variable count, then per variable:
//     string name, u8 rank, u32 dims[rank],
//     v ≥ 4: u8 dtype id (0 f32, 1 i8, 2 i16, 3 i32, 4 f16, 5 bf16), u32 byte count
//     v < 4: u8 item size (4 f32, 2 i16, 1 i8),           u32 element count
//     the data
//   v ≥ 3: u32 alias count, then (string alias, string target) pairs
//
// Everything is little-endian. Parsing is a pure function over the bytes (fuzzed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace attend::runtime {

enum class Ct2DType { f32, i8, i16, i32, f16, bf16 };
const char* ct2_dtype_name(Ct2DType t);
std::size_t ct2_dtype_size(Ct2DType t);

struct Ct2Variable {
  std::string name;
  std::vector<std::int64_t> shape;  // empty for scalars (attributes)
  Ct2DType dtype = Ct2DType::f32;
  const std::byte* data = nullptr;  // any alignment
  std::size_t bytes = 0;
  std::size_t offset = 0;           // within the file

  std::int64_t elements() const;
  bool is_scalar() const { return shape.empty(); }
  // The value of an attribute holding exactly one number (shape [] or [1]; any dtype),
  // as a double. Reads only the variable's own bytes: any other shape (an empty [0],
  // a list [n]) throws attend::Error naming `origin`, the variable and its shape.
  double scalar(const std::string& origin) const;
  std::string shape_string() const;
};

struct Ct2ModelFile {
  std::uint32_t version = 0;
  std::string spec;              // "" before version 2
  std::uint32_t revision = 1;
  std::map<std::string, Ct2Variable> variables;
  std::map<std::string, std::string> aliases;  // alias → variable it names

  // The variable `name` names, following an alias; null if neither exists.
  const Ct2Variable* find(const std::string& name) const;
};

// Throws attend::Error naming `origin` and the variable: unknown version or dtype, a
// byte count that disagrees with shape × dtype, a read past the end, an alias to a
// missing variable, trailing bytes.
Ct2ModelFile parse_ct2_model(std::span<const std::byte> file, const std::string& origin);

}  // namespace attend::runtime
