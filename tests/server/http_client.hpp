// A small blocking HTTP/1.1 client for the server tests (Boost.Beast over a socket with
// receive timeouts), and raw sockets for the hostile ones: bytes out exactly as written.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attend::test {

struct Reply {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lowercased
  bool keep_alive = true;
};

// One connection (keep-alive); every call throws std::runtime_error on a socket error or
// a timeout.
class Connection {
 public:
  explicit Connection(int port, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  explicit Connection(const std::string& unix_socket, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Reply request(const std::string& method, const std::string& target, const std::string& body = "",
                const std::vector<std::pair<std::string, std::string>>& headers = {});
  void send_raw(const std::string& bytes);
  Reply read_reply();
  // Whether the server closes the connection (reads EOF) within the timeout.
  bool closed_by_server();
  void close();
  int fd() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One request on a fresh connection.
Reply http(int port, const std::string& method, const std::string& target, const std::string& body = "",
           const std::vector<std::pair<std::string, std::string>>& headers = {});

}  // namespace attend::test
