// The extension module attend._attend: exceptions, version, and the class families.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <type_traits>
#include <utility>

#include "attend/attend.hpp"
#include "bindings.hpp"

namespace attend::python {

void raise_value_error(const std::exception& e) { throw nb::value_error(e.what()); }

namespace {

std::string at(const char* what, std::size_t row, std::size_t col) {
  return std::string(what) + "[" + std::to_string(row) + "][" + std::to_string(col) + "]";
}

template <class V>
std::int32_t checked_id(V v, const char* what, std::size_t row, std::size_t col) {
  if (std::cmp_less(v, INT32_MIN) || std::cmp_greater(v, INT32_MAX))
    throw nb::value_error((at(what, row, col) + " = " + std::to_string(v) + " is outside the range of token ids").c_str());
  return static_cast<std::int32_t>(v);
}

std::string type_of(nb::handle item) { return Py_TYPE(item.ptr())->tp_name; }

bool is_list_like(nb::handle h) {
  return nb::isinstance<nb::sequence>(h) && !nb::isinstance<nb::str>(h) && !nb::isinstance<nb::bytes>(h);
}

// One token (or text) as UTF-8; `where` names it ("source[2][0]").
std::string utf8(nb::handle item, const std::string& where) {
  if (!nb::isinstance<nb::str>(item))
    throw nb::type_error((where + " is " + type_of(item) +
                          ", not a string (a call takes tokens or ids, not both: the first item decides)").c_str());
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    throw nb::value_error((where + " is not valid Unicode (it holds a lone surrogate), so it has no UTF-8 form").c_str());
  }
  return std::string(data, static_cast<std::size_t>(size));
}

}  // namespace

std::vector<std::string> strings(nb::handle items, const char* what) {
  if (!is_list_like(items)) throw nb::type_error((std::string(what) + " must be a list of strings, not " + type_of(items)).c_str());
  std::vector<std::string> out;
  out.reserve(nb::len(items));
  for (nb::handle item : items) out.push_back(utf8(item, std::string(what) + "[" + std::to_string(out.size()) + "]"));
  return out;
}

std::vector<std::vector<std::string>> token_rows(nb::handle rows, const char* what, bool none_is_empty) {
  if (!is_list_like(rows))
    throw nb::type_error((std::string(what) + " must be a list of token lists, not " + type_of(rows)).c_str());
  std::vector<std::vector<std::string>> out;
  out.reserve(nb::len(rows));
  for (nb::handle row : rows) {
    const std::string where = std::string(what) + "[" + std::to_string(out.size()) + "]";
    std::vector<std::string>& tokens = out.emplace_back();
    if (row.is_none() && none_is_empty) continue;
    if (!is_list_like(row)) throw nb::type_error((where + " is " + type_of(row) + ", not a list of tokens").c_str());
    tokens.reserve(nb::len(row));
    for (nb::handle item : row) tokens.push_back(utf8(item, where + "[" + std::to_string(tokens.size()) + "]"));
  }
  return out;
}

IdRows::IdRows(nb::handle rows, const char* what) : what_(what) {
  if (nb::ndarray_check(rows)) {
    add(rows, 0);
    return;
  }
  if (!nb::isinstance<nb::sequence>(rows) || nb::isinstance<nb::str>(rows))
    throw nb::type_error((std::string(what) + " must be a list of id lists or an integer array").c_str());
  std::size_t r = 0;
  for (nb::handle row : rows) {
    if (nb::ndarray_check(row)) {
      if (nb::ndarray<nb::ro> a; nb::try_cast(row, a, false) && a.ndim() != 1)
        throw nb::value_error((std::string(what) + "[" + std::to_string(r) + "]: an id array in a list must have 1 dimension").c_str());
      add(row, r);
    } else {
      add_sequence(row, r);
    }
    ++r;
  }
}

// One ndarray of any integer type: 1-D (one sentence) or 2-D (one per row).
void IdRows::add(nb::handle array, std::size_t row) {
  const bool added = add_as<std::int32_t>(array, row) || add_as<std::int64_t>(array, row) ||
                     add_as<std::uint32_t>(array, row) || add_as<std::int16_t>(array, row) ||
                     add_as<std::uint16_t>(array, row) || add_as<std::int8_t>(array, row) ||
                     add_as<std::uint8_t>(array, row) || add_as<std::uint64_t>(array, row);
  if (!added)
    throw nb::type_error((std::string(what_) + ": an id array must hold integers (on the CPU)").c_str());
}

template <class T>
bool IdRows::add_as(nb::handle array, std::size_t row) {
  nb::ndarray<const T, nb::ro, nb::device::cpu> a;
  if (!nb::try_cast(array, a, false)) return false;
  if (a.ndim() != 1 && a.ndim() != 2)
    throw nb::value_error((std::string(what_) + ": an id array must have 1 or 2 dimensions, not " +
                           std::to_string(a.ndim())).c_str());
  const std::size_t rows = a.ndim() == 2 ? a.shape(0) : 1, cols = a.shape(a.ndim() - 1);
  const std::int64_t row_stride = a.ndim() == 2 ? a.stride(0) : 0, col_stride = a.stride(a.ndim() - 1);
  // int32 with each row's ids side by side (C order, or rows sliced out of a wider
  // array): views into the array itself.
  if (std::is_same_v<T, std::int32_t> && (col_stride == 1 || cols <= 1)) {
    arrays_.push_back(nb::borrow(array));
    for (std::size_t r = 0; r < rows; ++r)
      views_.emplace_back(reinterpret_cast<const std::int32_t*>(a.data()) + static_cast<std::int64_t>(r) * row_stride, cols);
    return true;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    std::vector<std::int32_t>& ids = converted_rows_.emplace_back(cols);
    const T* first = a.data() + static_cast<std::int64_t>(r) * row_stride;
    for (std::size_t c = 0; c < cols; ++c)
      ids[c] = checked_id(first[static_cast<std::int64_t>(c) * col_stride], what_, row + r, c);
    views_.emplace_back(ids);
    ++converted_;
  }
  return true;
}

void IdRows::add_sequence(nb::handle sequence, std::size_t row) {
  if (!nb::isinstance<nb::sequence>(sequence) || nb::isinstance<nb::str>(sequence))
    throw nb::type_error((std::string(what_) + "[" + std::to_string(row) + "] is not a list of ids").c_str());
  std::vector<std::int32_t>& ids = converted_rows_.emplace_back();
  ids.reserve(nb::len(sequence));
  std::size_t c = 0;
  for (nb::handle item : sequence) {
    long long v = 0;
    if (!nb::try_cast(item, v, true) && nb::isinstance<nb::int_>(item))
      throw nb::value_error((at(what_, row, c) + " = " + nb::str(item).c_str() + " is outside the range of token ids").c_str());
    if (!nb::try_cast(item, v, true))
      throw nb::type_error((at(what_, row, c) + " is " + type_of(item) +
                            ", not an integer token id (a call takes tokens or ids, not both: the first item decides)").c_str());
    ids.push_back(checked_id(v, what_, row, c++));
  }
  views_.emplace_back(ids);
  ++converted_;
}

std::vector<std::vector<std::int32_t>> IdRows::vectors() const {
  std::vector<std::vector<std::int32_t>> out;
  out.reserve(views_.size());
  for (const auto& v : views_) out.emplace_back(v.begin(), v.end());
  return out;
}

}  // namespace attend::python

NB_MODULE(_attend, m) {
  using namespace attend::python;
  m.doc() =
      "attend's C++ API, bound with nanobind. Use the package `attend` (attend.Translator is a drop-in for "
      "CTranslate2's); this module is its engine.";
  // One rule: a bad argument is a ValueError — attend::OptionError wherever it is thrown
  // (compute_type="xx" at load, an ISA the CPU lacks), and any attend::Error of a call
  // that translates, scores or compiles a plan (they turn it into ValueError themselves).
  // Any other attend::Error (a model that cannot be loaded) is a RuntimeError, as
  // CTranslate2 raises for a model it cannot load.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const attend::OptionError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const attend::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  m.def("version", [] { return std::string(attend::version()); }, "The library's version, e.g. \"0.1.0\".");
  // include/attend/limits.h, for the package's own checks of arguments it maps (they
  // name the caller's argument, not the engine field it becomes).
  nb::dict limits;
  limits["max_threads"] = ATTEND_MAX_THREADS, limits["max_threads_each"] = ATTEND_MAX_THREADS_EACH;
  limits["max_batch_size"] = ATTEND_MAX_BATCH_SIZE, limits["max_batch_tokens"] = ATTEND_MAX_BATCH_TOKENS;
  limits["max_target_length"] = ATTEND_MAX_TARGET_LENGTH, limits["max_beam_size"] = ATTEND_MAX_BEAM_SIZE;
  m.attr("limits") = limits;
  m.def("is_blank_text", &attend::is_blank_text, nb::arg("text"),
        "Whether `text` is blank (white space and invisible characters only): such a line translates to an "
        "empty one, as `attend translate` treats it.");
  m.def(
      "reads_in_place", [](nb::handle ids) { return IdRows(ids, "ids").in_place(); }, nb::arg("ids"),
      "Whether translating these token ids reads them where they lie, with no conversion or copy before the "
      "engine's batches: true for an int32 array (or a list of them) whose rows are contiguous; false for "
      "Python lists and other integer types, which are converted first.");
  m.def(
      "convert_model",
      [](const std::string& input_directory, const std::string& output_directory, const std::string& compute_type) {
        nb::gil_scoped_release released;
        attend::convert_model(input_directory, output_directory, compute_type);
      },
      nb::arg("input_directory"), nb::arg("output_directory"), nb::kw_only(), nb::arg("compute_type") = "default",
      "Writes the model in `input_directory` (a CTranslate2 directory, or an attend one to retype) in attend's "
      "format to `output_directory`, as `attend convert` does. `compute_type` is the type of the GEMM weights and "
      "token embedding tables in the file: \"default\" (as stored; CTranslate2's int8 stays int8), \"int8\", \"bfloat16\" or \"float32\"; "
      "a quantized model then loads without quantizing. Raises RuntimeError naming the directory at fault, "
      "ValueError for a compute_type it does not know.");
  m.def("supported_compute_types", &attend::supported_compute_types,
        "The compute types this CPU runs natively, CTranslate2's names (float32, int8, int8_float32; bfloat16 and "
        "int8_bfloat16 with AVX512_BF16).");
  m.def(
      "set_log_level", [](int level) { attend::set_log_level(static_cast<attend::LogLevel>(level)); }, nb::arg("level"),
      "The library's log level on standard error: 0 off, 1 critical, 2 error, 3 warning (the default), 4 info "
      "(what loading a model found and chose), 5 debug, 6 trace.");
  m.def("get_log_level", [] { return static_cast<int>(attend::log_level()); }, "The library's log level (0 off … 6 trace).");
  bind_option_specs(m);
  bind_model(m);
  bind_attention_heads(m);
  bind_translator(m);
  bind_encoder(m);
  bind_server(m);
}
