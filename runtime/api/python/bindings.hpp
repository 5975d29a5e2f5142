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
#include <vector>

namespace attend::python {

namespace nb = nanobind;

void bind_model(nb::module_& m);
void bind_translator(nb::module_& m);

// Token-id rows from what a Python caller has: a 2-D integer ndarray (one sentence per
// row), or a sequence whose items are 1-D integer ndarrays or sequences of ints.
// int32 arrays are copied row by row with memcpy; other integer types are converted.
// `what` names the argument in error messages ("source", "target_prefix").
std::vector<std::vector<std::int32_t>> id_rows(nb::handle rows, const char* what);

// Raised for bad options and inputs of a translation (attend::Error during a call).
[[noreturn]] void raise_value_error(const std::exception& e);

}  // namespace attend::python
