"""``attend serve`` from Python: an HTTP server for embeddings, reranking, classification
and translation, with OpenAI-, Text Embeddings Inference- and LibreTranslate-compatible
routes and dynamic batching across requests (docs/server.md)::

    import attend
    attend.serve("minilm=all-MiniLM-L6-v2/", port=8080)          # blocks; Ctrl-C stops it

    with attend.serve("all-MiniLM-L6-v2/", port=0, block=False) as server:
        requests.post(server.url + "/embed", json={"inputs": "Hello"})

or from a shell, ``python -m attend serve -m all-MiniLM-L6-v2/ --port 8080`` (the flags
of ``attend serve``). The server runs on C++ threads that never take the GIL.
"""

from __future__ import annotations

import signal
import threading
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from . import _attend

ModelSpec = Union[str, Mapping[str, Any], "_attend.ServedModel"]

_MODEL_OPTIONS = ("compute_type", "isa", "kv_cache_type", "threads", "inter_threads", "intra_threads", "max_length",
                  "pooling", "normalize", "max_batch_size", "max_source_length", "max_target_length", "max_beam")


def served_model(spec: ModelSpec, **defaults: Any) -> "_attend.ServedModel":
    """One model of a server: ``"DIR"``, ``"NAME=DIR"``, a mapping ``{"directory": …,
    "name": …, "compute_type": …}`` or a :class:`ServedModel`; ``defaults`` (the model
    options: compute_type, threads, max_length, pooling, normalize, …) apply where the
    spec does not say."""
    if isinstance(spec, _attend.ServedModel):
        return spec
    if isinstance(spec, str):
        name, sep, directory = spec.partition("=")
        if not sep or "/" in name:
            name, directory = "", spec
        spec = {"directory": directory, "name": name}
    if not isinstance(spec, Mapping):
        raise TypeError(f"a model is a directory, NAME=DIR, a mapping or attend.ServedModel, not {type(spec).__name__}")
    unknown = set(spec) - set(_MODEL_OPTIONS) - {"directory", "name"}
    if unknown:
        raise ValueError(f"unknown model option(s): {', '.join(sorted(unknown))} (known: {', '.join(_MODEL_OPTIONS)})")
    options = {**{k: v for k, v in defaults.items() if v is not None}, **spec}
    if "directory" not in options:
        raise ValueError("a model mapping needs its 'directory'")
    if isinstance(options.get("normalize"), bool):
        options["normalize"] = 1 if options["normalize"] else 0
    directory = options.pop("directory")
    return _attend.ServedModel(str(directory), **options)


class Server:
    """A running ``attend serve``: ``url``, ``port``, ``ready``, ``shutdown()``,
    ``wait(timeout)``; a context manager that shuts it down (gracefully) on exit."""

    def __init__(self, options: "_attend.ServerOptions") -> None:
        self._server = _attend.Server(options)
        self._server.start()

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def ready(self) -> bool:
        return self._server.ready

    def wait_until_ready(self) -> "Server":
        """Blocks until every model is loaded; raises RuntimeError for one that cannot be."""
        self._server.wait_until_ready()
        return self

    def shutdown(self) -> None:
        """No new requests (503); the accepted ones are answered; then the server stops."""
        self._server.shutdown()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits for the server to stop (at most ``timeout`` seconds): whether it has.
        Python's signal handlers run meanwhile (the wait is cut into short ones)."""
        step, waited = 0.2, 0.0
        while timeout is None or waited < timeout:
            chunk = step if timeout is None else min(step, timeout - waited)
            if self._server.wait_for(chunk):
                return True
            waited += chunk
        return False

    def close(self) -> None:
        """Stops accepting, finishes what is queued and waits for the server to end
        (``shutdown`` then ``wait``; what ``with Server(...)`` does on leaving)."""
        self.shutdown()
        self.wait()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def serve(*models: ModelSpec, host: str = "127.0.0.1", port: int = 8080, uds_path: Optional[str] = None,
          api_key: Optional[str] = None, cors_allow_origin: Iterable[str] = (), payload_limit: int = 2_000_000,
          max_concurrent_requests: int = 512, max_batch_tokens: int = 16384, max_batch_requests: int = 0,
          max_client_batch_size: int = 32, batch_wait_us: int = 2000, auto_truncate: bool = True,
          request_timeout: float = 0, read_timeout: float = 10, keep_alive_timeout: float = 30,
          max_connections: int = 1024, http_threads: int = 0, json_output: bool = False, access_log: bool = True,
          block: bool = True, **model_options: Any) -> Server:
    """Serves ``models`` (directories, ``NAME=DIR``, mappings, :class:`ServedModel`) over
    HTTP, with the options of ``attend serve`` (README, docs/server.md); ``model_options``
    (compute_type, threads, max_length, pooling, normalize, max_beam, …) apply to every
    model whose spec does not say. ``block=True`` (the default) serves until SIGINT or
    SIGTERM, then shuts down gracefully; ``block=False`` returns the running
    :class:`Server` once its models are loaded."""
    if not models:
        raise ValueError("serve() needs at least one model directory")
    unknown = set(model_options) - set(_MODEL_OPTIONS)
    if unknown:
        raise TypeError(f"serve() got unexpected keyword argument(s): {', '.join(sorted(unknown))}")
    options = _attend.ServerOptions()
    options.models = [served_model(m, **model_options) for m in models]
    options.host, options.port, options.uds_path = host, port, uds_path or ""
    options.api_key = api_key or ""
    options.cors_allow_origin = [cors_allow_origin] if isinstance(cors_allow_origin, str) else list(cors_allow_origin)
    options.payload_limit, options.max_concurrent_requests = payload_limit, max_concurrent_requests
    options.max_batch_tokens, options.max_batch_requests = max_batch_tokens, max_batch_requests
    options.max_client_batch_size, options.batch_wait_us = max_client_batch_size, batch_wait_us
    options.auto_truncate, options.request_timeout = auto_truncate, request_timeout
    options.read_timeout, options.keep_alive_timeout = read_timeout, keep_alive_timeout
    options.max_connections, options.http_threads = max_connections, http_threads
    options.json_output, options.access_log = json_output, access_log
    server = Server(options)
    if not block:
        try:
            return server.wait_until_ready()
        except BaseException:
            server.close()
            raise
    _serve_until_signal(server)
    return server


def _serve_until_signal(server: Server) -> None:
    """Until SIGINT or SIGTERM (in the main thread), then a graceful shutdown; a second
    signal interrupts the wait."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if in_main else None
    if in_main:
        signal.signal(signal.SIGTERM, lambda *_: server.shutdown())
    try:
        try:
            server.wait()
        except KeyboardInterrupt:
            server.shutdown()
            server.wait()
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
    # A model that could not load: its error.
    server._server.wait()
