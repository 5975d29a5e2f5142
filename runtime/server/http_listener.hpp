// The HTTP/1.1 side of the server: Boost.Beast over Boost.Asio (docs/server.md says why),
// on a few threads that only read, parse and write — a slow client costs a socket and a
// buffer, never a thread. Each connection reads one request at a time (keep-alive, no
// pipelining), within limits that end it cleanly:
//   idle         a keep-alive connection with no request for keep_alive_timeout is closed;
//   slow         a request's headers and body must arrive within read_timeout of its
//                first byte (slowloris): 408, closed;
//   large        headers over header_limit: 431; a body over payload_limit: 413, before
//                it is read when its Content-Length says so;
//   malformed    anything Beast's parser refuses: 400, closed;
//   too many     connections over max_connections: 503, closed;
//   gone         a client that closes its connection while its request is worked on
//                marks the exchange abandoned (its queued work is dropped).
// Only http_listener.cpp includes Boost.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "server/http_exchange.hpp"

namespace attend::server {

struct ListenerConfig {
  std::string host = "127.0.0.1";
  int port = 8080;        // 0: any free port; < 0: no TCP
  std::string uds_path;   // non-empty: also a Unix socket
  std::chrono::milliseconds read_timeout{10000}, keep_alive_timeout{30000};
  std::uint64_t payload_limit = 2000000;
  std::uint32_t header_limit = 16 * 1024;
  std::int64_t max_connections = 1024;
  int threads = 1;
};

using RequestHandler = std::function<void(HttpRequest&& request, std::shared_ptr<Exchange> exchange)>;
// The answer to a request the listener refuses itself (status 400, 408, 413, 431, 503),
// made by the router so that every error has the same JSON; `peer` for its log.
using RefusalHandler = std::function<HttpResponse(int status, const std::string& message, const std::string& peer)>;

class HttpListener {
 public:
  HttpListener(ListenerConfig config, RequestHandler on_request, RefusalHandler on_refusal);
  ~HttpListener();  // stop()
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Binds and listens (attend::Error naming the address if it cannot), starts the threads.
  void start();
  int port() const;  // the TCP port bound (-1 without TCP)

  // Runs `task` on an HTTP thread.
  void post(std::function<void()> task);
  // Stops accepting: the listening sockets close, and so do idle keep-alive connections;
  // a connection whose request is in flight is closed once it is answered.
  void stop_accepting();
  // Closes every connection and joins the threads. Idempotent.
  void stop();
  std::int64_t connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace attend::server
