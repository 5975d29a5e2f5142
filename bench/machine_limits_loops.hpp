// The throughput loops behind machine_limits, one per instruction (or per step of a
// kernel's inner loop). Each runs `iterations` rounds of independent accumulator chains
// — more than latency × ports on every core, so the loop is bound by the units alone —
// and returns a value that depends on every chain (so nothing is optimised away).
//
// Each group lives in a file compiled with its ISA's flags (machine_limits_<isa>.cpp)
// and may be called only when ops::isa_available says the CPU has that ISA. The
// operations one call performs are iterations × kChains × the step's operations
// (machine_limits.cpp's table): a multiply-add counts 2, as in GFLOP/s.
#pragma once

#include <cstdint>

namespace attend::bench::loops {

// Chains: AVX-512 has 32 vector registers, so 24 chains plus the operands fit; AVX2 and
// SSE2 have 16, which hold fewer (a 17th live value would spill to memory and measure
// the store-forwarding latency instead). Each count is still above latency × ports:
// FMA 4–5 cycles × 2 ports on every AVX2 core, the integer steps' chain is one vpaddd.
inline constexpr int kChains512 = 24;
inline constexpr int kChainsFma256 = 14;    // + 2 operands
inline constexpr int kChainsMulAdd128 = 12; // + 2 operands + the product
inline constexpr int kChainsInt256 = 10;    // + up to 4 operands and the step's temporary

// sse2 (any x86-64): the portable fp32 GEMM's step, mulps + addps (xmm, 4 lanes).
double mul_add_sse2(std::int64_t iterations);

// avx2 (AVX2 + FMA), ymm:
double fma_avx2(std::int64_t iterations);            // vfmadd231ps, 8 lanes
double s8_exact_avx2(std::int64_t iterations);       // attend's exact step: vpmaddwd + vpaddd on s8 widened to s16
double s8_saturating_avx2(std::int64_t iterations);  // vpmaddubsw + vpmaddwd(·,1) + vpaddd (7-bit kernels, oneDNN's AVX2 u8s8)

// avx512 (F/BW), zmm:
double fma_avx512(std::int64_t iterations);            // vfmadd231ps, 16 lanes
double s8_exact_avx512(std::int64_t iterations);       // attend's S8DotSign512: masked vpsubb + vpmaddubsw + vpmaddwd + vpaddd
double s8_saturating_avx512(std::int64_t iterations);  // vpmaddubsw + vpmaddwd(·,1) + vpaddd

// avx512_vnni: vpdpbusd zmm (64 u8×s8 products into 16 int32 lanes).
double vnni_avx512(std::int64_t iterations);

// avx512_bf16: vdpbf16ps zmm (32 bf16 products into 16 fp32 lanes).
double bf16_avx512(std::int64_t iterations);

// AMX (AMX-TILE + AMX-INT8), machine_limits_avx512_amx.cpp: iterations × 4 tdpbsud of
// 16 × 16 × 64 products, from operand tiles loaded once.
double amx_int8(std::int64_t iterations);

}  // namespace attend::bench::loops
