#include "formats/ct2_model_file.hpp"

#include <cstring>

#include "attend/error.hpp"
#include "formats/tensor_source.hpp"

namespace attend::runtime {
namespace {

constexpr std::uint32_t kMaxVersion = 6;

// Reads little-endian values, checking every read against the end of the file.
class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const std::string& origin) : bytes_(bytes), origin_(origin) {}

  template <class T>
  T value(const char* what) {
    T v;
    std::memcpy(&v, take(sizeof v, what), sizeof v);
    return v;
  }

  std::string string(const char* what) {
    const auto n = value<std::uint16_t>(what);
    const std::byte* p = take(n, what);
    std::string s(reinterpret_cast<const char*>(p), n);
    if (!s.empty() && s.back() == '\0') s.pop_back();  // written with its terminating NUL
    if (s.find('\0') != std::string::npos) throw error_of(origin_, ": ", what, " at byte ", pos_ - n, " holds a NUL");
    return s;
  }

  const std::byte* take(std::size_t n, const char* what) {
    if (n > bytes_.size() - pos_)
      throw error_of(origin_, ": truncated: reading ", what, " (", n, " bytes at byte ", pos_, ") runs past the end of the ",
                     bytes_.size(), "-byte file");
    const std::byte* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }

 private:
  std::span<const std::byte> bytes_;
  const std::string& origin_;
  std::size_t pos_ = 0;
};

Ct2DType dtype_from_id(std::uint8_t id, const std::string& origin, const std::string& name) {
  switch (id) {
    case 0: return Ct2DType::f32;
    case 1: return Ct2DType::i8;
    case 2: return Ct2DType::i16;
    case 3: return Ct2DType::i32;
    case 4: return Ct2DType::f16;
    case 5: return Ct2DType::bf16;
  }
  throw error_of(origin, ": variable '", name, "' has unknown dtype id ", int(id), " (expected 0–5)");
}

// Before version 4 the dtype was implied by the item size (CTranslate2's own rule).
Ct2DType dtype_from_item_size(std::uint8_t size, const std::string& origin, const std::string& name) {
  switch (size) {
    case 4: return Ct2DType::f32;
    case 2: return Ct2DType::i16;
    case 1: return Ct2DType::i8;
  }
  throw error_of(origin, ": variable '", name, "' has item size ", int(size), " (expected 1, 2 or 4)");
}

}  // namespace

const char* ct2_dtype_name(Ct2DType t) {
  switch (t) {
    case Ct2DType::f32: return "float32";
    case Ct2DType::i8: return "int8";
    case Ct2DType::i16: return "int16";
    case Ct2DType::i32: return "int32";
    case Ct2DType::f16: return "float16";
    case Ct2DType::bf16: return "bfloat16";
  }
  return "?";
}

std::size_t ct2_dtype_size(Ct2DType t) {
  switch (t) {
    case Ct2DType::f32:
    case Ct2DType::i32: return 4;
    case Ct2DType::i16:
    case Ct2DType::f16:
    case Ct2DType::bf16: return 2;
    case Ct2DType::i8: return 1;
  }
  return 1;
}

std::int64_t Ct2Variable::elements() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string Ct2Variable::shape_string() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s.append(i ? ", " : "").append(std::to_string(shape[i]));
  return s + "]";
}

double Ct2Variable::scalar(const std::string& origin) const {
  if (elements() != 1 || bytes != ct2_dtype_size(dtype))
    throw error_of(origin, ": attribute '", name, "' has shape ", shape_string(), " (", bytes,
                   " bytes), expected a single value");
  switch (dtype) {
    case Ct2DType::f32: {
      float v;
      std::memcpy(&v, data, 4);
      return v;
    }
    case Ct2DType::i8: return static_cast<double>(static_cast<std::int8_t>(std::to_integer<int>(data[0])));
    case Ct2DType::i16: {
      std::int16_t v;
      std::memcpy(&v, data, 2);
      return v;
    }
    case Ct2DType::i32: {
      std::int32_t v;
      std::memcpy(&v, data, 4);
      return v;
    }
    case Ct2DType::f16:
    case Ct2DType::bf16: {
      TensorRecord t;
      t.dtype = dtype == Ct2DType::f16 ? DType::f16 : DType::bf16;
      t.data = data;
      float v = 0;
      to_f32(t, {&v, 1});
      return v;
    }
  }
  throw error_of(origin, ": attribute '", name, "' has an unknown dtype");
}

const Ct2Variable* Ct2ModelFile::find(const std::string& name) const {
  if (auto it = variables.find(name); it != variables.end()) return &it->second;
  if (auto a = aliases.find(name); a != aliases.end())
    if (auto it = variables.find(a->second); it != variables.end()) return &it->second;
  return nullptr;
}

Ct2ModelFile parse_ct2_model(std::span<const std::byte> file, const std::string& origin) {
  Reader in(file, origin);
  Ct2ModelFile m;
  m.version = in.value<std::uint32_t>("the format version");
  if (m.version < 1 || m.version > kMaxVersion)
    throw error_of(origin, ": format version ", m.version, " is not one attend reads (1 to ", kMaxVersion, ")");
  if (m.version >= 2) {
    m.spec = in.string("the spec name");
    m.revision = in.value<std::uint32_t>("the spec revision");
  }
  const auto count = in.value<std::uint32_t>("the variable count");
  for (std::uint32_t i = 0; i < count; ++i) {
    Ct2Variable v;
    v.name = in.string("a variable name");
    const auto rank = in.value<std::uint8_t>("a rank");
    std::uint64_t elements = 1;
    for (int d = 0; d < rank; ++d) {
      const auto dim = in.value<std::uint32_t>("a dimension");
      v.shape.push_back(dim);
      if (dim != 0 && elements > (std::uint64_t{1} << 40) / dim)  // checked before it could wrap
        throw error_of(origin, ": variable '", v.name, "' is impossibly large");
      elements *= dim;
    }
    std::uint64_t bytes = 0;
    if (m.version >= 4) {
      v.dtype = dtype_from_id(in.value<std::uint8_t>("a dtype id"), origin, v.name);
      bytes = in.value<std::uint32_t>("a byte count");
    } else {
      const auto size = in.value<std::uint8_t>("an item size");
      v.dtype = dtype_from_item_size(size, origin, v.name);
      bytes = std::uint64_t{in.value<std::uint32_t>("an element count")} * size;
    }
    if (bytes != elements * ct2_dtype_size(v.dtype))
      throw error_of(origin, ": variable '", v.name, "' has ", bytes, " bytes but shape ", v.shape_string(), " of ",
                     ct2_dtype_name(v.dtype), " needs ", elements * ct2_dtype_size(v.dtype));
    v.offset = in.position();
    v.data = in.take(static_cast<std::size_t>(bytes), ("the data of '" + v.name + "'").c_str());
    v.bytes = static_cast<std::size_t>(bytes);
    if (m.variables.count(v.name)) throw error_of(origin, ": variable '", v.name, "' appears twice");
    m.variables.emplace(v.name, std::move(v));
  }
  if (m.version >= 3) {
    const auto aliases = in.value<std::uint32_t>("the alias count");
    for (std::uint32_t i = 0; i < aliases; ++i) {
      std::string alias = in.string("an alias");
      std::string target = in.string("an alias target");
      if (!m.variables.count(target))
        throw error_of(origin, ": alias '", alias, "' names variable '", target, "', which the file does not hold");
      m.aliases.emplace(std::move(alias), std::move(target));
    }
  }
  if (in.remaining() != 0)
    throw error_of(origin, ": ", in.remaining(), " unexpected bytes after the last ", m.version >= 3 ? "alias" : "variable");
  return m;
}

}  // namespace attend::runtime
