// Embedding lookup (gather of an f32, bf16 or s8 table, widened · scale + position row)
// and sinusoidal position tables.
#include "attend/ops/embedding.hpp"

#include <cmath>

#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"

namespace attend::ops {
namespace {

// The table's shape and data, as check_matrix checks a matrix, and its type's extras.
void check_table(const char* op, const EmbeddingTable& t) {
  ATTEND_OP_CHECK(t.type == WeightType::f32 || t.type == WeightType::bf16 || t.type == WeightType::s8, op,
                  "table has an unknown element type (", static_cast<int>(t.type), ")");
  ATTEND_OP_CHECK(t.rows >= 0 && t.cols >= 0, op, "table has negative shape [", t.rows, ", ", t.cols, "]");
  ATTEND_OP_CHECK(t.rows == 0 || t.cols == 0 || t.data != nullptr, op, weight_type_name(t.type),
                  " table is null but has shape [", t.rows, ", ", t.cols, "]");
  ATTEND_OP_CHECK(t.rows <= 1 || t.ld >= t.cols, op, "table has leading dimension ", t.ld, " < its ", t.cols,
                  " columns");
  ATTEND_OP_CHECK(t.type != WeightType::s8 || t.rows == 0 || t.factors != nullptr, op,
                  "s8 table has no factors (one per row: w = q·factor)");
}

template <class T>
const T* table_row(const EmbeddingTable& t, index_t r) {
  return static_cast<const T*>(t.data) + r * t.ld;
}

}  // namespace

void embedding(const EmbeddingTable& table, const std::int32_t* ids, float scale, ConstMatrix positions,
               const std::int32_t* position_ids, Matrix out, int threads) {
  constexpr const char* op = "embedding";
  detail::check_threads(op, threads);
  check_table(op, table);
  detail::check_matrix(op, "out", out);
  ATTEND_OP_CHECK(out.cols == table.cols, op, "out has ", out.cols, " columns, the table ", table.cols);
  if (out.rows == 0) return;
  ATTEND_OP_CHECK(ids != nullptr, op, "ids is null");
  // Checked before any thread starts: a bad id is an error, never a wild read.
  for (index_t i = 0; i < out.rows; ++i)
    ATTEND_OP_CHECK(ids[i] >= 0 && ids[i] < table.rows, op, "ids[", i, "] = ", ids[i], " is outside [0, ",
                    table.rows, ")");
  if (positions.data) {
    detail::check_matrix(op, "positions", positions);
    ATTEND_OP_CHECK(positions.cols == table.cols, op, "positions have ", positions.cols, " columns, the table ",
                    table.cols);
    ATTEND_OP_CHECK(position_ids != nullptr, op, "position_ids is null");
    for (index_t i = 0; i < out.rows; ++i)
      ATTEND_OP_CHECK(position_ids[i] >= 0 && position_ids[i] < positions.rows, op, "position_ids[", i, "] = ",
                      position_ids[i], " is outside [0, ", positions.rows, ")");
  }
  const auto& k = detail::active_kernels();
  const int nt = detail::useful_threads(threads, out.rows * out.cols, 32768);
  detail::parallel_chunks(nt, out.rows, [&](index_t b, index_t e) {
    for (index_t i = b; i < e; ++i) {
      const index_t id = ids[i];
      const float* add = positions.data ? positions.row(position_ids[i]) : nullptr;
      switch (table.type) {
        case WeightType::f32: k.scale_add_row(table_row<float>(table, id), scale, add, out.row(i), out.cols); break;
        case WeightType::bf16:
          k.bf16_scale_add_row(table_row<std::uint16_t>(table, id), scale, add, out.row(i), out.cols);
          break;
        case WeightType::s8:
          k.s8_scale_add_row(table_row<std::int8_t>(table, id), table.factors[id], scale, add, out.row(i), out.cols);
          break;
      }
    }
  });
}

void sinusoidal_positions(PositionLayout layout, index_t first_position, Matrix out) {
  constexpr const char* op = "sinusoidal_positions";
  detail::check_matrix(op, "out", out);
  ATTEND_OP_CHECK(out.cols % 2 == 0 && out.cols > 0, op, "dimension ", out.cols, " must be even and > 0");
  ATTEND_OP_CHECK(first_position >= 0, op, "first_position ", first_position, " is negative");
  ATTEND_OP_CHECK(layout != PositionLayout::concatenated || out.cols >= 4, op,
                  "the concatenated layout needs dimension ≥ 4, got ", out.cols);
  const index_t half = out.cols / 2;
  for (index_t r = 0; r < out.rows; ++r) {
    const double pos = static_cast<double>(first_position + r);
    float* row = out.row(r);
    for (index_t i = 0; i < half; ++i) {
      if (layout == PositionLayout::interleaved) {
        const double angle = pos * std::exp(-static_cast<double>(2 * i) * std::log(10000.0) / out.cols);
        row[2 * i] = static_cast<float>(std::sin(angle));
        row[2 * i + 1] = static_cast<float>(std::cos(angle));
      } else {
        const double angle = pos * std::exp(-static_cast<double>(i) * std::log(10000.0) / (half - 1));
        row[i] = static_cast<float>(std::sin(angle));
        row[half + i] = static_cast<float>(std::cos(angle));
      }
    }
  }
}

}  // namespace attend::ops
