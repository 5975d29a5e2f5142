// The C API's per-thread error message, shared by its translation (attend_c_api.cpp)
// and encoder (encoder_c_api.cpp) halves.
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "attend/attend.h"

namespace attend::c_api {

// Records `message` for attend_last_error() on this thread and returns `status`.
attend_status fail(attend_status status, std::string message);

// Runs f, turning any exception into a status and the message.
template <class F>
attend_status guarded(F&& f) {
  try {
    f();
    return ATTEND_OK;
  } catch (const std::bad_alloc&) {
    return fail(ATTEND_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(ATTEND_ERROR, e.what());
  } catch (...) {
    return fail(ATTEND_ERROR, "unknown error");
  }
}

}  // namespace attend::c_api
