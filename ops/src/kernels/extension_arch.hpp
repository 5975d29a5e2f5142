// The xsimd architecture of a translation unit compiled with an AVX-512 extension
// (VNNI, BF16): xsimd::avx512bw under a name of this unit's own namespace.
//
// Such a unit reuses the AVX-512 templates (the epilogue, the activations). Were it to
// instantiate them for xsimd::avx512bw, the linker could keep its copy — compiled with
// the extension's flags — for the plain AVX-512 path too, and a CPU without the
// extension would run it. Under this tag every instantiation carries the unit's
// namespace and stays its own (tests/check_isa_symbols.cmake checks it).
#pragma once

#include "kernels/simd.hpp"

namespace attend::ops::ATTEND_ISA_NS {
struct avx512_extension : xsimd::avx512bw {
  static constexpr char const* name() noexcept { return "avx512_extension"; }
};
}  // namespace attend::ops::ATTEND_ISA_NS

namespace xsimd::types {
template <class T>
struct get_bool_simd_register<T, attend::ops::ATTEND_ISA_NS::avx512_extension> {
  using type = simd_avx512_bool_register<T>;
};
XSIMD_DECLARE_SIMD_REGISTER_ALIAS(attend::ops::ATTEND_ISA_NS::avx512_extension, avx512bw);
}  // namespace xsimd::types
