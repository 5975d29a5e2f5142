// One HTTP request as the routes see it, and the way its answer goes back: plain data
// and an interface, so that nothing above the listener (http_listener.cpp) sees Boost.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attend::server {

using Clock = std::chrono::steady_clock;

struct HttpRequest {
  std::string method;  // "GET", "POST", …
  std::string target;  // "/embed?x=1"
  std::string path;    // "/embed"
  std::string authorization, origin, content_type, request_headers;  // request_headers: CORS preflight's
  std::string body;
  std::string peer;    // "127.0.0.1:53122" or "unix"
  Clock::time_point arrived;  // when its first byte was read
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  bool close = false;  // close the connection after it (draining, a broken request)
};

// A request in flight: answered once, from any thread. The connection reads no further
// request until it is answered (no pipelining), but watches for the client going away.
class Exchange {
 public:
  virtual ~Exchange() = default;
  // Sends the answer; the first call wins, later ones do nothing. Thread-safe.
  virtual void respond(HttpResponse response) = 0;
  // Whether the answer can no longer reach anyone: sent already, or the client closed its
  // connection (its pending work can be dropped).
  virtual bool abandoned() const = 0;
  // Calls on_expiry on an HTTP thread if the exchange is not answered by then.
  virtual void expire_at(Clock::time_point deadline, std::function<void()> on_expiry) = 0;
};

}  // namespace attend::server
