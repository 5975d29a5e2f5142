// Peak int8 dot-product throughput on AMX tiles: tdpbsud into 4 independent 16×16 int32
// tiles from 2 + 2 operand tiles (the GEMM kernel's 2 × 2 blocking), operands loaded
// once, so only the tile unit's rate counts (16 × 16 × 64 products per instruction,
// counted as 2 operations each). Compiled with AMX flags; called only when the CPU has
// AMX and the process has the tile state (ops::isa_available(avx512_amx) asks for it).
#include <immintrin.h>

#include <cstdint>

#include "machine_limits_loops.hpp"

namespace attend::bench::loops {
namespace {

struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

}  // namespace

double amx_int8(std::int64_t iterations) {
  TileConfig c;
  for (int t = 0; t < 8; ++t) c.colsb[t] = 64, c.rows[t] = 16;
  __asm__ volatile("ldtilecfg %0" : : "m"(c));  // (GCC 12's intrinsic names only 8 bytes as read)
  alignas(64) std::int8_t operand[16 * 64];
  for (int i = 0; i < 16 * 64; ++i) operand[i] = static_cast<std::int8_t>(i % 7 - 3);
  // (One statement each: GCC's tile intrinsics are asm macros.)
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  for (std::int64_t i = 0; i < iterations; ++i) {
    _tile_dpbsud(0, 4, 6);
    _tile_dpbsud(1, 4, 7);
    _tile_dpbsud(2, 5, 6);
    _tile_dpbsud(3, 5, 7);
  }
  alignas(64) std::int32_t out[16 * 16];
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}

}  // namespace attend::bench::loops
