// An error a route answers with: the HTTP status and the kind, in Text Embeddings
// Inference's names (error_type), with a message that names the field or input at fault.
#pragma once

#include <stdexcept>
#include <string>

namespace attend::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message)
      : std::runtime_error(message), status_(status), type_(std::move(type)) {}
  int status() const { return status_; }
  const std::string& type() const { return type_; }

 private:
  int status_;
  std::string type_;
};

// The kinds (TEI's ErrorType, and the ones a server with several models and keys adds).
inline ApiError bad_request(const std::string& message) { return {400, "Validation", message}; }
inline ApiError empty_input(const std::string& message) { return {400, "Empty", message}; }
inline ApiError not_found(const std::string& message) { return {404, "NotFound", message}; }
inline ApiError too_large(const std::string& message) { return {413, "Validation", message}; }
inline ApiError too_long(const std::string& message) { return {422, "Validation", message}; }
inline ApiError overloaded(const std::string& message) { return {429, "Overloaded", message}; }
inline ApiError unavailable(const std::string& message) { return {503, "Unhealthy", message}; }

// The name of a status, for logs and OpenAI's error "type".
const char* status_reason(int status);

}  // namespace attend::server
