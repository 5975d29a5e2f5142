#include "formats/tensor_source.hpp"

#include <cstring>

#include "attend/error.hpp"

namespace attend::runtime {
namespace {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;  // ±0
  } else {        // subnormal half: normalise
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bfloat_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

const char* dtype_name(DType d) {
  switch (d) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::i8: return "I8";
  }
  return "?";
}

std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::f32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
    case DType::i8: return 1;
  }
  return 0;
}

std::int64_t TensorRecord::elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string TensorRecord::shape_string() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void to_f32(const TensorRecord& t, std::span<float> out) {
  const std::size_t n = static_cast<std::size_t>(t.elements());
  if (t.data == nullptr && n > 0)
    throw error_of("internal: tensor '", t.name, "' has no data (not acquired from its source, or released)");
  switch (t.dtype) {
    case DType::f32:
      std::memcpy(out.data(), t.data, n * sizeof(float));
      return;
    case DType::f16:
    case DType::bf16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, t.data + 2 * i, sizeof h);
        out[i] = t.dtype == DType::f16 ? half_to_float(h) : bfloat_to_float(h);
      }
      return;
    case DType::i8: {
      const std::size_t rows = t.shape.empty() ? 1 : static_cast<std::size_t>(t.shape[0]);
      const std::size_t cols = rows ? n / rows : 0;
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
          out[r * cols + c] = static_cast<float>(static_cast<std::int8_t>(t.data[r * cols + c])) / t.scales[r];
      return;
    }
  }
}

std::vector<float> to_f32(const TensorRecord& t) {
  std::vector<float> out(static_cast<std::size_t>(t.elements()));
  to_f32(t, out);
  return out;
}

}  // namespace attend::runtime
