// Argument checks for the ops: a failed check throws attend::Error whose message names
// the op and the offending argument, never undefined behaviour.
#pragma once

#include "attend/error.hpp"
#include "attend/ops/types.hpp"

namespace attend::ops::detail {

template <class... Parts>
[[noreturn]] void fail(const char* op, const Parts&... parts) {
  throw error_of(op, ": ", parts...);
}

#define ATTEND_OP_CHECK(cond, op, ...)                       \
  do {                                                       \
    if (!(cond)) ::attend::ops::detail::fail(op, __VA_ARGS__); \
  } while (0)

inline void check_threads(const char* op, int threads) {
  ATTEND_OP_CHECK(threads >= 1, op, "thread count must be ≥ 1, got ", threads);
}

// A view with data (unless empty), non-negative sizes and ld ≥ cols.
template <class T>
void check_matrix(const char* op, const char* name, const MatrixView<T>& m) {
  ATTEND_OP_CHECK(m.rows >= 0 && m.cols >= 0, op, name, " has negative shape [", m.rows, ", ",
                  m.cols, "]");
  ATTEND_OP_CHECK(m.rows == 0 || m.cols == 0 || m.data != nullptr, op, name,
                  " is null but has shape [", m.rows, ", ", m.cols, "]");
  ATTEND_OP_CHECK(m.rows <= 1 || m.ld >= m.cols, op, name, " has leading dimension ", m.ld,
                  " < its ", m.cols, " columns");
}

template <class T, class U>
void check_same_shape(const char* op, const char* a_name, const MatrixView<T>& a,
                      const char* b_name, const MatrixView<U>& b) {
  ATTEND_OP_CHECK(a.rows == b.rows && a.cols == b.cols, op, a_name, " is [", a.rows, ", ",
                  a.cols, "] but ", b_name, " is [", b.rows, ", ", b.cols, "]");
}

// The checks of an element-wise op y = f(x): threads, both views, the same shape.
template <class T, class U>
void check_elementwise(const char* op, const MatrixView<T>& x, const MatrixView<U>& y, int threads) {
  check_threads(op, threads);
  check_matrix(op, "x", x);
  check_matrix(op, "y", y);
  check_same_shape(op, "x", x, "y", y);
}

}  // namespace attend::ops::detail
