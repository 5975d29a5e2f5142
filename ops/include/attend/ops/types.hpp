// Basic vocabulary of the ops library: index type, matrix views, activations.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attend::ops {

using index_t = std::int64_t;

// A row-major 2-D view: `rows` × `cols` elements, `ld` elements between row starts.
// Views never own memory.
template <class T>
struct MatrixView {
  T* data = nullptr;
  index_t rows = 0;
  index_t cols = 0;
  index_t ld = 0;

  MatrixView() = default;
  MatrixView(T* d, index_t r, index_t c, index_t l) : data(d), rows(r), cols(c), ld(l) {}
  MatrixView(T* d, index_t r, index_t c) : data(d), rows(r), cols(c), ld(c) {}
  // A mutable view converts to a read-only one.
  template <class U>
  MatrixView(const MatrixView<U>& o) : data(o.data), rows(o.rows), cols(o.cols), ld(o.ld) {}

  T* row(index_t r) const { return data + r * ld; }
  T& operator()(index_t r, index_t c) const { return data[r * ld + c]; }
};

using Matrix = MatrixView<float>;
using ConstMatrix = MatrixView<const float>;

// The element type of a model weight: of the GEMM weights (gemm.hpp: f32, bf16 rounded
// to nearest even, s8 per output row) and of the embedding tables (embedding.hpp).
enum class WeightType : std::uint8_t { f32, bf16, s8 };
const char* weight_type_name(WeightType t);  // "f32", "bf16", "s8"
constexpr std::size_t weight_type_bytes(WeightType t) { return t == WeightType::s8 ? 1 : t == WeightType::bf16 ? 2 : 4; }

// Element-wise activation, usable standalone (activation.hpp) and as a GEMM epilogue.
enum class Activation : std::uint8_t {
  none,
  relu,
  gelu,       // exact: 0.5·x·(1 + erf(x/√2))
  gelu_tanh,  // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
  silu,       // x·σ(x)
  gelu_sigmoid,  // x·σ(1.702·x) (CTranslate2's GELUSigmoid, native Marian's gelu)
};

const char* activation_name(Activation a);
// Parses "none", "relu", "gelu", "gelu_tanh", "silu", "gelu_sigmoid"; throws attend::Error otherwise.
Activation parse_activation(const char* name);

}  // namespace attend::ops
