// The extension module attend._attend: exceptions, version, and the class families.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstring>

#include "attend/attend.hpp"
#include "bindings.hpp"

namespace attend::python {

void raise_value_error(const std::exception& e) { throw nb::value_error(e.what()); }

namespace {

template <class T>
bool append_rows(nb::handle h, std::vector<std::vector<std::int32_t>>& out) {
  nb::ndarray<const T, nb::ro, nb::c_contig, nb::device::cpu> a;
  if (!nb::try_cast(h, a, false)) return false;
  if (a.ndim() == 1) {
    out.emplace_back(a.data(), a.data() + a.shape(0));
  } else if (a.ndim() == 2) {
    for (std::size_t r = 0; r < a.shape(0); ++r) out.emplace_back(a.data() + r * a.shape(1), a.data() + (r + 1) * a.shape(1));
  } else {
    throw nb::value_error("an id array must have 1 or 2 dimensions");
  }
  return true;
}

// One ndarray of any integer type (int32 straight, the others converted).
bool append_array_rows(nb::handle h, std::vector<std::vector<std::int32_t>>& out) {
  return append_rows<std::int32_t>(h, out) || append_rows<std::int64_t>(h, out) || append_rows<std::uint32_t>(h, out) ||
         append_rows<std::int16_t>(h, out) || append_rows<std::uint16_t>(h, out) || append_rows<std::int8_t>(h, out) ||
         append_rows<std::uint8_t>(h, out) || append_rows<std::uint64_t>(h, out);
}

std::int32_t checked_id(nb::handle item, const char* what, std::size_t row, std::size_t col) {
  long long v = 0;
  if (!nb::try_cast(item, v, true))
    throw nb::type_error((std::string(what) + "[" + std::to_string(row) + "][" + std::to_string(col) +
                          "] is not an integer token id").c_str());
  if (v < INT32_MIN || v > INT32_MAX)
    throw nb::value_error((std::string(what) + "[" + std::to_string(row) + "][" + std::to_string(col) + "] = " +
                           std::to_string(v) + " is outside the range of token ids").c_str());
  return static_cast<std::int32_t>(v);
}

}  // namespace

std::vector<std::vector<std::int32_t>> id_rows(nb::handle rows, const char* what) {
  std::vector<std::vector<std::int32_t>> out;
  if (nb::ndarray_check(rows)) {
    if (!append_array_rows(rows, out))
      throw nb::type_error((std::string(what) + ": an id array must hold integers (C-contiguous, on the CPU)").c_str());
    return out;
  }
  if (!nb::isinstance<nb::sequence>(rows) || nb::isinstance<nb::str>(rows))
    throw nb::type_error((std::string(what) + " must be a list of id lists or an integer array").c_str());
  std::size_t r = 0;
  for (nb::handle row : rows) {
    if (nb::ndarray_check(row)) {
      if (!append_array_rows(row, out))
        throw nb::type_error((std::string(what) + "[" + std::to_string(r) + "]: an id array must hold integers").c_str());
    } else {
      if (!nb::isinstance<nb::sequence>(row) || nb::isinstance<nb::str>(row))
        throw nb::type_error((std::string(what) + "[" + std::to_string(r) + "] is not a list of ids").c_str());
      std::vector<std::int32_t> ids;
      ids.reserve(nb::len(row));
      std::size_t c = 0;
      for (nb::handle item : row) ids.push_back(checked_id(item, what, r, c++));
      out.push_back(std::move(ids));
    }
    ++r;
  }
  return out;
}

}  // namespace attend::python

NB_MODULE(_attend, m) {
  using namespace attend::python;
  m.doc() =
      "attend's C++ API, bound with nanobind. Use the package `attend` (attend.Translator is a drop-in for "
      "CTranslate2's); this module is its engine.";
  // attend::Error outside a translation call (loading a model, building a plan) is a
  // RuntimeError, as CTranslate2 raises for a model it cannot load. Calls that translate
  // or score turn it into ValueError themselves: there it means a bad option or input.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const attend::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  m.def("version", [] { return std::string(attend::version()); }, "The library's version, e.g. \"0.1.0\".");
  bind_model(m);
  bind_translator(m);
}
