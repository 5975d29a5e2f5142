// attend::Error — the one exception type every layer of attend throws.
//
// It lives beside the public API rather than in ops/ so that a program embedding
// attend catches a single type, whether the fault was found by a kernel's argument
// check, the model loader or the decoder. It knows nothing of models.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#if defined(_WIN32)
#define ATTEND_API
#else
#define ATTEND_API __attribute__((visibility("default")))
#endif

namespace attend {

class ATTEND_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Builds an Error from pieces streamed together: error_of("tensor ", name, " has ", n, " rows").
template <class... Parts>
Error error_of(const Parts&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  return Error(s.str());
}

}  // namespace attend
