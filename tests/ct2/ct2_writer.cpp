#include "ct2_writer.hpp"

#include <cstring>
#include <algorithm>
#include <fstream>
#include <iterator>

namespace attend::test {
namespace {

// resize + memcpy rather than insert(): GCC 12 misreads the latter (-Wstringop-overflow).
void put(std::vector<std::uint8_t>& out, const void* p, std::size_t n) {
  if (n == 0) return;
  const std::size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, p, n);
}
template <class T>
void put(std::vector<std::uint8_t>& out, T v) {
  put(out, &v, sizeof v);
}
void put_string(std::vector<std::uint8_t>& out, const std::string& s) {
  put<std::uint16_t>(out, static_cast<std::uint16_t>(s.size() + 1));
  put(out, s.data(), s.size());
  put<std::uint8_t>(out, 0);
}

}  // namespace

std::vector<std::uint8_t> ct2_bytes(const Ct2File& f) {
  std::vector<std::uint8_t> out;
  put<std::uint32_t>(out, f.version);
  if (f.version >= 2) {
    put_string(out, f.spec);
    put<std::uint32_t>(out, f.revision);
  }
  put<std::uint32_t>(out, static_cast<std::uint32_t>(f.variables.size()));
  for (const Ct2Out& v : f.variables) {
    put_string(out, v.name);
    put<std::uint8_t>(out, static_cast<std::uint8_t>(v.shape.size()));
    for (auto d : v.shape) put<std::uint32_t>(out, static_cast<std::uint32_t>(d));
    const auto size = runtime::ct2_dtype_size(v.dtype);
    if (f.version >= 4) {
      put<std::uint8_t>(out, static_cast<std::uint8_t>(v.dtype));
      put<std::uint32_t>(out, static_cast<std::uint32_t>(v.bytes.size()));
    } else {
      put<std::uint8_t>(out, static_cast<std::uint8_t>(size));
      put<std::uint32_t>(out, static_cast<std::uint32_t>(v.bytes.size() / size));
    }
    put(out, v.bytes.data(), v.bytes.size());
  }
  if (f.version >= 3) {
    put<std::uint32_t>(out, static_cast<std::uint32_t>(f.aliases.size()));
    for (const auto& [alias, target] : f.aliases) {
      put_string(out, alias);
      put_string(out, target);
    }
  }
  return out;
}

Ct2File read_ct2_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const runtime::Ct2ModelFile m =
      runtime::parse_ct2_model({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, path);
  Ct2File f{m.version, m.spec, m.revision, {}, {}};
  for (const auto& [name, v] : m.variables) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(v.data);
    f.variables.push_back({name, v.shape, v.dtype, std::vector<std::uint8_t>(data, data + v.bytes)});
  }
  std::sort(f.variables.begin(), f.variables.end(), [&](const Ct2Out& a, const Ct2Out& b) {
    return m.variables.at(a.name).offset < m.variables.at(b.name).offset;
  });
  for (const auto& [alias, target] : m.aliases) f.aliases.push_back({alias, target});
  return f;
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

Ct2Out f32_variable(const std::string& name, std::vector<std::int64_t> shape, const std::vector<float>& values) {
  Ct2Out v{name, std::move(shape), runtime::Ct2DType::f32, {}};
  v.bytes.resize(values.size() * 4);
  std::memcpy(v.bytes.data(), values.data(), v.bytes.size());
  return v;
}

Ct2Out scalar_i8(const std::string& name, std::int8_t x) {
  return {name, {}, runtime::Ct2DType::i8, {static_cast<std::uint8_t>(x)}};
}
Ct2Out scalar_i16(const std::string& name, std::int16_t x) {
  Ct2Out v{name, {}, runtime::Ct2DType::i16, std::vector<std::uint8_t>(2)};
  std::memcpy(v.bytes.data(), &x, 2);
  return v;
}
Ct2Out scalar_f32(const std::string& name, float x) {
  Ct2Out v{name, {}, runtime::Ct2DType::f32, std::vector<std::uint8_t>(4)};
  std::memcpy(v.bytes.data(), &x, 4);
  return v;
}

}  // namespace attend::test
