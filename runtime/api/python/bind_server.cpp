// attend._attend.Server: the HTTP server (include/attend/server.hpp). The server runs on
// its own C++ threads, none of which needs the GIL; every call that waits releases it,
// so Python's signal handlers and other threads go on meanwhile. attend/server.py is
// the face (attend.serve, python -m attend serve).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "attend/server.hpp"
#include "bindings.hpp"

namespace attend::python {

void bind_server(nb::module_& m) {
  nb::class_<ServedModel>(m, "ServedModel", "One model directory a server serves, and the options that fix it.")
      .def(
          "__init__",
          [](ServedModel* self, const std::string& directory, const std::string& name, const std::string& compute_type,
             const std::string& isa, const std::string& kv_cache_type, int threads, int inter_threads, int intra_threads,
             std::int64_t max_length, const std::string& pooling, int normalize, std::int64_t max_batch_size,
             std::int64_t max_source_length, std::int64_t max_target_length, std::int64_t max_beam) {
            auto* s = new (self) ServedModel();
            s->name = name, s->directory = directory;
            s->encoder.compute_type = s->load.compute_type = compute_type;
            s->encoder.isa = s->load.isa = isa;
            s->load.kv_cache_type = kv_cache_type;
            s->encoder.threads = s->translator.threads = threads;
            s->encoder.inter_threads = s->translator.inter_threads = inter_threads;
            s->encoder.intra_threads = s->translator.intra_threads = intra_threads;
            s->encoder.max_length = max_length;
            s->encoder.pooling = pooling;
            s->normalize = normalize;
            s->encoder.max_batch_size = s->translator.max_batch_size = max_batch_size;
            s->translator.max_source_length = max_source_length;
            s->translator.max_target_length = max_target_length;
            s->translator.max_beam_size = max_beam;
          },
          nb::arg("directory"), nb::kw_only(), nb::arg("name") = "", nb::arg("compute_type") = "default",
          nb::arg("isa") = "", nb::arg("kv_cache_type") = "default", nb::arg("threads") = 0, nb::arg("inter_threads") = 0,
          nb::arg("intra_threads") = 0, nb::arg("max_length") = 0, nb::arg("pooling") = "", nb::arg("normalize") = -1,
          nb::arg("max_batch_size") = 32, nb::arg("max_source_length") = 0, nb::arg("max_target_length") = 256,
          nb::arg("max_beam") = 4)
      .def_prop_ro("name", [](const ServedModel& s) { return s.name; })
      .def_prop_ro("directory", [](const ServedModel& s) { return s.directory; });

  using O = ServerOptions;
  nb::class_<O>(m, "ServerOptions", "attend::ServerOptions: where a server listens and its limits.")
      .def(nb::init<>())
      .def_rw("models", &O::models)
      .def_rw("host", &O::host)
      .def_rw("port", &O::port)
      .def_rw("uds_path", &O::uds_path)
      .def_rw("api_key", &O::api_key)
      .def_rw("cors_allow_origin", &O::cors_allow_origin)
      .def_rw("payload_limit", &O::payload_limit)
      .def_rw("max_concurrent_requests", &O::max_concurrent_requests)
      .def_rw("max_batch_tokens", &O::max_batch_tokens)
      .def_rw("max_batch_requests", &O::max_batch_requests)
      .def_rw("max_client_batch_size", &O::max_client_batch_size)
      .def_rw("batch_wait_us", &O::batch_wait_us)
      .def_rw("auto_truncate", &O::auto_truncate)
      .def_rw("request_timeout", &O::request_timeout)
      .def_rw("read_timeout", &O::read_timeout)
      .def_rw("keep_alive_timeout", &O::keep_alive_timeout)
      .def_rw("max_connections", &O::max_connections)
      .def_rw("http_threads", &O::http_threads)
      .def_rw("json_output", &O::json_output)
      .def_rw("access_log", &O::access_log);

  nb::class_<Server>(m, "Server", "attend::Server: an HTTP server over model directories (attend.serve is its face).")
      .def(nb::init<ServerOptions>(), nb::arg("options"))
      .def(
          "start", [](Server& s) { s.start(); },
          "Binds and starts serving; the models load in the background (/health: 503 until they have).")
      .def(
          "wait_until_ready",
          [](Server& s) {
            nb::gil_scoped_release released;
            s.wait_until_ready();
          },
          "Blocks until every model is loaded; raises the error of one that cannot be.")
      .def_prop_ro("ready", &Server::ready)
      .def("shutdown", &Server::shutdown,
           "Graceful: no new requests; the ones accepted are answered; then the server stops. Returns at once.")
      .def(
          "wait_for",
          [](Server& s, double seconds) {
            nb::gil_scoped_release released;
            return s.wait_for(seconds);
          },
          nb::arg("seconds"), "Waits at most `seconds` for the server to stop: whether it has.")
      .def(
          "wait",
          [](Server& s) {
            nb::gil_scoped_release released;
            s.wait();
          },
          "Blocks until the server has stopped.")
      .def_prop_ro("port", &Server::port)
      .def_prop_ro("url", &Server::url);
}

}  // namespace attend::python
