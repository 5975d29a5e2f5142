"""``python -m attend serve -m DIR [-m NAME=DIR …] [--port 8080] …``: the HTTP server of
``attend serve`` from the Python package (the same flags, model flags included: they
apply to the ``-m`` they follow, or to every model before the first one)."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from .server import _MODEL_OPTIONS, serve, served_model

_MODEL_FLAGS = {
    "--compute-type": str, "--isa": str, "--kv-cache-type": str, "--threads": int, "--inter-threads": int,
    "--intra-threads": int, "--max-length": int, "--pooling": str, "--max-batch-size": int,
    "--max-source-length": int, "--max-target-length": int, "--max-beam": int,
}


def _split_models(argv: List[str]) -> tuple:
    """The -m groups: the model flags after each -m belong to it; before any, to all."""
    common: dict = {}
    models: List[dict] = []
    rest: List[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        flag, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg in ("-m", "--model") or flag == "--model" and eq:
            value = inline if eq else (argv[i + 1] if i + 1 < len(argv) else None)
            if value is None:
                raise SystemExit("attend serve: -m needs a model directory (or NAME=DIR)")
            spec = served_model(value)
            models.append({"directory": spec.directory, "name": spec.name})
            i += 1 if eq else 2
            continue
        if flag in _MODEL_FLAGS or flag in ("--normalize", "--no-normalize", "-t"):
            target = models[-1] if models else common
            if flag in ("--normalize", "--no-normalize"):
                target["normalize"] = 1 if flag == "--normalize" else 0
                i += 1
                continue
            value = inline if eq else (argv[i + 1] if i + 1 < len(argv) else None)
            if value is None:
                raise SystemExit(f"attend serve: {flag} needs a value")
            name = "threads" if flag == "-t" else flag[2:].replace("-", "_")
            try:
                target[name] = _MODEL_FLAGS.get(flag, int)(value)
            except ValueError:
                raise SystemExit(f"attend serve: {flag} {value}: not a valid value")
            i += 1 if eq else 2
            continue
        rest.append(arg)
        i += 1
    return common, models, rest


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "serve":
        print("usage: python -m attend serve -m DIR [-m NAME=DIR ...] [options]  (see attend serve --help)",
              file=sys.stderr)
        return 2
    common, models, rest = _split_models(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m attend serve",
                                     description="attend's HTTP server (OpenAI, TEI and LibreTranslate routes)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=8080)
    parser.add_argument("--uds-path")
    parser.add_argument("--api-key")
    parser.add_argument("--cors-allow-origin", action="append", default=[])
    parser.add_argument("--payload-limit", type=int, default=2_000_000)
    parser.add_argument("--max-concurrent-requests", type=int, default=512)
    parser.add_argument("--max-batch-tokens", type=int, default=16384)
    parser.add_argument("--max-batch-requests", type=int, default=0)
    parser.add_argument("--max-client-batch-size", type=int, default=32)
    parser.add_argument("--batch-wait-us", type=int, default=2000)
    parser.add_argument("--auto-truncate", choices=("true", "false"), default="true")
    parser.add_argument("--request-timeout", type=float, default=0)
    parser.add_argument("--read-timeout", type=float, default=10)
    parser.add_argument("--keep-alive-timeout", type=float, default=30)
    parser.add_argument("--max-connections", type=int, default=1024)
    parser.add_argument("--http-threads", type=int, default=0)
    parser.add_argument("--json-output", action="store_true")
    parser.add_argument("--no-access-log", action="store_true")
    args = parser.parse_args(rest)
    if not models:
        parser.error("give at least one model: -m DIR or -m NAME=DIR")
    specs = [{**{k: v for k, v in common.items() if k in _MODEL_OPTIONS}, **m} for m in models]
    try:
        serve(*specs, host=args.host, port=args.port, uds_path=args.uds_path, api_key=args.api_key,
              cors_allow_origin=args.cors_allow_origin, payload_limit=args.payload_limit,
              max_concurrent_requests=args.max_concurrent_requests, max_batch_tokens=args.max_batch_tokens,
              max_batch_requests=args.max_batch_requests, max_client_batch_size=args.max_client_batch_size,
              batch_wait_us=args.batch_wait_us, auto_truncate=args.auto_truncate == "true",
              request_timeout=args.request_timeout, read_timeout=args.read_timeout,
              keep_alive_timeout=args.keep_alive_timeout, max_connections=args.max_connections,
              http_threads=args.http_threads, json_output=args.json_output, access_log=not args.no_access_log)
    except ValueError as e:
        print(f"attend serve: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"attend serve: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
