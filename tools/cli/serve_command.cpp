// attend serve: an HTTP server over one or several model directories (attend::Server).
//
// Flags that fix a model (compute type, threads, lengths, pooling, normalisation) apply
// to the -m they follow: `-m a=DIR1 --compute-type int8 -m b=DIR2` gives a int8 and b
// the default; the same flags before the first -m apply to every model. SIGTERM or SIGINT shut it down gracefully (stop accepting, answer what was
// accepted, exit 0); a second one stops at once (exit 1).
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>

#include "attend/server.hpp"
#include "commands.hpp"
#include "flag_checks.hpp"
#include "interrupts.hpp"

namespace attend::cli {
namespace {

// The flags of one model, each kept as the text given (parsed once it is known which
// model it belongs to).
struct ModelFlag {
  const char* name;  // "--compute-type"
  const char* help;
  CLI::Validator check;
  bool is_flag = false;  // takes no value
  bool integer = false;
};

const std::vector<ModelFlag>& model_flags() {
  static const std::vector<ModelFlag> flags = {
      {"--compute-type",
       "Arithmetic of the matrix products: default (the model's stored type), auto (the fastest here), float32, int8, "
       "bfloat16, int8_bfloat16",
       CLI::IsMember({"default", "auto", "float32", "int8", "int8_float32", "bfloat16", "int8_bfloat16"})},
      {"--isa", "Kernels to use: avx512, avx2, sse2 (default: the best this CPU runs, or $ATTEND_ISA)",
       CLI::IsMember({"avx512_amx", "avx512_bf16", "avx512_vnni", "avx512", "avx2", "sse2"})},
      {"--kv-cache-type", "Translation: the decoder's attention caches: default, float32, bfloat16",
       CLI::IsMember({"default", "float32", "bfloat16"})},
      {"--threads", "Compute threads of the model in all (0: one per core)", at_least(0), false, true},
      {"--inter-threads", "Batches run at once (0: chosen)", at_least(0), false, true},
      {"--intra-threads", "Compute threads per batch (0: threads / inter-threads)", at_least(0), false, true},
      {"--max-length", "Encoders: tokens a text is cut to, special tokens included (0: the model's)", at_least(0), false, true},
      {"--pooling", "Encoders: pooling of the embeddings (default: the model's 1_Pooling, else mean)",
       CLI::IsMember({"cls", "mean", "max", "mean_sqrt_len", "weightedmean", "lasttoken"})},
      {"--normalize", "Encoders: /v1/embeddings L2-normalises (default: as the model, its Normalize module)",
       CLI::Validator(), true},
      {"--no-normalize", "Encoders: /v1/embeddings never normalises", CLI::Validator(), true},
      {"--max-batch-size", "Sequences per engine batch (the engine cuts the queue's batches further)", at_least(1), false, true},
      {"--max-source-length", "Translation: longer sources are cut (0: the model's positions)", at_least(0), false, true},
      {"--max-target-length", "Translation: most tokens a translation may have", at_least(1), false, true},
      {"--max-beam", "Translation: the largest beam (and n-best) a request may ask", at_least(1), false, true},
  };
  return flags;
}

struct ServeArgs {
  std::vector<std::string> models;
  std::map<std::string, std::vector<std::string>> values;  // per model flag, in order
  std::map<std::string, CLI::Option*> options;
  CLI::Option* model_option = nullptr;
  attend::ServerOptions server;
  std::string auto_truncate = "true";
  bool no_access_log = false;
};

// The flags' values, each for the model whose -m it follows (before any: all of them).
std::vector<attend::ServedModel> served_models(const ServeArgs& args, const CLI::App& app) {
  using Settings = std::map<std::string, std::string>;
  Settings common;
  std::vector<Settings> own(args.models.size());
  std::map<const CLI::Option*, std::size_t> used;
  int current = -1;
  for (const CLI::Option* o : app.parse_order()) {
    if (o == args.model_option) {
      ++current;
      continue;
    }
    for (const auto& [name, option] : args.options) {
      if (option != o) continue;
      const auto& given = args.values.at(name);
      const std::size_t k = used[o]++;
      const std::string value = k < given.size() ? given[k] : "";
      (current < 0 ? common : own[static_cast<std::size_t>(current)])[name] = value;
    }
  }
  std::vector<attend::ServedModel> out;
  for (std::size_t i = 0; i < args.models.size(); ++i) {
    Settings s = common;
    for (const auto& [k, v] : own[i]) s[k] = v;
    // --normalize and --no-normalize: the last one given for the model wins.
    if (own[i].count("--normalize") && own[i].count("--no-normalize"))
      throw UsageError("model " + std::to_string(i + 1) + ": --normalize and --no-normalize exclude each other");
    attend::ServedModel m;
    const std::string& spec = args.models[i];
    const auto equals = spec.find('=');
    if (equals != std::string::npos && spec.substr(0, equals).find('/') == std::string::npos) {
      m.name = spec.substr(0, equals);
      m.directory = spec.substr(equals + 1);
      if (m.name.empty() || m.directory.empty()) throw UsageError("-m " + spec + ": give NAME=DIR or DIR");
    } else {
      m.directory = spec;
    }
    auto get = [&](const char* flag) -> const std::string* {
      const auto it = s.find(flag);
      return it == s.end() ? nullptr : &it->second;
    };
    auto integer = [&](const char* flag, auto& field) {
      if (const std::string* v = get(flag)) field = static_cast<std::remove_reference_t<decltype(field)>>(std::stoll(*v));
    };
    if (const std::string* v = get("--compute-type")) m.encoder.compute_type = m.load.compute_type = *v;
    if (const std::string* v = get("--isa")) m.encoder.isa = m.load.isa = *v;
    if (const std::string* v = get("--kv-cache-type")) m.load.kv_cache_type = *v;
    if (const std::string* v = get("--pooling")) m.encoder.pooling = *v;
    integer("--threads", m.encoder.threads), integer("--threads", m.translator.threads);
    integer("--inter-threads", m.encoder.inter_threads), integer("--inter-threads", m.translator.inter_threads);
    integer("--intra-threads", m.encoder.intra_threads), integer("--intra-threads", m.translator.intra_threads);
    integer("--max-length", m.encoder.max_length);
    integer("--max-batch-size", m.encoder.max_batch_size), integer("--max-batch-size", m.translator.max_batch_size);
    integer("--max-source-length", m.translator.max_source_length);
    integer("--max-target-length", m.translator.max_target_length);
    integer("--max-beam", m.translator.max_beam_size);
    if (get("--normalize")) m.normalize = 1;
    if (get("--no-normalize")) m.normalize = 0;
    out.push_back(std::move(m));
  }
  return out;
}

// An option of attend::ServerOptions in the CLI's terms: max_batch_tokens → --max-batch-tokens.
std::string flag_for(const std::string& option) {
  if (option == "models") return "-m";
  std::string flag = "--" + option;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

int run_serve(ServeArgs& args, const CLI::App& app) {
  attend::ServerOptions& o = args.server;
  o.models = served_models(args, app);
  o.auto_truncate = args.auto_truncate == "true";
  o.access_log = !args.no_access_log;

  std::unique_ptr<attend::Server> server;
  try {
    server = std::make_unique<attend::Server>(o);
  } catch (const attend::OptionError& e) {
    throw UsageError(flag_for(e.option()) + " " + e.value() + ": " + e.requirement());
  }
  server->start();
  // SIGTERM, SIGINT (and SIGHUP) reach the watching thread of interrupts.hpp, blocked in
  // every other thread: the first drains the server, a second ends the process now.
  std::atomic<int> received{0};
  TakeInterrupts drain([&](int) {
    if (received.fetch_add(1) == 0) {
      server->shutdown();
    } else {
      std::fprintf(stderr, "attend serve: a second signal: stopping now, requests in flight are lost\n");
      std::_Exit(1);
    }
  });
  server->wait();
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& parent) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* app = parent.add_subcommand(
      "serve", "An HTTP server for embeddings, reranking, classification and translation (OpenAI-, TEI- and "
               "LibreTranslate-compatible routes, dynamic batching across requests)");
  app->footer(
      "Routes: POST /v1/embeddings, GET /v1/models (OpenAI); POST /embed, /rerank, /predict, /tokenize, /decode,\n"
      "GET /info, /health, /metrics (Text Embeddings Inference); POST /translate (LibreTranslate, and attend's own\n"
      "JSON with every decoding option). Model flags (--compute-type … --max-beam) apply to the -m they follow;\n"
      "before the first -m, to every model. docs/server.md has the details.\n");
  args->model_option = app->add_option("-m,--model", args->models,
                                       "A model directory to serve, or NAME=DIR (the name requests use; default: the "
                                       "directory's name). Repeat for several models")
                           ->required()
                           ->expected(1)
                           ->take_all();
  for (const ModelFlag& f : model_flags()) {
    auto& values = args->values[f.name];
    CLI::Option* option = nullptr;
    if (f.is_flag) {
      option = app->add_flag(f.name, f.help);
    } else {
      std::string name = f.name;
      if (name == "--threads") name = "-t,--threads";
      option = app->add_option(name, values, f.help)->expected(1)->take_all()->check(f.check);
      if (f.integer) option->type_name("INT");
    }
    args->options[f.name] = option;
  }
  attend::ServerOptions& s = args->server;
  app->add_option("--host", s.host, "Address to listen on (0.0.0.0: every interface)")->capture_default_str();
  app->add_option("-p,--port", s.port, "TCP port (0: any free one; -1: none, with --uds-path)")->capture_default_str();
  app->add_option("--uds-path", s.uds_path, "Also listen on this Unix socket");
  app->add_option("--api-key", s.api_key, "Every route but /health and /metrics needs 'Authorization: Bearer KEY'");
  app->add_option("--cors-allow-origin", s.cors_allow_origin, "An origin browsers may call from ('*': any); repeatable");
  app->add_option("--payload-limit", s.payload_limit, "Bytes of a request body; larger: 413")
      ->check(at_least(1))->capture_default_str();
  app->add_option("--max-concurrent-requests", s.max_concurrent_requests, "Requests in flight at once; more: 429")
      ->check(at_least(1))->capture_default_str();
  app->add_option("--max-batch-tokens", s.max_batch_tokens,
                  "Tokens of one batch the queue forms across requests (packed, no padding)")
      ->check(at_least(1))->capture_default_str();
  app->add_option("--max-batch-requests", s.max_batch_requests, "Requests in one batch (0: as many as the tokens allow)")
      ->check(at_least(0))->capture_default_str();
  app->add_option("--max-client-batch-size", s.max_client_batch_size, "Inputs in one request; more: 413")
      ->check(at_least(1))->capture_default_str();
  app->add_option("--batch-wait-us", s.batch_wait_us,
                  "Microseconds a batch waits for requests on their way before it starts (a lone request waits not at all)")
      ->check(at_least(0))->capture_default_str();
  app->add_option("--auto-truncate", args->auto_truncate,
                  "Cut inputs over a model's limit when a request does not say (false: 422)")
      ->check(CLI::IsMember({"true", "false"}))
      ->capture_default_str();
  app->add_option("--request-timeout", s.request_timeout, "Seconds from a request's arrival to its answer, then 504 (0: none)")
      ->capture_default_str();
  app->add_option("--read-timeout", s.read_timeout, "Seconds a request's headers and body may take to arrive, then 408")
      ->capture_default_str();
  app->add_option("--keep-alive-timeout", s.keep_alive_timeout, "Seconds an idle keep-alive connection stays open")
      ->capture_default_str();
  app->add_option("--max-connections", s.max_connections, "Open connections; more are answered 503 and closed")
      ->check(at_least(1))->capture_default_str();
  app->add_option("--http-threads", s.http_threads, "Threads that read, parse, tokenize and write (0: chosen)")
      ->check(at_least(0))->capture_default_str();
  app->add_flag("--json-output", s.json_output, "Log (and the access log) as one JSON object per line");
  app->add_flag("--no-access-log", args->no_access_log, "No log line per request");
  return {app, [args, app] { return run_serve(*args, *app); }};
}

}  // namespace attend::cli
