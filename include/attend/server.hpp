// attend — an HTTP server for embeddings, classification, reranking and translation,
// embeddable in any program (`attend serve` is this class behind command-line flags).
//
//   attend::ServerOptions options;
//   options.models.push_back({"minilm", "all-MiniLM-L6-v2/"});
//   attend::Server server(options);
//   server.start();          // listening at once; /health answers 503 until the models load
//   server.wait();           // until shutdown() (from another thread, a signal handler's thread…)
//
// Routes and JSON as the peers document them, so that their clients work unchanged:
// OpenAI's POST /v1/embeddings and GET /v1/models; Text Embeddings Inference's POST
// /embed, /rerank, /predict, /tokenize, /decode and GET /info, /health, /metrics;
// LibreTranslate's POST /translate (and attend's richer JSON for it). Concurrent requests
// are queued and packed into batches by tokens (dynamic batching), each request's
// results back in its order. docs/server.md describes the routes, the batching and the
// operations side (limits, timeouts, metrics, shutdown).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attend/attend.hpp"

namespace attend {

// One model directory a server serves: an encoder-only model (embeddings; a
// *ForSequenceClassification model: classification, and reranking when it is a
// cross-encoder) or an encoder-decoder (translation), told apart by its files.
struct ServedModel {
  std::string name;       // what requests call it ("model"); empty: the directory's last component
  std::string directory;
  EncoderOptions encoder{};        // encoder-only models: compute type, threads, max_length, pooling
  int normalize = -1;              // /v1/embeddings' L2 normalisation: -1 as the model, 0 never, 1 always
  LoadOptions load{};              // encoder-decoders: compute type, attention caches
  TranslatorOptions translator{};  // encoder-decoders: threads, limits of beam and lengths
};

struct ServerOptions {
  std::vector<ServedModel> models;  // at least one; requests that name none get the first of their kind
  std::string host = "127.0.0.1";   // the address to listen on (0.0.0.0: every interface)
  int port = 8080;                  // 0: a free port (Server::port() says which); -1: none (uds_path only)
  std::string uds_path;             // also listen on this Unix socket (created; removed at shutdown)
  std::string api_key;              // non-empty: every route but /health and /metrics needs
                                    // "Authorization: Bearer KEY" (compared in constant time)
  std::vector<std::string> cors_allow_origin;  // origins browsers may call from ("*": any); empty: no CORS headers
  std::int64_t payload_limit = 2000000;        // bytes of a request body; larger: 413
  std::int64_t max_concurrent_requests = 512;  // requests in flight at once; more: 429 at once (never an unbounded queue)
  std::int64_t max_batch_tokens = 16384;       // tokens of one batch the queue forms across requests (packed, no padding)
  std::int64_t max_batch_requests = 0;         // requests in one batch (0: as many as the tokens allow)
  std::int64_t max_client_batch_size = 32;     // texts in one request; more: 413
  std::int64_t batch_wait_us = 2000;           // how long a request waits for company while more are on their way
  bool auto_truncate = true;                   // requests that do not say: cut inputs over the model's limit (false: 422)
  double request_timeout = 0;                  // seconds from a request's arrival to its answer (0: none); then 504
  double read_timeout = 10;                    // seconds a request's headers and body may take to arrive (slow clients: 408)
  double keep_alive_timeout = 30;              // seconds an idle keep-alive connection is kept
  std::int64_t max_connections = 1024;         // open connections; more are answered 503 and closed
  int http_threads = 0;                        // threads of the HTTP side (parsing, tokenizing, JSON); 0: chosen
  bool json_output = false;                    // log (and the access log) as one JSON object per line
  bool access_log = true;                      // one line per request
  // Where log lines go (each without its newline); unset: standard error.
  std::function<void(const std::string& line)> log;
};

// Thread-safe. The destructor shuts the server down (gracefully) if it still runs.
class ATTEND_API Server {
 public:
  // Checks the options (attend::OptionError names the one at fault); loads nothing yet.
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds (attend::Error if the address or socket cannot be had), starts the HTTP threads
  // and loads the models in the background: requests for a model answer 503 until it is
  // loaded, /health until all are.
  void start();
  // Blocks until every model is loaded; rethrows the error of one that cannot be.
  void wait_until_ready();
  bool ready() const;
  // Graceful: stops accepting connections and requests (503), finishes every request
  // already accepted, then stops. Returns at once; callable from any thread, repeatedly.
  void shutdown();
  // Blocks until the server has stopped; rethrows a model's load error (a server whose
  // model cannot load stops).
  void wait();
  // As wait(), at most `seconds`: whether it has stopped.
  bool wait_for(double seconds);

  int port() const;         // the TCP port listened on (after start; -1 without TCP)
  std::string url() const;  // "http://127.0.0.1:8080"

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace attend
