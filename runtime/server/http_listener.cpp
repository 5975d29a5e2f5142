#include "server/http_listener.hpp"

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/version.hpp>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "attend/error.hpp"

namespace attend::server {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using error_code = beast::error_code;

constexpr std::size_t kFirstRead = 4096;

// What every connection needs of the listener, whatever its socket.
struct Shared {
  ListenerConfig config;
  RequestHandler on_request;
  RefusalHandler on_refusal;
  std::atomic<std::int64_t> connections{0};
  std::atomic<bool> accepting{true};

  // Every open connection, so that stop_accepting() can close the idle ones.
  struct Closable {
    virtual ~Closable() = default;
    virtual void close_if_idle() = 0;
  };
  std::mutex mutex;
  std::map<const void*, std::weak_ptr<Closable>> open;

  void add(const void* key, std::weak_ptr<Closable> c) {
    std::lock_guard<std::mutex> lock(mutex);
    open.emplace(key, std::move(c));
  }
  void remove(const void* key) {
    std::lock_guard<std::mutex> lock(mutex);
    open.erase(key);
  }
  std::vector<std::shared_ptr<Closable>> all() {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::shared_ptr<Closable>> out;
    for (auto& [key, weak] : open)
      if (auto c = weak.lock()) out.push_back(std::move(c));
    return out;
  }
};

// A refusal's status for an error while a request is read, or 0 when the connection
// just ends (the client closed it).
int refusal_status(const error_code& ec) {
  if (ec == http::error::body_limit) return 413;
  if (ec == http::error::header_limit) return 431;
  if (ec == beast::error::timeout) return 408;
  if (ec == http::error::end_of_stream || ec == http::error::partial_message || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::operation_aborted || ec == net::error::bad_descriptor ||
      ec == net::error::broken_pipe)
    return 0;
  if (ec.category() == make_error_code(http::error::bad_method).category()) return 400;  // Beast's parser refused it
  return 0;
}

std::string refusal_message(int status, const error_code& ec, std::uint64_t payload_limit, std::uint32_t header_limit) {
  switch (status) {
    case 413: return "the request body is larger than the payload limit of " + std::to_string(payload_limit) + " bytes";
    case 431: return "the request headers are larger than " + std::to_string(header_limit) + " bytes";
    case 408: return "the request did not arrive in time (headers and body within the read timeout)";
    default: return "malformed HTTP request: " + ec.message();
  }
}

template <class Protocol>
class Connection;

// The exchange of one request: answered once, from any thread, by posting to the
// connection's strand.
template <class Protocol>
class ConnectionExchange final : public Exchange {
 public:
  explicit ConnectionExchange(std::weak_ptr<Connection<Protocol>> connection) : connection_(std::move(connection)) {}

  void respond(HttpResponse response) override {
    if (responded_.exchange(true)) return;
    if (auto c = connection_.lock()) c->answer(std::move(response));
  }
  bool abandoned() const override { return responded_.load() || gone_.load(); }
  void expire_at(Clock::time_point deadline, std::function<void()> on_expiry) override {
    if (auto c = connection_.lock()) c->arm_deadline(deadline, std::move(on_expiry));
  }
  void mark_gone() { gone_.store(true); }
  bool responded() const { return responded_.load(); }

 private:
  std::weak_ptr<Connection<Protocol>> connection_;
  std::atomic<bool> responded_{false}, gone_{false};
};

template <class Protocol>
class Connection final : public std::enable_shared_from_this<Connection<Protocol>>, public Shared::Closable {
 public:
  using Stream = beast::basic_stream<Protocol>;
  using Socket = typename Protocol::socket;

  Connection(Socket&& socket, std::shared_ptr<Shared> shared, std::string peer, bool over_capacity)
      : stream_(std::move(socket)), timer_(stream_.get_executor()), read_timer_(stream_.get_executor()),
        shared_(std::move(shared)), peer_(std::move(peer)), over_capacity_(over_capacity) {
    ++shared_->connections;
  }
  ~Connection() override {
    --shared_->connections;
    shared_->remove(this);
  }

  void start() {
    shared_->add(this, this->weak_from_this());
    // The watch for a closed connection peeks synchronously: never block there (Asio's
    // own operations are asynchronous whatever this says).
    error_code ignored;
    stream_.socket().non_blocking(true, ignored);
    if (over_capacity_) {
      refuse(503, "too many connections (the server's --max-connections)");
      return;
    }
    read_request();
  }

  // From any thread: the answer goes out on the connection's strand.
  void answer(HttpResponse response) {
    net::post(stream_.get_executor(), [self = this->shared_from_this(), r = std::move(response)]() mutable {
      self->write(std::move(r));
    });
  }

  void arm_deadline(Clock::time_point deadline, std::function<void()> on_expiry) {
    net::post(stream_.get_executor(), [self = this->shared_from_this(), deadline, f = std::move(on_expiry)]() mutable {
      if (!self->exchange_ || self->exchange_->responded()) return;
      self->timer_.expires_at(deadline);
      self->timer_.async_wait([self, exchange = self->exchange_, f = std::move(f)](error_code ec) {
        if (!ec && !exchange->responded()) f();
      });
    });
  }

  void close_if_idle() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      if (self->idle_) self->close();
    });
  }

 private:
  // Waits for the next request's first byte (keep-alive idle time), then reads it.
  void read_request() {
    parser_.emplace();
    parser_->header_limit(shared_->config.header_limit);
    parser_->body_limit(shared_->config.payload_limit);
    exchange_.reset();
    if (!shared_->accepting.load()) return close();
    if (buffer_.size() > 0) {  // bytes of the next request arrived with the last one
      arrived_ = Clock::now();
      return read_header();
    }
    idle_ = true;
    stream_.expires_after(shared_->config.keep_alive_timeout);
    stream_.async_read_some(buffer_.prepare(kFirstRead),
                            [self = this->shared_from_this()](error_code ec, std::size_t n) { self->on_first_bytes(ec, n); });
  }

  void on_first_bytes(error_code ec, std::size_t n) {
    idle_ = false;
    if (ec) return close();  // quiet too long, or closed by the client: nothing to answer
    buffer_.commit(n);
    arrived_ = Clock::now();
    read_header();
  }

  void read_header() {
    // The whole request — headers and body — within read_timeout of its first byte. The
    // timer cancels the read (rather than closing the socket, as the stream's own
    // timeout does) so that the client still gets its 408.
    stream_.expires_never();
    reading_ = true;
    read_timer_.expires_after(shared_->config.read_timeout);
    read_timer_.async_wait([self = this->shared_from_this()](error_code ec) {
      if (ec || !self->reading_) return;
      self->timed_out_ = true;
      error_code ignored;
      self->stream_.socket().cancel(ignored);
    });
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(error_code ec) {
    if (ec) return fail(ec);
    const auto length = parser_->content_length();
    if (length && *length > shared_->config.payload_limit) return fail(http::error::body_limit);
    const auto& header = parser_->get();
    const auto expect = header[http::field::expect];
    if (beast::iequals(expect, "100-continue")) {
      continue_.emplace(http::status::continue_, header.version());
      http::async_write(stream_, *continue_, [self = this->shared_from_this()](error_code ec, std::size_t) {
        if (ec) return self->close();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](error_code ec, std::size_t) { self->on_body(ec); });
  }

  void on_body(error_code ec) {
    if (ec) return fail(ec);
    end_reading();
    auto& message = parser_->get();
    keep_alive_ = message.keep_alive();
    version_ = message.version();
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.path = request.target.substr(0, request.target.find('?'));
    request.authorization = std::string(message[http::field::authorization]);
    request.origin = std::string(message[http::field::origin]);
    request.content_type = std::string(message[http::field::content_type]);
    request.request_headers = std::string(message[http::field::access_control_request_headers]);
    request.body = std::move(message.body());
    request.peer = peer_;
    request.arrived = arrived_;
    parser_.reset();
    exchange_ = std::make_shared<ConnectionExchange<Protocol>>(this->weak_from_this());
    watch_for_close();
    shared_->on_request(std::move(request), exchange_);
  }

  // While a request is worked on, a readable socket means the client closed it (or sent
  // the next request early, which is left for later).
  void watch_for_close() {
    const std::uint64_t generation = ++watch_generation_;
    stream_.socket().async_wait(Socket::wait_read, [self = this->shared_from_this(), generation](error_code ec) {
      if (ec || generation != self->watch_generation_ || !self->exchange_ || self->exchange_->responded()) return;
      char byte = 0;
      error_code peek;
      const std::size_t n = self->stream_.socket().receive(net::buffer(&byte, 1), Socket::message_peek, peek);
      if (peek == net::error::would_block || peek == net::error::try_again) return self->watch_for_close();
      if (n == 0 || peek) {
        self->gone_ = true;
        self->exchange_->mark_gone();
      }
      // n > 0: an early next request, read once this one is answered.
    });
  }

  void write(HttpResponse r) {
    ++watch_generation_;
    error_code ignored;
    stream_.socket().cancel(ignored);  // the watch for a closed connection
    timer_.cancel();
    if (gone_) return close();
    const bool keep = keep_alive_ && !r.close && shared_->accepting.load();
    response_.emplace(static_cast<http::status>(r.status), version_);
    response_->set(http::field::server, "attend");
    response_->set(http::field::content_type, r.content_type);
    for (const auto& [name, value] : r.headers) response_->set(name, value);
    response_->keep_alive(keep);
    response_->body() = std::move(r.body);
    response_->prepare_payload();
    stream_.expires_after(shared_->config.read_timeout);  // a client that does not read its answer
    http::async_write(stream_, *response_, [self = this->shared_from_this(), keep](error_code ec, std::size_t) {
      self->response_.reset();
      if (ec) return self->close();
      if (self->refused_) return self->linger();
      if (!keep) return self->close();
      self->read_request();
    });
  }

  // After a refusal the client may still be sending (a body over the limit): closing now
  // would reset the connection before it reads its answer. Half-close, read and drop
  // what still comes for a while (as nginx's lingering close), then close.
  void linger() {
    error_code ignored;
    stream_.socket().shutdown(Socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(2));
    discard();
  }

  void discard() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(kFirstRead), [self = this->shared_from_this()](error_code ec, std::size_t) {
      if (ec) return self->close();
      self->discard();
    });
  }

  void end_reading() {
    reading_ = false;
    read_timer_.cancel();
  }

  void fail(error_code ec) {
    end_reading();
    if (timed_out_) ec = beast::error::timeout;
    const int status = refusal_status(ec);
    if (status == 0) return close();
    refuse(status, refusal_message(status, ec, shared_->config.payload_limit, shared_->config.header_limit));
  }

  // Answers a request the listener refuses itself, then closes.
  void refuse(int status, const std::string& message) {
    parser_.reset();
    keep_alive_ = false;
    refused_ = true;
    HttpResponse r = shared_->on_refusal(status, message, peer_);
    r.close = true;
    write(std::move(r));
  }

  void close() {
    error_code ignored;
    stream_.socket().shutdown(Socket::shutdown_both, ignored);
    stream_.close();
    timer_.cancel();
    read_timer_.cancel();
  }

  Stream stream_;
  net::steady_timer timer_;       // the exchange's deadline
  net::steady_timer read_timer_;  // the request's read timeout
  std::shared_ptr<Shared> shared_;
  std::string peer_;
  bool over_capacity_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::empty_body>> continue_;
  std::optional<http::response<http::string_body>> response_;
  std::shared_ptr<ConnectionExchange<Protocol>> exchange_;
  Clock::time_point arrived_;
  std::uint64_t watch_generation_ = 0;
  unsigned version_ = 11;
  bool keep_alive_ = true, idle_ = false, gone_ = false, reading_ = false, timed_out_ = false, refused_ = false;
};

template <class Protocol>
std::string peer_of(const typename Protocol::socket& socket);

template <>
std::string peer_of<net::ip::tcp>(const net::ip::tcp::socket& socket) {
  error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "?";
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

template <>
std::string peer_of<net::local::stream_protocol>(const net::local::stream_protocol::socket&) {
  return "unix";
}

template <class Protocol>
class Acceptor : public std::enable_shared_from_this<Acceptor<Protocol>> {
 public:
  Acceptor(net::io_context& io, typename Protocol::acceptor&& acceptor, std::shared_ptr<Shared> shared)
      : io_(io), acceptor_(std::move(acceptor)), shared_(std::move(shared)) {}

  void accept() {
    acceptor_.async_accept(net::make_strand(io_), [self = this->shared_from_this()](error_code ec,
                                                                                   typename Protocol::socket socket) {
      if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) return;
      if (!ec) {
        const bool over = self->shared_->connections.load() >= self->shared_->config.max_connections;
        std::string peer = peer_of<Protocol>(socket);
        std::make_shared<Connection<Protocol>>(std::move(socket), self->shared_, std::move(peer), over)->start();
      }
      self->accept();  // an accept error (out of descriptors) drops that connection only
    });
  }

  void close() {
    net::post(acceptor_.get_executor(), [self = this->shared_from_this()] {
      error_code ignored;
      self->acceptor_.close(ignored);
    });
  }

 private:
  net::io_context& io_;
  typename Protocol::acceptor acceptor_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace

struct HttpListener::Impl {
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  net::io_context io;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::shared_ptr<Acceptor<net::ip::tcp>> tcp;
  std::shared_ptr<Acceptor<net::local::stream_protocol>> uds;
  std::vector<std::thread> threads;
  int port = -1;
  bool stopped = false;
  std::mutex mutex;
};

HttpListener::HttpListener(ListenerConfig config, RequestHandler on_request, RefusalHandler on_refusal)
    : impl_(std::make_shared<Impl>()) {
  impl_->shared->config = std::move(config);
  impl_->shared->on_request = std::move(on_request);
  impl_->shared->on_refusal = std::move(on_refusal);
}

HttpListener::~HttpListener() { stop(); }

void HttpListener::start() {
  Impl& m = *impl_;
  const ListenerConfig& c = m.shared->config;
  if (c.port >= 0) {
    error_code ec;
    const auto address = net::ip::make_address(c.host, ec);
    if (ec) throw Error("--host " + c.host + ": not an IP address (" + ec.message() + ")");
    net::ip::tcp::acceptor acceptor(m.io);
    const net::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(c.port));
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (ec) throw Error("cannot listen on " + c.host + ":" + std::to_string(c.port) + ": " + ec.message());
    m.port = acceptor.local_endpoint().port();
    m.tcp = std::make_shared<Acceptor<net::ip::tcp>>(m.io, std::move(acceptor), m.shared);
  }
  if (!c.uds_path.empty()) {
    std::error_code stale;
    std::filesystem::remove(c.uds_path, stale);  // a socket left by a server that was killed
    error_code ec;
    net::local::stream_protocol::acceptor acceptor(m.io);
    const net::local::stream_protocol::endpoint endpoint(c.uds_path);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (ec) throw Error("cannot listen on the Unix socket " + c.uds_path + ": " + ec.message());
    m.uds = std::make_shared<Acceptor<net::local::stream_protocol>>(m.io, std::move(acceptor), m.shared);
  }
  if (m.tcp) m.tcp->accept();
  if (m.uds) m.uds->accept();
  m.work.emplace(m.io.get_executor());
  for (int i = 0; i < std::max(1, c.threads); ++i) m.threads.emplace_back([&io = m.io] { io.run(); });
}

int HttpListener::port() const { return impl_->port; }

void HttpListener::post(std::function<void()> task) { net::post(impl_->io, std::move(task)); }

void HttpListener::stop_accepting() {
  Impl& m = *impl_;
  m.shared->accepting.store(false);
  if (m.tcp) m.tcp->close();
  if (m.uds) m.uds->close();
  for (auto& c : m.shared->all()) c->close_if_idle();
}

void HttpListener::stop() {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  if (m.stopped) return;
  m.stopped = true;
  stop_accepting();
  m.work.reset();
  m.io.stop();
  for (auto& t : m.threads) t.join();
  m.threads.clear();
  if (!m.shared->config.uds_path.empty() && m.uds) {
    std::error_code ignored;
    std::filesystem::remove(m.shared->config.uds_path, ignored);
  }
}

std::int64_t HttpListener::connections() const { return impl_->shared->connections.load(); }

}  // namespace attend::server
