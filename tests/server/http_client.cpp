#include "http_client.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>

namespace attend::test {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

struct Connection::Impl {
  net::io_context io;
  std::unique_ptr<net::ip::tcp::socket> tcp;                  // one of the two
  std::unique_ptr<net::local::stream_protocol::socket> local;
  beast::flat_buffer buffer;

  explicit Impl(int port) : tcp(std::make_unique<net::ip::tcp::socket>(io)) {
    tcp->connect({net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    tcp->set_option(net::ip::tcp::no_delay(true));
  }
  explicit Impl(const std::string& path) : local(std::make_unique<net::local::stream_protocol::socket>(io)) {
    local->connect(net::local::stream_protocol::endpoint(path));
  }
  int fd() { return static_cast<int>(tcp ? tcp->native_handle() : local->native_handle()); }
  template <class F>
  auto with(F&& f) {
    return tcp ? f(*tcp) : f(*local);
  }
};

namespace {

void set_timeout(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

}  // namespace

Connection::Connection(int port, std::chrono::milliseconds timeout) : impl_(std::make_unique<Impl>(port)) {
  set_timeout(impl_->fd(), timeout);
}

Connection::Connection(const std::string& unix_socket, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(unix_socket)) {
  set_timeout(impl_->fd(), timeout);
}

Connection::~Connection() = default;

int Connection::fd() const { return impl_->fd(); }

Reply Connection::request(const std::string& method, const std::string& target, const std::string& body,
                          const std::vector<std::pair<std::string, std::string>>& headers) {
  bhttp::request<bhttp::string_body> r{bhttp::string_to_verb(method), target, 11};
  r.set(bhttp::field::host, "localhost");
  if (!body.empty() || method == "POST") r.set(bhttp::field::content_type, "application/json");
  for (const auto& [name, value] : headers) r.set(name, value);
  r.body() = body;
  r.prepare_payload();
  beast::error_code ec;
  impl_->with([&](auto& s) { bhttp::write(s, r, ec); });
  if (ec) throw std::runtime_error("write: " + ec.message());
  return read_reply();
}

void Connection::send_raw(const std::string& bytes) {
  beast::error_code ec;
  impl_->with([&](auto& s) { net::write(s, net::buffer(bytes), ec); });
  if (ec) throw std::runtime_error("send: " + ec.message());
}

Reply Connection::read_reply() {
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(1ull << 30);
  beast::error_code ec;
  impl_->with([&](auto& s) { bhttp::read(s, impl_->buffer, parser, ec); });
  if (ec) throw std::runtime_error("read: " + ec.message());
  auto& m = parser.get();
  Reply reply;
  reply.status = static_cast<int>(m.result_int());
  reply.body = std::move(m.body());
  reply.keep_alive = m.keep_alive();
  for (const auto& field : m) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    reply.headers[name] = std::string(field.value());
  }
  return reply;
}

bool Connection::closed_by_server() {
  char byte = 0;
  const auto n = ::recv(fd(), &byte, 1, 0);
  return n == 0;
}

void Connection::close() {
  beast::error_code ec;
  impl_->with([&](auto& s) {
    s.shutdown(std::remove_reference_t<decltype(s)>::shutdown_both, ec);
    s.close(ec);
  });
}

Reply http(int port, const std::string& method, const std::string& target, const std::string& body,
           const std::vector<std::pair<std::string, std::string>>& headers) {
  Connection c(port);
  return c.request(method, target, body, headers);
}

}  // namespace attend::test
