// The drivers of row ops that read each element once and give one value per row
// (row_all_finite, row_magnitudes): their checks and their thread split in one place.
#pragma once

#include "check.hpp"
#include "parallel.hpp"

namespace attend::ops::detail {

// out[r] = value(x.row(r), x.cols) for every row of x, rows split over the threads. A
// vocabulary-wide logits matrix is megabytes read once: worth a second thread (one
// pass per element, so the grain is larger than the other row ops').
template <class Out, class Value>
void row_values(const char* op, ConstMatrix x, Out* out, int threads, const Value& value) {
  check_threads(op, threads);
  check_matrix(op, "x", x);
  ATTEND_OP_CHECK(x.rows == 0 || out != nullptr, op, "out is null");
  const int nt = useful_threads(threads, x.rows * x.cols, 65536);
  parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) out[r] = value(x.row(r), x.cols);
  });
}

}  // namespace attend::ops::detail
