#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "attend/ops/activation.hpp"
#include "attend/ops/argmax.hpp"
#include "attend/ops/finite.hpp"
#include "attend/ops/bf16.hpp"
#include "attend/ops/embedding.hpp"
#include "attend/ops/normalization.hpp"
#include "attend/ops/row_magnitude.hpp"
#include "attend/ops/reference.hpp"
#include "attend/ops/softmax.hpp"
#include "op_cases.hpp"

namespace attend::test {
namespace {

struct NormVariant {
  bool rms = false;
  bool beta = true;
  bool residual = false;
  bool sum_out = false;
  bool in_place = false;  // y is x
  float mean = 0.0f;      // rows centred here…
  float spread = 1.0f;    // …with this spread
};

OpCase norm_case(Rng& rng, index_t rows, index_t cols, const NormVariant& v) {
  struct State {
    Buffer2D x, r, gamma, beta, y, y_ref, sum, sum_ref;
    ops::NormWeights w;
  };
  auto s = std::make_shared<State>();
  const index_t pad = rng.uniform_int(0, 2);
  s->x = Buffer2D(rows, cols, pad);
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) s->x.at(i, j) = v.mean + rng.uniform(-v.spread, v.spread);
  s->r = Buffer2D(rows, cols, pad);
  s->r.fill_random(rng, -v.spread, v.spread);
  s->gamma = Buffer2D(1, cols);
  s->gamma.fill_random(rng, 0.5f, 1.5f);
  s->beta = Buffer2D(1, cols);
  s->beta.fill_random(rng, -1, 1);
  s->y = Buffer2D(rows, cols, pad);
  s->y_ref = Buffer2D(rows, cols, pad);
  s->sum = Buffer2D(rows, cols, pad);
  s->sum_ref = Buffer2D(rows, cols, pad);
  s->w = {s->gamma.data(), v.beta && !v.rms ? s->beta.data() : nullptr, 1e-5f};

  std::ostringstream name;
  name << (v.rms ? "rms_norm" : "layer_norm") << " " << rows << "x" << cols << (v.residual ? " +residual" : "")
       << (v.sum_out ? " +sum_out" : "") << (v.in_place ? " in-place" : "") << (v.mean != 0 ? " large-mean" : "");
  OpCase c;
  c.op = v.rms ? "rms_norm" : "layer_norm";
  c.name = name.str();
  c.flops = 8.0 * rows * cols;
  c.bytes = 4.0 * rows * cols * (2 + (v.residual ? 1 : 0) + (v.sum_out ? 1 : 0));
  c.check_written = !v.in_place;
  c.run = [s, v](int threads) {
    const ops::ConstMatrix res = v.residual ? ops::ConstMatrix(s->r.view()) : ops::ConstMatrix{};
    const ops::Matrix sum = v.sum_out ? s->sum.view() : ops::Matrix{};
    if (v.in_place) s->y.copy_from(s->x);
    const ops::ConstMatrix in = v.in_place ? ops::ConstMatrix(s->y.view()) : ops::ConstMatrix(s->x.view());
    if (v.rms) {
      ops::rms_norm(in, s->y.view(), s->w, threads, res, sum);
    } else {
      ops::layer_norm(in, s->y.view(), s->w, threads, res, sum);
    }
  };
  c.reference = [s, v] {
    const ops::ConstMatrix res = v.residual ? ops::ConstMatrix(s->r.view()) : ops::ConstMatrix{};
    const ops::Matrix sum = v.sum_out ? s->sum_ref.view() : ops::Matrix{};
    if (v.rms) {
      ops::reference::rms_norm(s->x.view(), s->y_ref.view(), s->w, res, sum);
    } else {
      ops::reference::layer_norm(s->x.view(), s->y_ref.view(), s->w, res, sum);
    }
  };
  c.outputs = {{&s->y, &s->y_ref}};
  if (v.sum_out) c.outputs.push_back({&s->sum, &s->sum_ref});
  c.state = s;
  return c;
}

enum class RowKind { activation, softmax, log_softmax, multiply };

OpCase row_case(Rng& rng, index_t rows, index_t cols, RowKind kind, ops::Activation act, bool with_neg_inf) {
  struct State {
    Buffer2D x, gate, y, y_ref, scale;
  };
  auto s = std::make_shared<State>();
  const index_t pad = rng.uniform_int(0, 2);
  s->x = Buffer2D(rows, cols, pad);
  s->x.fill_random(rng, kind == RowKind::activation ? -10.f : -30.f, kind == RowKind::activation ? 10.f : 30.f);
  if (with_neg_inf)  // masked logits; every row keeps its first entry finite
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 1; j < cols; ++j)
        if (rng.uniform_int(0, 3) == 0) s->x.at(i, j) = -std::numeric_limits<float>::infinity();
  s->y = Buffer2D(rows, cols, pad);
  s->y_ref = Buffer2D(rows, cols, pad);
  if (kind == RowKind::multiply) {
    s->gate = Buffer2D(rows, cols, rng.uniform_int(0, 2));
    s->gate.fill_random(rng, -3.f, 3.f);
  }
  OpCase c;
  std::ostringstream name;
  switch (kind) {
    case RowKind::activation: c.op = std::string("activation ") + ops::activation_name(act); break;
    case RowKind::softmax: c.op = "softmax"; break;
    case RowKind::log_softmax: c.op = "log_softmax"; break;
    case RowKind::multiply: c.op = "multiply"; break;
  }
  name << c.op << " " << rows << "x" << cols << (with_neg_inf ? " with -inf" : "");
  c.name = name.str();
  c.flops = 10.0 * rows * cols;
  c.bytes = 8.0 * rows * cols;
  c.run = [s, kind, act](int threads) {
    if (kind == RowKind::activation) ops::activation(act, s->x.view(), s->y.view(), threads);
    if (kind == RowKind::softmax) ops::softmax(s->x.view(), s->y.view(), threads);
    if (kind == RowKind::log_softmax) ops::log_softmax(s->x.view(), s->y.view(), threads);
    if (kind == RowKind::multiply) ops::multiply(s->x.view(), s->gate.view(), s->y.view(), threads);
  };
  c.reference = [s, kind, act] {
    if (kind == RowKind::activation) ops::reference::activation(act, s->x.view(), s->y_ref.view());
    if (kind == RowKind::softmax) ops::reference::softmax(s->x.view(), s->y_ref.view());
    if (kind == RowKind::log_softmax) ops::reference::log_softmax(s->x.view(), s->y_ref.view());
    if (kind == RowKind::multiply) ops::reference::multiply(s->x.view(), s->gate.view(), s->y_ref.view());
    // GeLU's contract is absolute in |x|: its erf is accurate to ~6e-8, so far in the
    // negative tail (GeLU(−5) ≈ −1.4e-6) the result is good to ~1e-7·|x|, not relatively —
    // as float32's 0.5·x·(1 + erf(x/√2)) in PyTorch. Each element is judged against
    // max(|GeLU(x)|, |x|/2); every other activation relatively, as before.
    if (kind == RowKind::activation && act == ops::Activation::gelu) {
      s->scale = Buffer2D(s->x.rows(), s->x.cols(), 0);
      for (index_t i = 0; i < s->x.rows(); ++i)
        for (index_t j = 0; j < s->x.cols(); ++j)
          s->scale.at(i, j) = std::max({std::abs(s->y_ref.at(i, j)), 0.5f * std::abs(s->x.at(i, j)), 1e-30f});
    }
  };
  c.outputs = {{&s->y, &s->y_ref, act == ops::Activation::gelu && kind == RowKind::activation ? &s->scale : nullptr}};
  c.state = s;
  return c;
}

// A table of `type`: f32 uniform in ±1; bf16 those values rounded; s8 random q (the
// extremes ±127 included) with random per-row factors, one of them 0 (CTranslate2's
// all-zero row). Rows are `pad` elements apart beyond their width.
OpCase embedding_case(Rng& rng, index_t vocab, index_t dim, index_t tokens, bool positions, ops::WeightType type) {
  struct State {
    Buffer2D table, pos, out, out_ref;
    std::vector<std::uint16_t> bf16;
    std::vector<std::int8_t> q;
    std::vector<float> factors;
    std::vector<std::int32_t> ids, pos_ids;
    ops::EmbeddingTable typed;
  };
  auto s = std::make_shared<State>();
  const index_t ld = dim + rng.uniform_int(0, 2);
  s->table = Buffer2D(vocab, dim, ld - dim);
  s->table.fill_random(rng, -1, 1);
  s->typed = ops::ConstMatrix(s->table.view());
  if (type == ops::WeightType::bf16) {
    s->bf16.assign(static_cast<size_t>(vocab * ld), 0);
    for (index_t r = 0; r < vocab; ++r)
      for (index_t c = 0; c < dim; ++c) s->bf16[r * ld + c] = ops::bf16_from_float(s->table.at(r, c));
    s->typed = ops::EmbeddingTable(ops::MatrixView<const std::uint16_t>(s->bf16.data(), vocab, dim, ld));
  } else if (type == ops::WeightType::s8) {
    s->q.assign(static_cast<size_t>(vocab * ld), 0);
    for (index_t r = 0; r < vocab; ++r) {
      for (index_t c = 0; c < dim; ++c) s->q[r * ld + c] = static_cast<std::int8_t>(rng.uniform_int(-127, 127));
      s->q[r * ld + rng.uniform_int(0, dim - 1)] = r % 2 ? 127 : -127;
      s->factors.push_back(r == vocab / 2 ? 0.0f : rng.uniform(1e-3f, 1e-1f));
    }
    s->typed = ops::EmbeddingTable(ops::MatrixView<const std::int8_t>(s->q.data(), vocab, dim, ld), s->factors.data());
  }
  s->pos = Buffer2D(64, dim);
  if (positions) ops::sinusoidal_positions(ops::PositionLayout::interleaved, 0, s->pos.view());
  for (index_t i = 0; i < tokens; ++i) {
    s->ids.push_back(static_cast<std::int32_t>(rng.uniform_int(0, vocab - 1)));
    s->pos_ids.push_back(static_cast<std::int32_t>(rng.uniform_int(0, 63)));
  }
  s->out = Buffer2D(tokens, dim, rng.uniform_int(0, 2));
  s->out_ref = Buffer2D(tokens, dim, s->out.ld() - dim);
  const float scale = std::sqrt(static_cast<float>(dim));
  const double element_bytes = type == ops::WeightType::f32 ? 4 : type == ops::WeightType::bf16 ? 2 : 1;
  OpCase c;
  c.op = "embedding";
  c.name = std::string("embedding ") + ops::weight_type_name(type) + " vocab=" + std::to_string(vocab) +
           " dim=" + std::to_string(dim) + " tokens=" + std::to_string(tokens) + (positions ? " +positions" : "");
  c.flops = 2.0 * tokens * dim;
  c.bytes = tokens * dim * (element_bytes + 4.0 * (positions ? 2 : 1));
  c.run = [s, scale, positions](int threads) {
    ops::embedding(s->typed, s->ids.data(), scale, positions ? ops::ConstMatrix(s->pos.view()) : ops::ConstMatrix{},
                   s->pos_ids.data(), s->out.view(), threads);
  };
  c.reference = [s, scale, positions] {
    ops::reference::embedding(s->typed, s->ids.data(), scale,
                              positions ? ops::ConstMatrix(s->pos.view()) : ops::ConstMatrix{}, s->pos_ids.data(),
                              s->out_ref.view());
  };
  c.outputs = {{&s->out, &s->out_ref}};
  c.state = s;
  return c;
}

// row_argmax (k = 0) or row_top_k: indices compared exactly (as floats in the case's
// buffers: every index < 2^24 is exact). Values are drawn from a few dozen levels, so
// ties are everywhere and must go to the lower index; −inf entries stand for masked
// tokens.
OpCase selection_case(Rng& rng, index_t rows, index_t cols, index_t k, bool with_neg_inf) {
  struct State {
    Buffer2D x, got, expected;
    std::vector<std::int32_t> indices;
    std::vector<float> values;
  };
  auto s = std::make_shared<State>();
  const index_t width = std::max<index_t>(k, 1);
  s->x = Buffer2D(rows, cols, rng.uniform_int(0, 2));
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j)
      s->x.at(i, j) = with_neg_inf && rng.uniform_int(0, 3) == 0 ? -std::numeric_limits<float>::infinity()
                                                                 : 0.5f * static_cast<float>(rng.uniform_int(-30, 30));
  s->got = Buffer2D(rows, 2 * width);
  s->expected = Buffer2D(rows, 2 * width);
  s->indices.resize(static_cast<size_t>(rows * width));
  s->values.resize(static_cast<size_t>(rows * width));
  // Row r of an output: the indices, then (top k) the values.
  auto store = [s, width, k](Buffer2D& out) {
    for (index_t r = 0; r < out.rows(); ++r)
      for (index_t i = 0; i < width; ++i) {
        out.at(r, i) = static_cast<float>(s->indices[r * width + i]);
        out.at(r, width + i) = k == 0 ? 0.0f : s->values[r * width + i];
      }
  };
  OpCase c;
  c.op = k == 0 ? "row_argmax" : "row_top_k";
  c.name = c.op + " " + std::to_string(rows) + "x" + std::to_string(cols) + (k ? " k=" + std::to_string(k) : "") +
           (with_neg_inf ? " with -inf" : "");
  c.flops = 1.0 * rows * cols;
  c.bytes = 4.0 * rows * cols;
  c.tolerance = 0;
  c.run = [s, k, store](int threads) {
    if (k == 0) ops::row_argmax(s->x.view(), s->indices.data(), threads);
    else ops::row_top_k(s->x.view(), k, s->indices.data(), s->values.data(), threads);
    store(s->got);
  };
  c.reference = [s, k, store] {
    if (k == 0) ops::reference::row_argmax(s->x.view(), s->indices.data());
    else ops::reference::row_top_k(s->x.view(), k, s->indices.data(), s->values.data());
    store(s->expected);
  };
  c.outputs = {{&s->got, &s->expected}};
  c.state = s;
  return c;
}

// A row op that gives one value per row (Value: what ops writes), run on x and compared
// exactly with the reference: `columns` turn a row's value into floats of the output.
template <class Value, class Fast, class Reference, class Columns>
OpCase per_row_case(const std::string& op, Buffer2D x, int columns, Fast fast, Reference reference, Columns to_columns) {
  struct State {
    Buffer2D x, got, expected;
    std::vector<Value> values;
  };
  auto s = std::make_shared<State>();
  const index_t rows = x.rows(), cols = x.cols();
  s->x = std::move(x);
  s->got = Buffer2D(rows, columns);
  s->expected = Buffer2D(rows, columns);
  s->values.resize(static_cast<size_t>(rows));
  auto store = [s, to_columns](Buffer2D& out) {
    for (index_t r = 0; r < out.rows(); ++r) to_columns(s->values[r], &out.at(r, 0));
  };
  OpCase c;
  c.op = op;
  c.name = op + " " + std::to_string(rows) + "x" + std::to_string(cols);
  c.flops = 2.0 * rows * cols;
  c.bytes = 4.0 * rows * cols;
  c.tolerance = 0;
  c.run = [s, store, fast](int threads) {
    fast(s->x.view(), s->values.data(), threads);
    store(s->got);
  };
  c.reference = [s, store, reference] {
    reference(s->x.view(), s->values.data());
    store(s->expected);
  };
  c.outputs = {{&s->got, &s->expected}};
  c.state = s;
  return c;
}

// row_all_finite: about half the rows get one NaN, +inf or −inf at a random column (the
// first, the last — a vector tail — or anywhere); the flags are compared exactly.
OpCase finite_case(Rng& rng, index_t rows, index_t cols) {
  Buffer2D x(rows, cols, rng.uniform_int(0, 2));
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) x.at(i, j) = 1e30f * static_cast<float>(rng.uniform_int(-3, 3));
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
  for (index_t i = 0; i < rows; ++i) {
    if (rng.uniform_int(0, 1) == 0) continue;
    const index_t where = rng.uniform_int(0, 2);
    const index_t j = where == 0 ? 0 : where == 1 ? cols - 1 : rng.uniform_int(0, cols - 1);
    x.at(i, j) = specials[rng.uniform_int(0, 2)];
  }
  return per_row_case<std::uint8_t>(
      "row_all_finite", std::move(x), 1, [](ops::ConstMatrix m, std::uint8_t* out, int t) { ops::row_all_finite(m, out, t); },
      [](ops::ConstMatrix m, std::uint8_t* out) { ops::reference::row_all_finite(m, out); },
      [](std::uint8_t flag, float* out) { out[0] = flag; });
}

// row_magnitudes: ordinary rows, and rows one value dominates (the int8 outlier rows
// the runtime looks for); max and sum compared exactly with the reference's order.
OpCase magnitude_case(Rng& rng, index_t rows, index_t cols) {
  Buffer2D x(rows, cols, rng.uniform_int(0, 2));
  x.fill_random(rng, -1, 1);
  for (index_t i = 0; i < rows; i += 2) x.at(i, rng.uniform_int(0, cols - 1)) = 40.0f * rng.uniform(-1, 1);
  return per_row_case<ops::RowMagnitude>(
      "row_magnitudes", std::move(x), 2,
      [](ops::ConstMatrix m, ops::RowMagnitude* out, int t) { ops::row_magnitudes(m, out, t); },
      [](ops::ConstMatrix m, ops::RowMagnitude* out) { ops::reference::row_magnitudes(m, out); },
      [](const ops::RowMagnitude& v, float* out) { out[0] = v.max_abs, out[1] = v.sum_abs; });
}

OpCase positions_case(index_t first, index_t count, index_t dim, ops::PositionLayout layout) {
  struct State {
    Buffer2D out, out_ref;
  };
  auto s = std::make_shared<State>();
  s->out = Buffer2D(count, dim, 1);
  s->out_ref = Buffer2D(count, dim, 1);
  OpCase c;
  c.op = "sinusoidal_positions";
  c.name = std::string("sinusoidal_positions ") + (layout == ops::PositionLayout::interleaved ? "interleaved" : "concatenated") +
           " first=" + std::to_string(first) + " count=" + std::to_string(count) + " dim=" + std::to_string(dim);
  c.tolerance = 1e-6;
  c.bytes = 4.0 * count * dim;
  c.run = [s, first, layout](int) { ops::sinusoidal_positions(layout, first, s->out.view()); };
  c.reference = [s, first, layout] { ops::reference::sinusoidal_positions(layout, first, s->out_ref.view()); };
  c.outputs = {{&s->out, &s->out_ref}};
  c.state = s;
  return c;
}

}  // namespace

std::vector<OpCase> row_op_cases(Rng& rng, CaseScale scale) {
  std::vector<OpCase> out;
  const ops::Activation acts[] = {ops::Activation::relu, ops::Activation::gelu, ops::Activation::gelu_tanh,
                                  ops::Activation::silu, ops::Activation::gelu_sigmoid};
  if (scale == CaseScale::perf) {
    out.push_back(norm_case(rng, 8192, 512, {}));
    out.push_back(norm_case(rng, 8192, 512, {.residual = true, .sum_out = true}));
    out.push_back(row_case(rng, 8192, 2048, RowKind::activation, ops::Activation::gelu, false));
    out.push_back(row_case(rng, 8192, 2048, RowKind::activation, ops::Activation::relu, false));
    out.push_back(row_case(rng, 256, 32000, RowKind::softmax, {}, false));
    out.push_back(row_case(rng, 256, 32000, RowKind::log_softmax, {}, false));
    out.push_back(selection_case(rng, 32, 32000, 0, false));
    out.push_back(finite_case(rng, 32, 32000));
    out.push_back(selection_case(rng, 128, 32000, 8, false));
    for (ops::WeightType t : {ops::WeightType::f32, ops::WeightType::bf16, ops::WeightType::s8})
      out.push_back(embedding_case(rng, 32000, 512, 2048, true, t));
    return out;
  }
  for (index_t cols : {1, 7, 32, 100, 512, 1031}) {
    const index_t rows = rng.uniform_int(1, 40);
    out.push_back(norm_case(rng, rows, cols, {}));
    out.push_back(norm_case(rng, rows, cols, {.beta = false, .residual = true}));
    out.push_back(norm_case(rng, rows, cols, {.residual = true, .sum_out = true}));
    out.push_back(norm_case(rng, rows, cols, {.in_place = true}));
    out.push_back(norm_case(rng, rows, cols, {.rms = true}));
    out.push_back(norm_case(rng, rows, cols, {.rms = true, .residual = true, .sum_out = true}));
    for (ops::Activation a : acts) out.push_back(row_case(rng, rows, cols, RowKind::activation, a, false));
    out.push_back(row_case(rng, rows, cols, RowKind::softmax, {}, cols > 1));
    out.push_back(row_case(rng, rows, cols, RowKind::log_softmax, {}, cols > 1));
    out.push_back(row_case(rng, rows, cols, RowKind::multiply, {}, false));
    for (ops::WeightType t : {ops::WeightType::f32, ops::WeightType::bf16, ops::WeightType::s8})
      out.push_back(embedding_case(rng, 50, cols, rows, cols % 2 == 0, t));
    out.push_back(selection_case(rng, rows, cols, 0, false));
    out.push_back(selection_case(rng, rows, cols, 0, true));
    out.push_back(selection_case(rng, rows, cols, std::min<index_t>(cols, 8), cols > 1));
    out.push_back(selection_case(rng, rows, cols, cols, false));
    out.push_back(finite_case(rng, rows, cols));
    out.push_back(magnitude_case(rng, rows, cols));
  }
  out.push_back(magnitude_case(rng, 33, 384));  // all-MiniLM-L6-v2's width: whole slots only
  out.push_back(finite_case(rng, 40, 32000));
  out.push_back(selection_case(rng, 5, 32000, 0, true));
  out.push_back(selection_case(rng, 5, 32000, 8, true));
  // A large mean with a tiny spread: the centred values must keep their digits.
  out.push_back(norm_case(rng, 16, 512, {.mean = 1000.0f, .spread = 0.01f}));
  out.push_back(norm_case(rng, 16, 77, {.residual = true, .mean = -30000.0f, .spread = 0.5f}));
  for (auto layout : {ops::PositionLayout::interleaved, ops::PositionLayout::concatenated})
    for (index_t dim : {4, 32, 512}) out.push_back(positions_case(rng.uniform_int(0, 3), 200, dim, layout));
  return out;
}

}  // namespace attend::test
