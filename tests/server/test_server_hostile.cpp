// Hostile HTTP: every malformed, oversized, slow or strange request gets a clean status
// (or a clean close) and the server stays healthy. Raw bytes on a socket, exactly as
// written.
#include <sys/socket.h>

#include <thread>

#include "server_fixture.hpp"

namespace attend::test {
namespace {

ServerOptions hostile_options() {
  ServerOptions o = test_options(false);
  o.read_timeout = 1;
  o.keep_alive_timeout = 1;
  o.payload_limit = 2'000'000;
  return o;
}

std::string post_request(const std::string& target, const std::string& body, const std::string& extra = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

std::string error_type(const Reply& r) { return json::parse(r.body).value("error_type", ""); }

}  // namespace

TEST_CASE("malformed HTTP is a 400 and the connection closes", "[server][hostile]") {
  TestServer s(hostile_options());
  for (const std::string& bytes : {std::string("GARBAGE\r\n\r\n"), std::string("POST /embed HTTP/1.1\r\nContent-Length: -5\r\n\r\n"),
                                   std::string("POST /embed HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
                                   std::string("POST /embed HTTP/1.1\r\nBad Header\r\n\r\n"),
                                   std::string("POST /embed HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")}) {
    INFO(bytes);
    Connection c(s.port(), std::chrono::seconds(5));
    c.send_raw(bytes);
    const Reply r = c.read_reply();
    CHECK(r.status == 400);
    CHECK(error_type(r) == "Validation");
    CHECK_FALSE(r.keep_alive);
  }
  CHECK(s.get("/health").status == 200);
}

TEST_CASE("headers over 16 KiB are a 431 — a body over the payload limit a 413 before it is read", "[server][hostile]") {
  TestServer s(hostile_options());
  {
    Connection c(s.port(), std::chrono::seconds(5));
    c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
    CHECK(c.read_reply().status == 431);
  }
  {
    // Only the headers: the answer comes without the 10 MB ever being sent.
    Connection c(s.port(), std::chrono::seconds(5));
    c.send_raw("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n");
    const Reply r = c.read_reply();
    REQUIRE_STATUS(r, 413);
    CHECK(json::parse(r.body)["error"].get<std::string>().find("payload limit of 2000000 bytes") != std::string::npos);
  }
  {
    // A 10 MB string, sent whole: 413, and the client reads it (the server drains what comes).
    const std::string body = json{{"inputs", std::string(10'000'000, 'x')}}.dump();
    Connection c(s.port(), std::chrono::seconds(10));
    std::thread sender([&] {
      try {
        c.send_raw(post_request("/embed", body));
      } catch (const std::exception&) {  // the server may stop reading once it has answered
      }
    });
    const Reply r = c.read_reply();
    sender.join();
    CHECK(r.status == 413);
  }
  {
    // Chunked bodies count too.
    Connection c(s.port(), std::chrono::seconds(5));
    std::string chunks = "POST /embed HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 40; ++i) chunks += "186A0\r\n" + std::string(100000, 'x') + "\r\n";  // 4 MB
    std::thread sender([&] {
      try {
        c.send_raw(chunks);
      } catch (const std::exception&) {
      }
    });
    CHECK(c.read_reply().status == 413);
    sender.join();
  }
  CHECK(s.get("/health").status == 200);
}

TEST_CASE("a slow client (slowloris) gets a 408 within the read timeout — an idle keep-alive connection is closed", "[server][hostile]") {
  TestServer s(hostile_options());
  {
    Connection c(s.port(), std::chrono::seconds(5));
    const auto start = Clock::now();
    const std::string request = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    std::thread trickle([&] {
      try {
        for (char ch : request + std::string(40, 'a')) {
          c.send_raw(std::string(1, ch));
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      } catch (const std::exception&) {  // closed by the server: expected
      }
    });
    const Reply r = c.read_reply();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    CHECK(r.status == 408);
    CHECK(seconds < 3);
    trickle.join();
  }
  {
    // Many slow clients at once cost no thread each: a fast one is still served at once.
    std::vector<std::unique_ptr<Connection>> slow;
    for (int i = 0; i < 50; ++i) {
      slow.push_back(std::make_unique<Connection>(s.port(), std::chrono::seconds(5)));
      slow.back()->send_raw("POST /embed HTTP/1.1\r\nHost: x\r\n");
    }
    const auto start = Clock::now();
    CHECK(s.post("/embed", {{"inputs", "still served"}}).status == 200);
    CHECK(std::chrono::duration<double>(Clock::now() - start).count() < 0.9);
    for (auto& c : slow) CHECK(c->read_reply().status == 408);
  }
  {
    // Keep-alive: a request, silence past the idle timeout, the server closes; a request
    // on the closed connection fails cleanly and a new connection works.
    Connection c(s.port(), std::chrono::seconds(5));
    CHECK(c.request("GET", "/health").status == 200);
    CHECK(c.closed_by_server());
    CHECK_THROWS(c.request("GET", "/health"));
    CHECK(s.get("/health").status == 200);
  }
}

TEST_CASE("bad JSON of every kind is a 400 naming what is wrong — the server stays up", "[server][hostile]") {
  TestServer s(hostile_options());
  struct Case {
    std::string body, needle;
  };
  const std::vector<Case> cases = {
      {"", "not valid JSON"},
      {"{", "not valid JSON"},
      {"null", "must be a JSON object"},
      {"\"text\"", "must be a JSON object"},
      {"{\"inputs\": \"\xff\xfe\"}", "not valid JSON"},  // invalid UTF-8
      {"{\"inputs\": \"\\ud800\"}", "not valid JSON"},   // a lone surrogate
      {"{\"inputs\": {\"a\": 1}}", "field 'inputs'"},
      {"{\"inputs\": [[\"a\"]]}", "field 'inputs', item 0"},
      {"{\"inputs\": [-1]}", "token 0"},
      {"{\"inputs\": [1.5]}", "token 0"},
      {"{\"inputs\": [4294967296]}", "token 0"},
      {"{\"inputs\": \"a\", \"truncate\": \"no\"}", "field 'truncate'"},
      {std::string(200000, '[') + std::string(200000, ']'), "field 'inputs'"},  // deep nesting (not an object: see below)
  };
  for (const Case& c : cases) {
    INFO(c.body.substr(0, 60));
    const Reply r = http(s.port(), "POST", "/embed", c.body);
    CHECK(r.status == 400);
    if (c.body.size() < 1000) CHECK(json::parse(r.body)["error"].get<std::string>().find(c.needle) != std::string::npos);
  }
  // Deep nesting inside an object, and a huge array: refused without a crash.
  CHECK(http(s.port(), "POST", "/embed", "{\"inputs\": " + std::string(100000, '[') + std::string(100000, ']') + "}").status == 400);
  json many = {{"inputs", std::vector<std::string>(100000, "a")}};
  CHECK(s.post("/embed", many).status == 413);
  CHECK(s.get("/health").status == 200);
}

TEST_CASE("a 10 MB string within the payload limit: embedded from its start, or a 422 with truncation off", "[server][hostile]") {
  ServerOptions o = hostile_options();
  o.models.resize(1);  // bert: 64 tokens
  o.payload_limit = 12'000'000;
  o.read_timeout = 30;
  TestServer s(o);
  std::string huge;
  while (huge.size() < 10'000'000) huge += "the quick brown fox ";
  const Reply cut = s.post("/embed", {{"inputs", huge}, {"normalize", false}});
  REQUIRE_STATUS(cut, 200);
  EmbedOptions raw;
  raw.normalize = 0;
  const auto expected = Encoder(encoder_dir("bert")).embed({huge.substr(0, 2000)}, raw)[0];  // also over 64 tokens: cut alike
  const json row = json::parse(cut.body)[0];
  REQUIRE(row.size() == expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) CHECK(row[k].get<double>() == Approx(expected[k]).margin(1e-5));
  const Reply refused = s.post("/embed", {{"inputs", huge}, {"truncate", false}});
  REQUIRE_STATUS(refused, 422);
  CHECK(json::parse(refused.body)["error"].get<std::string>().find("more tokens than the model's limit of 64") != std::string::npos);
  CHECK(s.get("/health").status == 200);
}

TEST_CASE("unknown routes and methods, pipelining, Expect: 100-continue, HTTP/1.0 and chunked bodies", "[server][hostile]") {
  TestServer s(hostile_options());
  {
    Connection c(s.port(), std::chrono::seconds(5));
    c.send_raw("BREW /embed HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    const Reply r = c.read_reply();
    CHECK(r.status == 405);
    CHECK(r.keep_alive);  // a clean refusal keeps the connection
    CHECK(c.request("GET", "/../../etc/passwd").status == 404);
    CHECK(c.request("GET", "/health").status == 200);
  }
  {
    // Two requests in one write: two answers, in order.
    Connection c(s.port(), std::chrono::seconds(5));
    c.send_raw(post_request("/embed", "{\"inputs\": \"one\"}") + post_request("/tokenize", "{\"inputs\": \"two\"}"));
    const Reply first = c.read_reply(), second = c.read_reply();
    CHECK(first.status == 200);
    CHECK(json::parse(first.body).size() == 1);
    CHECK(second.status == 200);
    CHECK(json::parse(second.body)[0][0]["text"] == "[CLS]");
  }
  {
    Connection c(s.port(), std::chrono::seconds(5));
    const std::string body = "{\"inputs\": \"continue\"}";
    c.send_raw("POST /embed HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n");
    CHECK(c.read_reply().status == 100);
    c.send_raw(body);
    CHECK(c.read_reply().status == 200);
  }
  {
    Connection c(s.port(), std::chrono::seconds(5));
    c.send_raw("GET /health HTTP/1.0\r\n\r\n");
    const Reply r = c.read_reply();
    CHECK(r.status == 200);
    CHECK_FALSE(r.keep_alive);
    CHECK(c.closed_by_server());
  }
  {
    Connection c(s.port(), std::chrono::seconds(5));
    c.send_raw("POST /embed HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"inp\r\n10\r\nuts\": \"chunked\"}\r\n0\r\n\r\n");
    CHECK(c.read_reply().status == 200);
  }
}

TEST_CASE("connections over --max-connections are answered 503 and closed", "[server][hostile]") {
  ServerOptions o = hostile_options();
  o.max_connections = 4;
  o.keep_alive_timeout = 5;
  TestServer s(o);
  std::vector<std::unique_ptr<Connection>> open;
  for (int i = 0; i < 4; ++i) {
    open.push_back(std::make_unique<Connection>(s.port(), std::chrono::seconds(5)));
    CHECK(open.back()->request("GET", "/health").status == 200);
  }
  Connection extra(s.port(), std::chrono::seconds(5));
  const Reply r = extra.read_reply();
  CHECK(r.status == 503);
  CHECK(error_type(r) == "Overloaded");
  open.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(s.get("/health").status == 200);
}

}  // namespace attend::test
