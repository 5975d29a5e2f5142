// attend._attend: the C++ API (include/attend/attend.hpp) as a Python extension module,
// with nanobind. One file per class family; the module file ties them together.
//
// The binding stays thin: it converts arguments, releases the GIL around every call
// that translates, and turns attend::Error into Python exceptions. Everything
// CTranslate2-shaped (argument names, defaults, result types) lives in the pure-Python
// package (runtime/api/python/attend/), where it is easy to read and to change.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "attend/attend.hpp"

namespace attend::python {

namespace nb = nanobind;

void bind_model(nb::module_& m);
void bind_translator(nb::module_& m);
void bind_attention_heads(nb::module_& m);
void bind_option_specs(nb::module_& m);
void bind_encoder(nb::module_& m);
void bind_server(nb::module_& m);

// Token-id rows from what a Python caller has: a 2-D integer ndarray (one sentence per
// row), or a sequence whose items are 1-D integer ndarrays or sequences of ints. An int32
// array whose rows are contiguous is read in place (views into its memory, the array
// kept alive); other integer arrays and Python lists are converted, each id checked.
// `what` names the argument in error messages ("source", "target_prefix").
class IdRows {
 public:
  IdRows(nb::handle rows, const char* what);
  const std::vector<attend::IdsView>& views() const { return views_; }
  std::vector<std::vector<std::int32_t>> vectors() const;
  // Whether no row had to be converted or copied.
  bool in_place() const { return converted_ == 0; }

 private:
  void add(nb::handle array, std::size_t row);
  template <class T>
  bool add_as(nb::handle array, std::size_t row);
  void add_sequence(nb::handle sequence, std::size_t row);

  const char* what_;
  std::vector<nb::object> arrays_;                   // the arrays read in place, kept alive
  std::deque<std::vector<std::int32_t>> converted_rows_;  // a deque: growing it moves no row
  std::vector<attend::IdsView> views_;
  std::size_t converted_ = 0;
};

// Token strings from what a Python caller has: a sequence of sequences of str (TokenRows),
// or one sequence of str (strings). Each item is checked, so a wrong type or a string
// that is not valid Unicode raises TypeError/ValueError naming `what[row][col]` — never
// nanobind's generic "incompatible function arguments". A None row is an empty one
// where `none_is_empty` (target prefixes: CTranslate2's "no prefix").
std::vector<std::vector<std::string>> token_rows(nb::handle rows, const char* what, bool none_is_empty = false);
std::vector<std::string> strings(nb::handle items, const char* what);

// Raised for bad options and inputs of a translation (attend::Error during a call).
[[noreturn]] void raise_value_error(const std::exception& e);

}  // namespace attend::python
