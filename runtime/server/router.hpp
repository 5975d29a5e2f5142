// The server's routes: dispatch by method and path, then what every request goes
// through — CORS, the API key, the cap on requests in flight (429), draining (503), the
// per-request timeout (504) — and, once, its answer: the error JSON of its API family,
// its metrics and its access-log line. The routes of each family live in their own file
// (embedding_routes.cpp, ranking_routes.cpp, tokenize_routes.cpp, translate_routes.cpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "attend/server.hpp"
#include "server/api_error.hpp"
#include "server/encoder_service.hpp"
#include "server/http_exchange.hpp"
#include "server/log.hpp"
#include "server/metrics.hpp"
#include "server/request_json.hpp"
#include "server/translation_service.hpp"

namespace attend::server {

// One request, from dispatch to its answer.
struct Call {
  HttpRequest request;
  std::shared_ptr<Exchange> exchange;
  std::string route = "other";  // the route's path, for metrics and logs
  bool openai = false;          // answer errors in OpenAI's shape
  std::string model;
  std::int64_t sequences = 0, tokens = 0;
  JobTiming timing;
  std::atomic<bool> finished{false};
};
using CallPtr = std::shared_ptr<Call>;

// What an encoder route needs of its model.
enum class Capability { embed, classify, rerank, tokenize };

class Router {
 public:
  Router(const ServerOptions& options, std::vector<std::unique_ptr<ModelService>>& models, Metrics& metrics, Log& log);

  void handle(HttpRequest&& request, std::shared_ptr<Exchange> exchange);
  // The answer to a request the listener refuses (malformed, too large, too slow).
  HttpResponse refusal(int status, const std::string& message, const std::string& peer);

  // From now on, new requests are answered 503.
  void drain();
  // Blocks until no request is in flight, at most `seconds`; whether none is.
  bool wait_idle(double seconds);
  std::int64_t in_flight() const { return in_flight_.load(); }
  bool ready() const;
  // Gauges for /metrics that the router does not own (connections).
  std::function<void(Metrics::Gauges&)> extra_gauges;

 private:
  using Handler = void (Router::*)(const CallPtr&);
  struct Route {
    const char* method;
    const char* path;
    Handler handler;
    bool open = false;    // no API key needed (/health, /metrics)
    bool openai = false;  // OpenAI's error shape
  };
  static const std::vector<Route>& routes();

  void dispatch(const CallPtr& call, const Route& route);
  bool authorized(const HttpRequest& request, const json* body = nullptr) const;
  void add_cors(const HttpRequest& request, HttpResponse& response) const;
  void finish(const CallPtr& call, HttpResponse response);
  void fail(const CallPtr& call, const ApiError& error);
  void reply_json(const CallPtr& call, std::string body);
  HttpResponse error_response(bool openai, int status, const std::string& type, const std::string& message) const;
  void access_log(const Call& call, int status, double seconds, std::size_t bytes_out) const;
  // Whether the call was answered already (its deadline passed, its client gone).
  void arm_timeout(const CallPtr& call);

  // Model lookup: by the request's "model" field, else the first that can.
  EncoderService& encoder_for(const CallPtr& call, const json& body, Capability need);
  TranslationService& translator_for(const CallPtr& call, const json& body);
  ModelService* find(const std::string& name) const;
  void check_ready(const ModelService& model) const;
  bool truncate_of(const json& body) const;
  static bool from_left_of(const json& body);
  // Queues a job on `model` or answers 503 if it is stopping.
  void submit(const CallPtr& call, ModelService& model, std::shared_ptr<Job> job);

  // The routes (each in its family's file).
  void health(const CallPtr& call);
  void metrics(const CallPtr& call);
  void info(const CallPtr& call);
  void list_models(const CallPtr& call);
  void openai_embeddings(const CallPtr& call);
  void tei_embed(const CallPtr& call);
  void rerank(const CallPtr& call);
  void predict(const CallPtr& call);
  void tokenize(const CallPtr& call);
  void decode(const CallPtr& call);
  void translate(const CallPtr& call);
  void languages(const CallPtr& call);
  void default_route(const CallPtr& call);  // POST / and /invocations: the first model's own route

  const ServerOptions& options_;
  std::vector<std::unique_ptr<ModelService>>& models_;
  Metrics& metrics_;
  Log& log_;
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<bool> draining_{false};
  std::mutex idle_mutex_;
  std::condition_variable idle_;
  std::int64_t started_ = 0;  // Unix time, for /v1/models' "created"
};

}  // namespace attend::server
