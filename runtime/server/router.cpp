#include "server/router.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "server/response_json.hpp"

namespace attend::server {

const std::vector<Router::Route>& Router::routes() {
  static const std::vector<Route> table = {
      {"GET", "/health", &Router::health, true},
      {"GET", "/metrics", &Router::metrics, true},
      {"GET", "/info", &Router::info},
      {"GET", "/v1/models", &Router::list_models, false, true},
      {"POST", "/v1/embeddings", &Router::openai_embeddings, false, true},
      {"POST", "/embeddings", &Router::openai_embeddings, false, true},  // TEI's alias
      {"POST", "/embed", &Router::tei_embed},
      {"POST", "/rerank", &Router::rerank},
      {"POST", "/predict", &Router::predict},
      {"POST", "/tokenize", &Router::tokenize},
      {"POST", "/decode", &Router::decode},
      {"POST", "/translate", &Router::translate},
      {"GET", "/languages", &Router::languages},
      // TEI's (and SageMaker's) aliases: / is /health, and the first model's own route.
      {"GET", "/", &Router::health, true},
      {"GET", "/ping", &Router::health, true},
      {"POST", "/", &Router::default_route},
      {"POST", "/invocations", &Router::default_route},
  };
  return table;
}

Router::Router(const ServerOptions& options, std::vector<std::unique_ptr<ModelService>>& models, Metrics& metrics, Log& log)
    : options_(options), models_(models), metrics_(metrics), log_(log), started_(std::time(nullptr)) {}

bool Router::ready() const {
  return std::all_of(models_.begin(), models_.end(), [](const auto& m) { return m->ready(); });
}

void Router::drain() { draining_.store(true); }

bool Router::wait_idle(double seconds) {
  std::unique_lock<std::mutex> lock(idle_mutex_);
  return idle_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return in_flight_.load() == 0; });
}

namespace {

// Constant-time comparison: how long it takes says nothing of where a guess differs.
bool same_secret(const std::string& given, const std::string& expected) {
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i)
    difference |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  return difference == 0;
}

}  // namespace

bool Router::authorized(const HttpRequest& request, const json* body) const {
  if (options_.api_key.empty()) return true;
  const std::string prefix = "Bearer ";
  if (request.authorization.size() > prefix.size() && request.authorization.compare(0, prefix.size(), prefix) == 0 &&
      same_secret(request.authorization.substr(prefix.size()), options_.api_key))
    return true;
  // LibreTranslate's clients put the key in the body.
  if (body) {
    const auto key = body->find("api_key");
    if (key != body->end() && key->is_string() && same_secret(key->get<std::string>(), options_.api_key)) return true;
  }
  return false;
}

void Router::add_cors(const HttpRequest& request, HttpResponse& response) const {
  if (options_.cors_allow_origin.empty() || request.origin.empty()) return;
  const auto& allowed = options_.cors_allow_origin;
  const bool any = std::find(allowed.begin(), allowed.end(), "*") != allowed.end();
  if (!any && std::find(allowed.begin(), allowed.end(), request.origin) == allowed.end()) return;
  response.headers.emplace_back("Access-Control-Allow-Origin", any ? "*" : request.origin);
  if (!any) response.headers.emplace_back("Vary", "Origin");
}

HttpResponse Router::error_response(bool openai, int status, const std::string& type, const std::string& message) const {
  json j;
  if (openai) {
    // OpenAI's shape, which its clients read: {"error": {"message", "type", "param", "code"}}.
    j["error"] = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", status}};
  } else {
    j["error"] = message;  // TEI's (and LibreTranslate's "error")
    j["error_type"] = type;
  }
  HttpResponse r;
  r.status = status;
  r.body = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

HttpResponse Router::refusal(int status, const std::string& message, const std::string& peer) {
  const char* type = status == 503 ? "Overloaded" : "Validation";
  HttpResponse r = error_response(false, status, type, message);
  metrics_.request("refused", status, 0);
  if (options_.access_log) log_.warn("refused", {{"status", status}, {"peer", peer}, {"error", message}});
  return r;
}

void Router::handle(HttpRequest&& request, std::shared_ptr<Exchange> exchange) {
  auto call = std::make_shared<Call>();
  call->request = std::move(request);
  call->exchange = std::move(exchange);
  ++in_flight_;
  const HttpRequest& r = call->request;

  const Route* route = nullptr;
  std::string allow;
  for (const Route& candidate : routes()) {
    if (r.path != candidate.path) continue;
    allow += (allow.empty() ? "" : ", ") + std::string(candidate.method);
    if (r.method == candidate.method) route = &candidate;
  }
  const bool models_path = r.path.rfind("/v1/models/", 0) == 0;
  if (route) {
    call->route = route->path;
    call->openai = route->openai;
  } else if (models_path) {
    call->route = "/v1/models/{model}";
    call->openai = true;
  }

  if (r.method == "OPTIONS" && (!allow.empty() || models_path)) {  // a CORS preflight
    HttpResponse preflight;
    preflight.status = 204;
    preflight.content_type = "text/plain";
    if (!options_.cors_allow_origin.empty()) {
      preflight.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      preflight.headers.emplace_back("Access-Control-Allow-Headers",
                                     r.request_headers.empty() ? "content-type, authorization" : r.request_headers);
      preflight.headers.emplace_back("Access-Control-Max-Age", "600");
    }
    return finish(call, std::move(preflight));
  }
  if (!route && models_path && r.method == "GET") {
    if (!authorized(r)) return fail(call, ApiError(401, "Unauthorized", "missing or wrong API key (Authorization: Bearer KEY)"));
    return list_models(call);
  }
  if (!route) {
    if (!allow.empty()) {
      HttpResponse wrong = error_response(call->openai, 405, "Validation", r.method + " " + r.path + ": allowed: " + allow);
      wrong.headers.emplace_back("Allow", allow);
      return finish(call, std::move(wrong));
    }
    return fail(call, not_found("no route " + r.method + " " + r.path +
                                " (the routes: /v1/embeddings, /v1/models, /embed, /rerank, /predict, /tokenize, "
                                "/decode, /translate, /info, /health, /metrics)"));
  }
  dispatch(call, *route);
}

void Router::dispatch(const CallPtr& call, const Route& route) {
  if (!route.open && route.path != std::string("/translate") && !authorized(call->request))
    return fail(call, ApiError(401, "Unauthorized", "missing or wrong API key (Authorization: Bearer KEY)"));
  if (draining_.load() && route.handler != &Router::metrics) {
    HttpResponse r = error_response(call->openai, 503, "Unhealthy", "the server is shutting down");
    r.close = true;
    return finish(call, std::move(r));
  }
  if (in_flight_.load() > options_.max_concurrent_requests && !route.open)
    return fail(call, overloaded("too many requests in flight (the server's --max-concurrent-requests " +
                                 std::to_string(options_.max_concurrent_requests) + "): retry later"));
  arm_timeout(call);
  try {
    (this->*route.handler)(call);
  } catch (const ApiError& e) {
    fail(call, e);
  } catch (const OptionError& e) {
    fail(call, bad_request("field '" + e.option() + "': " + e.value() + ": " + e.requirement()));
  } catch (const Error& e) {
    fail(call, bad_request(e.what()));
  } catch (const std::bad_alloc&) {
    fail(call, ApiError(500, "Backend", "out of memory"));
  } catch (const std::exception& e) {
    fail(call, ApiError(500, "Backend", e.what()));
  }
}

void Router::arm_timeout(const CallPtr& call) {
  if (options_.request_timeout <= 0) return;
  const auto deadline = call->request.arrived + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(options_.request_timeout));
  call->exchange->expire_at(deadline, [this, call] {
    fail(call, ApiError(504, "Timeout", "no answer within the request timeout of " + std::to_string(options_.request_timeout) + " s"));
  });
}

void Router::finish(const CallPtr& call, HttpResponse response) {
  if (call->finished.exchange(true)) return;
  add_cors(call->request, response);
  const double seconds = std::chrono::duration<double>(Clock::now() - call->request.arrived).count();
  const int status = call->exchange->abandoned() ? 499 : response.status;  // nobody to answer: the client left
  metrics_.request(call->route, status, seconds);
  if (options_.access_log) access_log(*call, status, seconds, response.body.size());
  call->exchange->respond(std::move(response));
  if (--in_flight_ == 0) {
    std::lock_guard<std::mutex> lock(idle_mutex_);
    idle_.notify_all();
  }
}

void Router::fail(const CallPtr& call, const ApiError& error) {
  finish(call, error_response(call->openai, error.status(), error.type(), error.what()));
}

void Router::reply_json(const CallPtr& call, std::string body) {
  HttpResponse r;
  r.body = std::move(body);
  finish(call, std::move(r));
}

void Router::access_log(const Call& call, int status, double seconds, std::size_t bytes_out) const {
  nlohmann::ordered_json f;
  f["method"] = call.request.method;
  f["path"] = call.request.path;
  f["status"] = status;
  f["duration_ms"] = std::round(seconds * 1e5) / 100;
  if (!call.model.empty()) f["model"] = call.model;
  if (call.sequences > 0) {
    f["inputs"] = call.sequences;
    f["tokens"] = call.tokens;
    f["queue_ms"] = std::round(call.timing.queue_seconds * 1e5) / 100;
    f["inference_ms"] = std::round(call.timing.inference_seconds * 1e5) / 100;
    f["batch_inputs"] = call.timing.batch_sequences;
    f["batch_requests"] = call.timing.batch_requests;
    f["lane"] = call.timing.lane;
    f["threads"] = call.timing.threads;
    if (call.timing.parts > 1) f["parts"] = call.timing.parts;
  }
  f["bytes_in"] = call.request.body.size();
  f["bytes_out"] = bytes_out;
  f["peer"] = call.request.peer;
  log_.info("request", f);
}

ModelService* Router::find(const std::string& name) const {
  for (const auto& m : models_)
    if (m->name() == name) return m.get();
  return nullptr;
}

void Router::check_ready(const ModelService& model) const {
  if (!model.ready()) throw unavailable("model '" + model.name() + "' is still loading: retry shortly");
}

bool Router::truncate_of(const json& body) const { return optional_bool(body, "truncate").value_or(options_.auto_truncate); }

bool Router::from_left_of(const json& body) {
  const auto direction = optional_string(body, "truncation_direction");
  if (!direction || *direction == "right" || *direction == "Right") return false;
  if (*direction == "left" || *direction == "Left") return true;
  throw bad_request("field 'truncation_direction': must be \"left\" or \"right\", got \"" + *direction + "\"");
}

namespace {

std::string served_names(const std::vector<std::unique_ptr<ModelService>>& models) {
  std::string out;
  for (const auto& m : models) out += (out.empty() ? "" : ", ") + m->name();
  return out;
}

const char* capability_name(Capability c) {
  switch (c) {
    case Capability::embed: return "embeddings";
    case Capability::classify: return "classification (a *ForSequenceClassification model)";
    case Capability::rerank: return "reranking (a cross-encoder: a classifier with one label)";
    case Capability::tokenize: return "tokenization (an encoder with a tokenizer.json)";
  }
  return "";
}

}  // namespace

EncoderService& Router::encoder_for(const CallPtr& call, const json& body, Capability need) {
  auto can = [&](const EncoderService& e) {
    if (!e.ready()) return true;  // said when it is checked
    switch (need) {
      case Capability::embed: return true;
      case Capability::classify: return !e.info().labels.empty();
      case Capability::rerank: return e.info().labels.size() == 1;
      case Capability::tokenize: return e.has_tokenizer();
    }
    return false;
  };
  EncoderService* chosen = nullptr;
  if (const auto name = optional_string(body, "model")) {
    ModelService* m = find(*name);
    if (!m) throw not_found("model '" + *name + "' is not served here (served: " + served_names(models_) + ")");
    chosen = dynamic_cast<EncoderService*>(m);
    if (!chosen)
      throw ApiError(424, "Validation",
                     "model '" + *name + "' is a translation model: " + call->request.path + " needs " + capability_name(need));
  } else {
    // The first encoder that can; for embeddings, one without a classification head first.
    for (int pass = 0; pass < 2 && !chosen; ++pass)
      for (const auto& m : models_)
        if (auto* e = dynamic_cast<EncoderService*>(m.get());
            e && can(*e) && (pass == 1 || need != Capability::embed || !e->ready() || e->info().labels.empty())) {
          chosen = e;
          break;
        }
    if (!chosen)
      throw ApiError(424, "Validation",
                     std::string("no model served here does ") + capability_name(need) + " (served: " + served_names(models_) + ")");
  }
  check_ready(*chosen);
  if (!can(*chosen))
    throw ApiError(424, "Validation", "model '" + chosen->name() + "' (" + chosen->kind() + ") cannot do " + capability_name(need));
  call->model = chosen->name();
  return *chosen;
}

TranslationService& Router::translator_for(const CallPtr& call, const json& body) {
  TranslationService* chosen = nullptr;
  if (const auto name = optional_string(body, "model")) {
    ModelService* m = find(*name);
    if (!m) throw not_found("model '" + *name + "' is not served here (served: " + served_names(models_) + ")");
    chosen = dynamic_cast<TranslationService*>(m);
    if (!chosen) throw ApiError(424, "Validation", "model '" + *name + "' is not a translation model");
  } else {
    // LibreTranslate's source and target name the model "SOURCE-TARGET" when one is; else
    // the first translation model serves every pair.
    const auto source = optional_string(body, "source"), target = optional_string(body, "target");
    if (source && target)
      chosen = dynamic_cast<TranslationService*>(find(*source + "-" + *target));
    for (const auto& m : models_)
      if (!chosen) chosen = dynamic_cast<TranslationService*>(m.get());
    if (!chosen) throw ApiError(424, "Validation", "no translation model is served here (served: " + served_names(models_) + ")");
  }
  check_ready(*chosen);
  call->model = chosen->name();
  return *chosen;
}

void Router::submit(const CallPtr& call, ModelService& model, std::shared_ptr<Job> job) {
  job->exchange = call->exchange;
  job->on_dropped = [this, call] { fail(call, ApiError(499, "Cancelled", "the client closed the connection")); };
  if (!model.submit(std::move(job))) fail(call, unavailable("the server is shutting down"));
}

void Router::default_route(const CallPtr& call) {
  const ModelService& first = *models_.front();
  const std::string kind = first.ready() ? first.kind() : "";
  if (kind.empty()) throw unavailable("model '" + first.name() + "' is still loading: retry shortly");
  if (kind == "embedding") return tei_embed(call);
  if (kind == "classifier") return predict(call);
  if (kind == "reranker") return rerank(call);
  translate(call);
}

void Router::health(const CallPtr& call) {
  if (draining_.load()) return fail(call, unavailable("the server is shutting down"));
  for (const auto& m : models_)
    if (!m->ready()) return fail(call, unavailable("model '" + m->name() + "' is still loading"));
  HttpResponse r;
  r.content_type = "text/plain";
  finish(call, std::move(r));
}

void Router::metrics(const CallPtr& call) {
  Metrics::Gauges gauges;
  std::vector<std::pair<std::string, double>> depth, free_lanes, ready_values;
  for (const auto& m : models_) {
    const std::string label = "model=\"" + label_value(m->name()) + "\"";
    depth.emplace_back(label, static_cast<double>(m->queue().depth()));
    free_lanes.emplace_back(label, static_cast<double>(m->queue().free_lanes()));
    ready_values.emplace_back(label, m->ready() ? 1 : 0);
  }
  gauges.emplace_back("attend_queue_depth", std::move(depth));
  gauges.emplace_back("attend_free_lanes", std::move(free_lanes));
  gauges.emplace_back("attend_model_ready", std::move(ready_values));
  gauges.push_back({"attend_requests_in_flight", {{"", static_cast<double>(in_flight_.load())}}});
  if (extra_gauges) extra_gauges(gauges);
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4";
  r.body = metrics_.render(gauges);
  finish(call, std::move(r));
}

void Router::info(const CallPtr& call) {
  nlohmann::ordered_json models = nlohmann::ordered_json::array();
  for (const auto& m : models_) models.push_back(model_info_json(*m, options_));
  nlohmann::ordered_json j = models.empty() ? nlohmann::ordered_json::object() : models.front();
  j["models"] = std::move(models);
  reply_json(call, j.dump(-1, ' ', false, json::error_handler_t::replace));
}

void Router::list_models(const CallPtr& call) {
  auto entry = [&](const ModelService& m) {
    return nlohmann::ordered_json{{"id", m.name()}, {"object", "model"}, {"created", started_}, {"owned_by", "attend"}};
  };
  const std::string prefix = "/v1/models/";
  if (call->request.path.rfind(prefix, 0) == 0) {  // GET /v1/models/{model}
    const std::string name = call->request.path.substr(prefix.size());
    const ModelService* m = find(name);
    if (!m) return fail(call, not_found("model '" + name + "' is not served here (served: " + served_names(models_) + ")"));
    return reply_json(call, entry(*m).dump());
  }
  nlohmann::ordered_json data = nlohmann::ordered_json::array();
  for (const auto& m : models_) data.push_back(entry(*m));
  reply_json(call, nlohmann::ordered_json{{"object", "list"}, {"data", std::move(data)}}.dump());
}

}  // namespace attend::server
