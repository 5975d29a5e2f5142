// attend::Server (include/attend/server.hpp): the listener, the router and one service
// per model, started, loaded and shut down in the order that loses no accepted request.
#include "attend/server.hpp"

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "server/http_listener.hpp"
#include "server/log.hpp"
#include "server/metrics.hpp"
#include "server/router.hpp"

namespace attend {

namespace {

// The model's name: given, or its directory's last component.
std::string name_of(const ServedModel& m) {
  if (!m.name.empty()) return m.name;
  std::filesystem::path p(m.directory);
  if (!p.has_filename()) p = p.parent_path();  // "models/minilm/"
  return p.filename().string();
}

void check(bool ok, const char* option, const std::string& value, const std::string& requirement) {
  if (!ok) throw OptionError(option, value, requirement);
}

void check_options(ServerOptions& o) {
  check(!o.models.empty(), "models", "none", "at least one model directory to serve");
  std::set<std::string> names;
  for (ServedModel& m : o.models) {
    check(std::filesystem::is_directory(m.directory), "models", m.directory, "must be a model directory");
    m.name = name_of(m);
    check(!m.name.empty(), "models", m.directory, "needs a name (NAME=DIR)");
    check(names.insert(m.name).second, "models", m.name, "two models have this name: give each its own (NAME=DIR)");
    check(m.normalize >= -1 && m.normalize <= 1, "normalize", std::to_string(m.normalize), "must be -1 (as the model), 0 or 1");
  }
  check(o.port >= -1 && o.port <= 65535, "port", std::to_string(o.port), "must be in [0, 65535] (-1: no TCP)");
  check(o.port >= 0 || !o.uds_path.empty(), "port", "-1", "needs uds_path: the server must listen somewhere");
  check(o.payload_limit >= 1, "payload_limit", std::to_string(o.payload_limit), "must be ≥ 1 byte");
  check(o.max_concurrent_requests >= 1, "max_concurrent_requests", std::to_string(o.max_concurrent_requests), "must be ≥ 1");
  check(o.max_batch_tokens >= 1, "max_batch_tokens", std::to_string(o.max_batch_tokens), "must be ≥ 1");
  check(o.max_batch_requests >= 0, "max_batch_requests", std::to_string(o.max_batch_requests), "must be ≥ 0 (0: no cap)");
  check(o.max_client_batch_size >= 1, "max_client_batch_size", std::to_string(o.max_client_batch_size), "must be ≥ 1");
  check(o.batch_wait_us >= 0 && o.batch_wait_us <= 10'000'000, "batch_wait_us", std::to_string(o.batch_wait_us),
        "must be in [0, 10000000]");
  check(o.request_timeout >= 0, "request_timeout", std::to_string(o.request_timeout), "must be ≥ 0 seconds (0: none)");
  check(o.read_timeout > 0, "read_timeout", std::to_string(o.read_timeout), "must be > 0 seconds");
  check(o.keep_alive_timeout > 0, "keep_alive_timeout", std::to_string(o.keep_alive_timeout), "must be > 0 seconds");
  check(o.max_connections >= 1, "max_connections", std::to_string(o.max_connections), "must be ≥ 1");
  check(o.http_threads >= 0 && o.http_threads <= 256, "http_threads", std::to_string(o.http_threads), "must be in [0, 256] (0: chosen)");
  if (o.http_threads == 0)
    o.http_threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 4, 1, 4);
}

std::chrono::milliseconds milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000 + 0.5));
}

}  // namespace

struct Server::State {
  ServerOptions options;
  server::Metrics metrics;
  std::unique_ptr<server::Log> log;
  std::vector<std::unique_ptr<server::ModelService>> models;
  std::unique_ptr<server::Router> router;
  std::unique_ptr<server::HttpListener> listener;
  std::thread loader, stopper;

  std::mutex mutex;
  std::condition_variable changed;
  bool started = false, stopping = false, stopped = false, loaded = false;
  std::exception_ptr load_error;

  void load_models();
  void stop_all();
};

Server::Server(ServerOptions options) : state_(std::make_unique<State>()) {
  check_options(options);
  state_->options = std::move(options);
}

Server::~Server() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.started) return;
  }
  shutdown();
  try {
    wait();
  } catch (...) {  // a load error, already logged
  }
  if (s.stopper.joinable()) s.stopper.join();
}

void Server::start() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  if (s.started) throw Error("the server is started already");
  const ServerOptions& o = s.options;
  s.log = std::make_unique<server::Log>(o.json_output, o.log);
  const runtime::RequestBatchLimits limits{o.max_batch_tokens, o.max_batch_requests, std::chrono::microseconds(o.batch_wait_us)};
  for (const ServedModel& m : o.models) {
    if (is_encoder_model(m.directory)) s.models.push_back(std::make_unique<server::EncoderService>(m, limits));
    else s.models.push_back(std::make_unique<server::TranslationService>(m, limits));
  }
  s.router = std::make_unique<server::Router>(s.options, s.models, s.metrics, *s.log);
  server::ListenerConfig c;
  c.host = o.host, c.port = o.port, c.uds_path = o.uds_path;
  c.read_timeout = milliseconds(o.read_timeout), c.keep_alive_timeout = milliseconds(o.keep_alive_timeout);
  c.payload_limit = static_cast<std::uint64_t>(o.payload_limit);
  c.max_connections = o.max_connections;
  c.threads = o.http_threads;
  server::Router& router = *s.router;
  s.listener = std::make_unique<server::HttpListener>(
      c, [&router](server::HttpRequest&& r, std::shared_ptr<server::Exchange> e) { router.handle(std::move(r), std::move(e)); },
      [&router](int status, const std::string& message, const std::string& peer) { return router.refusal(status, message, peer); });
  server::HttpListener& listener = *s.listener;
  router.extra_gauges = [&listener](server::Metrics::Gauges& g) {
    g.push_back({"attend_connections", {{"", static_cast<double>(listener.connections())}}});
  };
  s.listener->start();
  s.started = true;
  nlohmann::ordered_json where;
  if (o.port >= 0) where["url"] = url();
  if (!o.uds_path.empty()) where["unix_socket"] = o.uds_path;
  where["http_threads"] = o.http_threads;
  s.log->info("listening", where);
  lock.unlock();
  s.loader = std::thread([&s] { s.load_models(); });
}

void Server::State::load_models() {
  for (auto& m : models) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (stopping) return;
    }
    const auto started_at = std::chrono::steady_clock::now();
    try {
      m->load_and_start([l = listener.get()](std::function<void()> task) { l->post(std::move(task)); }, &metrics);
    } catch (...) {
      std::string what = "unknown error";
      try {
        throw;
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      log->error("cannot load a model: stopping", {{"model", m->name()}, {"directory", m->directory()}, {"error", what}});
      {
        std::lock_guard<std::mutex> lock(mutex);
        load_error = std::make_exception_ptr(Error("model '" + m->name() + "' (" + m->directory() + "): " + what));
      }
      changed.notify_all();
      return;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count();
    log->info("model loaded", {{"model", m->name()}, {"kind", m->kind()}, {"directory", m->directory()}, {"seconds", seconds}});
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    loaded = true;
  }
  changed.notify_all();
  log->info("ready");
}

void Server::wait_until_ready() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  s.changed.wait(lock, [&] { return s.loaded || s.load_error || s.stopped; });
  if (s.load_error) std::rethrow_exception(s.load_error);
  if (!s.loaded) throw Error("the server stopped before its models were loaded");
}

bool Server::ready() const {
  const State& s = *state_;
  return s.router && s.router->ready();
}

// Stop accepting, answer every request accepted (the queues run dry), then stop.
void Server::State::stop_all() {
  log->info("shutting down: no new requests; finishing the ones accepted", {{"in_flight", router->in_flight()}});
  router->drain();
  listener->stop_accepting();
  while (!router->wait_idle(5)) log->info("still finishing requests", {{"in_flight", router->in_flight()}});
  // Answers are written and their connections close; a client that does not read its
  // answer is cut by the write timeout.
  const auto grace = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.read_timeout + 1);
  while (listener->connections() > 0 && std::chrono::steady_clock::now() < grace)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (loader.joinable()) loader.join();
  for (auto& m : models) m->stop();
  listener->stop();
  log->info("stopped");
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopped = true;
  }
  changed.notify_all();
}

void Server::shutdown() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.started || s.stopping) return;
  s.stopping = true;
  s.stopper = std::thread([&s] { s.stop_all(); });
}

void Server::wait() {
  State& s = *state_;
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    if (!s.started) throw Error("the server is not started");
    s.changed.wait(lock, [&] { return s.stopped || (s.load_error && !s.stopping); });
  }
  if (s.load_error) {
    shutdown();  // a model that cannot load stops the server
    std::unique_lock<std::mutex> lock(s.mutex);
    s.changed.wait(lock, [&] { return s.stopped; });
    std::rethrow_exception(s.load_error);
  }
}

bool Server::wait_for(double seconds) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  const bool done = s.changed.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return s.stopped || s.load_error; });
  if (done && s.load_error && !s.stopped) {
    lock.unlock();
    wait();  // stops, then rethrows
  }
  if (done && s.load_error) std::rethrow_exception(s.load_error);
  return done && s.stopped;
}

int Server::port() const { return state_->listener ? state_->listener->port() : -1; }

std::string Server::url() const {
  const std::string& host = state_->options.host;
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port());
}

}  // namespace attend
