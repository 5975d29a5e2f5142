// The C API's per-thread error message, shared by its translation (attend_c_api.cpp)
// and encoder (encoder_c_api.cpp) halves.
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "attend/attend.h"
#include "attend/options.hpp"

namespace attend::c_api {

// Records `message` for attend_last_error() on this thread and returns `status`.
attend_status fail(attend_status status, std::string message);

// A NULL the header promises ATTEND_ERROR_INVALID_ARGUMENT for, found inside an argument
// (an entry of an array): every check of a pointer the caller passed throws this, so
// that a NULL handle, a NULL array and a NULL entry of an array get the same status.
struct InvalidArgument : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// `pointer` is not NULL, or InvalidArgument naming it ("attend_translate_ids: sources[3] is NULL").
inline void require(const void* pointer, const char* function, const std::string& what) {
  if (pointer == nullptr) throw InvalidArgument(std::string(function) + ": " + what + " is NULL");
}

// Runs f, turning any exception into a status and the message.
template <class F>
attend_status guarded(F&& f) {
  try {
    f();
    return ATTEND_OK;
  } catch (const InvalidArgument& e) {
    return fail(ATTEND_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const attend::OptionError& e) {  // a field of an options struct: its message names it
    return fail(ATTEND_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(ATTEND_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(ATTEND_ERROR, e.what());
  } catch (...) {
    return fail(ATTEND_ERROR, "unknown error");
  }
}

}  // namespace attend::c_api
