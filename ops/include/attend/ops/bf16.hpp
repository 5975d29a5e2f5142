// bfloat16: the top 16 bits of an IEEE float (same exponent range, 8 significant bits).
//
// Values are held as raw bits in std::uint16_t. Rounding is to nearest, ties to even,
// everywhere attend narrows (GEMM weights, decoding caches); a NaN stays a quiet NaN
// (0x7fc0, as the vector kernels make it) rather than rounding into the infinity beside
// it. Widening is exact.
#pragma once

#include <cstdint>
#include <cstring>

#include "attend/ops/types.hpp"

namespace attend::ops {

inline std::uint16_t bf16_from_float(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float float_from_bf16(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t{b} << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// y = x rounded to bf16, element-wise; x and y are [rows, cols] with their own leading
// dimensions. Throws attend::Error on mismatched shapes or null data.
void convert_to_bf16(ConstMatrix x, MatrixView<std::uint16_t> y, int threads);

}  // namespace attend::ops
