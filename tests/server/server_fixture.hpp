// A server on a free loopback port over the test models, for the server tests:
//   bert         tests/data/encoders/bert (a BERT with tokenizer.json: embeddings)
//   st           tests/data/encoders/st-mean (sentence-transformers, mean pooling, Normalize)
//   classifier   tests/data/encoders/bert-classifier (3 labels)
//   reranker     tests/data/encoders/bert-cross-encoder (1 label)
//   translator   the CLI fixture's SentencePiece model (ctest's "cli: build the test models")
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attend/server.hpp"
#include "http_client.hpp"

namespace attend::test {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

inline std::string encoder_dir(const std::string& name) { return std::string(ATTEND_SOURCE_DIR) + "/tests/data/encoders/" + name; }
inline std::string translator_dir() { return std::string(ATTEND_CLI_FIXTURE) + "/model"; }

inline ServerOptions test_options(bool with_translator = true) {
  ServerOptions o;
  o.port = 0;
  o.models.push_back({"bert", encoder_dir("bert")});
  o.models.push_back({"st", encoder_dir("st-mean")});
  o.models.push_back({"classifier", encoder_dir("bert-classifier")});
  o.models.push_back({"reranker", encoder_dir("bert-cross-encoder")});
  if (with_translator && std::filesystem::exists(translator_dir() + "/source.spm"))
    o.models.push_back({"translator", translator_dir()});
  for (auto& m : o.models) m.encoder.threads = m.translator.threads = 2;
  o.http_threads = 2;
  return o;
}

class TestServer {
 public:
  explicit TestServer(ServerOptions options) {
    options.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex_);
      log_.push_back(line);
    };
    server_ = std::make_unique<Server>(std::move(options));
    server_->start();
    server_->wait_until_ready();
  }
  ~TestServer() {
    server_->shutdown();
    server_->wait();
  }
  Server& server() { return *server_; }
  int port() const { return server_->port(); }
  std::vector<std::string> log() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return log_;
  }
  Reply post(const std::string& target, const json& body, const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return http(port(), "POST", target, body.dump(), headers);
  }
  Reply get(const std::string& target) { return http(port(), "GET", target); }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> log_;
  std::unique_ptr<Server> server_;
};

// The status, and the body when it is not the one expected (Catch2 prints it).
#define REQUIRE_STATUS(reply, expected) \
  do {                                  \
    INFO((reply).body);                 \
    REQUIRE((reply).status == (expected)); \
  } while (0)

}  // namespace attend::test
