#!/usr/bin/env python3
"""Load on embedding (and translation) servers, side by side in one run: attend serve,
Infinity (infinity-emb, its optimum/ONNX CPU engine) and sentence-transformers behind a
minimal FastAPI app, on the same model and the standard embedding workload
(../shared/workloads/embedding_workload.py). N concurrent clients (--clients 1,8,64)
send one sentence per request, or client batches (--batches 1,32); each run reports
sentences/s, p50/p99 latency and the server's peak RSS, beside `attend embed`'s offline
sentences/s for the same compute type and threads (a turn in every round, as a server's). The servers are all up at once and
take turns on each configuration (--rounds times, the order rotating), so that the
machine's drift falls on each alike. With --translation-model, 16
concurrent one-sentence clients of attend serve's /translate against `attend translate`'s
offline generated tokens/s.

Accuracy beside throughput: before the load, each server embeds the workload's first
--accuracy-sentences (200) sentences, and every vector's cosine to sentence-transformers'
float32 one (run in the peers' venv) is reported — mean, 1st percentile, min — so that
attend int8 and Infinity's int8 ONNX engine are compared at the accuracy they give.

The load generator shares the machine with the server (on 2 cores, a large share), so
every run reports the client's own CPU seconds beside the server's: what each side took
from the machine. --load-generator wrk drives the same requests from wrk (Debian's
`wrk`, one thread, a Lua script cycling through the workload's bodies, keep-alive) —
a C client costing a fraction of aiohttp's CPU — for every server alike.

Translation (--translation-model DIR, or `base`: Transformer-base with random weights,
made once by bench/make_base_model.py, as `attend bench`'s preset, with a vocabulary of
placeholder tokens so that /translate can take it; every output exactly
--translation-length tokens long, offline and served alike): 16 (--translation-clients)
one-sentence clients against `attend translate` offline (its defaults: batches of 32,
one per thread), in --translation-rounds (3) rounds, each served run between two offline
runs and held to their mean, the verdict the median round; and, as the ceiling of what
those clients can give, `attend translate` in batches of 16 (one at a time on every
thread: the batch a server has with 16 one-sentence requests in flight).

Targets (issue 32, on 2 cores): attend serve with 64 single-sentence clients ≥ 80% of
`attend embed`'s offline sentences/s; ≥ 3× Infinity's throughput at its best CPU setting
at equal or better p99; translation with 16 clients ≥ 70% of `attend translate`'s tokens/s.

The peers run from a venv of their own (--setup makes it: infinity-emb[all],
sentence-transformers, fastapi, uvicorn), so the build's test venv stays lean; a peer
that cannot start is reported as skipped, never as zero. Not a test: timings need a
quiet machine (docs/performance.md records them).

usage: serve_load.py --model MINILM_DIR [--compute-type int8] [--threads 2]
                     [--clients 1,8,64] [--batches 1,32] [--sentences 1024] [--rounds 3]
                     [--accuracy-sentences 200]
                     [--servers attend,infinity,sentence-transformers,attend-old] [--peers-venv DIR]
                     [--attend-old OLD_BINARY]
                     [--load-generator aiohttp|wrk] [--wrk-seconds 10]
                     [--translation-model DIR|base] [--translation-clients 16] [--translation-rounds 3]
                     [--out results.json] [--setup] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent
WORKLOAD = SOURCE.parent / "shared/workloads/embedding_workload.py"

FASTAPI_APP = textwrap.dedent('''
    # sentence-transformers behind the smallest FastAPI app: one encode() per request.
    import os
    from fastapi import FastAPI
    from pydantic import BaseModel
    from sentence_transformers import SentenceTransformer
    import torch
    torch.set_num_threads(int(os.environ.get("THREADS", "0")) or torch.get_num_threads())
    model = SentenceTransformer(os.environ["MODEL"], device="cpu")
    app = FastAPI()
    class Request(BaseModel):
        inputs: list[str]
    @app.post("/embed")
    def embed(r: Request):
        return model.encode(r.inputs, batch_size=32).tolist()
    @app.get("/health")
    def health():
        return {}
''')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_rss_mib(pid: int) -> float:
    """VmHWM of the process and its children (uvicorn, Infinity's workers), in MiB."""
    total = 0
    pids = [pid]
    try:
        pids += [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]
    except OSError:
        pass
    for p in pids:
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the process and its children (uvicorn, Infinity's
    workers) so far."""
    total = 0.0
    pids = [pid]
    try:
        pids += [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]
    except OSError:
        pass
    for p in pids:
        try:
            fields = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


def machine_busy_fraction(seconds: float = 0.5) -> float:
    """The share of the machine's CPU time that was not idle over `seconds` (/proc/stat)."""
    def sample():
        fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        return sum(fields), fields[3] + fields[4]  # all, idle + iowait
    total0, idle0 = sample()
    time.sleep(seconds)
    total1, idle1 = sample()
    return 1.0 - (idle1 - idle0) / max(total1 - total0, 1)


def wait_until_quiet(limit: float = 60.0, busy: float = 0.15) -> None:
    """Waits (up to `limit` s) until the machine is idle: a server that failed its round
    may still be working through the requests it queued, and on 2 cores that would fall
    on the next server's round (one such round gave attend 24 sentences/s after 726)."""
    start = time.monotonic()
    while machine_busy_fraction() > busy:
        if time.monotonic() - start > limit:
            print(f"note: the machine stayed busy for {limit:.0f} s before this run", flush=True)
            return


def own_cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    u = resource.getrusage(who)
    return u.ru_utime + u.ru_stime


class Server:
    """A server process, its base URL, the path and body shape of its embedding route, and
    how its answer holds the vectors (`vectors`: answer → list of vectors; default: the
    answer is that list, TEI's /embed)."""

    def __init__(self, name: str, command: List[str], port: int, route: str, body, env=None, ready_path="/health",
                 cwd=None, vectors=None):
        self.name, self.port, self.route, self.body = name, port, route, body
        self.vectors = vectors or (lambda answer: answer)
        self.url = f"http://127.0.0.1:{port}"
        self.log = tempfile.TemporaryFile()
        # A process group of its own (stopped as a whole: uvicorn's and Infinity's workers),
        # but this session: Linux's autogroup scheduling weighs sessions against each other,
        # and a server in a session of its own would get another share of the CPU than
        # the offline run and the load generator, which stay in this one.
        group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=cwd, **group)
        deadline = time.time() + 600
        import urllib.request
        while time.time() < deadline:
            if self.process.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"{name} exited: {self.log.read().decode(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + ready_path, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        self.stop()
        self.log.seek(0)
        raise RuntimeError(f"{name} did not become ready in 10 minutes: {self.log.read().decode(errors='replace')[-2000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def load(url: str, body, batches: List[List[str]], clients: int, args=None, server_pid: Optional[int] = None) -> Dict:
    """`clients` connections sending `batches` back to back, by the load generator asked
    for; with the client's CPU seconds and (given its pid) the server's."""
    server_before = cpu_seconds(server_pid) if server_pid else 0.0
    if args is not None and args.load_generator == "wrk":
        result = load_wrk(url, body, batches, clients, args.wrk_seconds)
    else:
        before = own_cpu_seconds()
        result = asyncio.run(load_aiohttp(url, body, batches, clients))
        result["client_cpu_seconds"] = own_cpu_seconds() - before
    if server_pid:
        result["server_cpu_seconds"] = cpu_seconds(server_pid) - server_before
    return result


WRK_SCRIPT = r"""
-- One JSON body a line (args[1]); each connection's requests cycle through them.
local bodies, at = {}, 0
function init(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  at = math.random(#bodies)
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
function request()
  at = at % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[at])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests": %d, "seconds": %.6f, "p50_us": %d, "p99_us": %d, ' ..
    '"errors": %d}\n', summary.requests, summary.duration / 1e6, latency:percentile(50),
    latency:percentile(99), e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def load_wrk(url: str, body, batches: List[List[str]], clients: int, seconds: float) -> Dict:
    """wrk (one thread, `clients` keep-alive connections) for `seconds`, cycling through
    the bodies of `batches` (full ones only, so every request has the same size)."""
    wrk = shutil.which("wrk")
    if wrk is None:
        raise RuntimeError("--load-generator wrk needs wrk (apt-get install wrk; tools/bootstrap.sh has it)")
    size = len(batches[0])
    full = [b for b in batches if len(b) == size]
    with tempfile.TemporaryDirectory() as tmp:
        bodies, script = Path(tmp) / "bodies.jsonl", Path(tmp) / "load.lua"
        bodies.write_text("".join(json.dumps(body(b), ensure_ascii=False) + "\n" for b in full), encoding="utf-8")
        script.write_text(WRK_SCRIPT)
        before = own_cpu_seconds(resource.RUSAGE_CHILDREN)
        run = subprocess.run([wrk, "-t1", f"-c{clients}", f"-d{max(1, round(seconds))}s", "--timeout", "600s", "-s",
                              str(script), url, "--", str(bodies)], capture_output=True, text=True)
        out = run.stdout
        if run.returncode != 0:
            raise RuntimeError(f"wrk failed ({run.returncode}): {(run.stdout + run.stderr)[-2000:]}")
        client_cpu = own_cpu_seconds(resource.RUSAGE_CHILDREN) - before
    line = next((l for l in out.splitlines() if l.startswith("WRK ")), None)
    if line is None:
        raise RuntimeError(f"wrk gave no summary: {out[-2000:]}")
    w = json.loads(line[4:])
    if not w["errors"] and not w["requests"]:
        raise RuntimeError(f"{url}: no request of {size} sentences finished within wrk's {max(1, round(seconds))} s: "
                           "raise --wrk-seconds")
    if w["errors"]:
        raise RuntimeError(f"{url}: wrk saw {w['errors']} errors in {w['requests']} requests: {out[-1000:]}")
    # wrk keeps its percentiles, not every latency: p50 and p99 stand for the whole run.
    return {"sentences_per_s": w["requests"] * size / w["seconds"], "seconds": w["seconds"], "requests": w["requests"],
            "latencies": [], "p50_ms": w["p50_us"] / 1000, "p99_ms": w["p99_us"] / 1000, "client_cpu_seconds": client_cpu}


async def load_aiohttp(url: str, body, batches: List[List[str]], clients: int) -> Dict:
    """`clients` connections, each sending its share of `batches` back to back."""
    import aiohttp

    latencies: List[float] = []
    queue = list(enumerate(batches))
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=600)) as session:
        async def client():
            while queue:
                _, batch = queue.pop()
                start = time.perf_counter()
                async with session.post(url, json=body(batch)) as r:
                    payload = await r.read()
                    if r.status != 200:
                        raise RuntimeError(f"{url}: {r.status} {payload[:300]!r}")
                latencies.append(time.perf_counter() - start)

        start = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        seconds = time.perf_counter() - start
    sentences = sum(len(b) for b in batches)
    return {"sentences_per_s": sentences / seconds, "seconds": seconds, "requests": len(batches), "latencies": latencies}


def offline_embed(attend: Path, model: Path, workload: Path, compute_type: str, threads: int) -> float:
    """`attend embed`'s own figure (its summary line: the model's loading left out, as a
    server's is)."""
    summary = subprocess.run([str(attend), "embed", "-m", str(model), "-i", str(workload), "-o", os.devnull,
                              "--compute-type", compute_type, "-t", str(threads)], check=True, capture_output=True,
                             text=True).stderr
    # "attend embed: 1024 lines (55082 tokens) in 2.31 s: 443.3 lines/s, 23845 tokens/s"
    return float(summary.rsplit(" lines/s", 1)[0].rsplit(" ", 1)[1])


def onnx_model(args) -> Path:
    """Infinity's optimum engine reads an ONNX file inside the model directory and exports
    none itself (it would look on the Hub): a directory beside the peers' venv with the
    model's config, tokenizer and pooling files, its ONNX export (optimum-cli) and, for
    int8, the export quantized by ONNX Runtime's quantize_dynamic (int8 weights, int8
    GEMMs: ONNX Runtime's best CPU int8) as model_quantized.onnx — the file Infinity
    prefers on a CPU. Made once, reused."""
    kind = "int8" if args.compute_type.startswith("int8") else "float32"
    source = args.model.resolve()
    # (The per-tensor int8 file keeps the name it had before --onnx-int8 existed.)
    suffix = "-per-channel" if kind == "int8" and args.onnx_int8 == "per-channel" else ""
    cache = Path(args.onnx_cache) if args.onnx_cache else Path(args.peers_venv) / "onnx-models"
    out = cache / f"{source.parent.name}-{source.name}-{kind}{suffix}"
    wanted = out / ("model_quantized.onnx" if kind == "int8" else "model.onnx")
    if wanted.exists():
        return out
    python, cli = Path(args.peers_venv) / "bin/python", Path(args.peers_venv) / "bin/optimum-cli"
    if not cli.exists():
        raise RuntimeError(f"no optimum-cli in {args.peers_venv} (run with --setup)")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for entry in source.iterdir():  # everything but the PyTorch weights
        if entry.suffix not in (".safetensors", ".bin", ".onnx"):
            (out / entry.name).symlink_to(entry)
    with tempfile.TemporaryDirectory() as tmp:
        # O2: ONNX Runtime's fusions (attention, LayerNorm, GELU — exact, not approximated),
        # what Infinity's own optimisation step (level 99, no GELU approximation) does; made
        # here because that step fails with the optimum its PyPI extras install.
        # (--library-name transformers: the bare encoder, whose last_hidden_state Infinity
        # pools itself, rather than sentence-transformers' whole pipeline.)
        subprocess.run([str(cli), "export", "onnx", "--model", str(source), "--task", "feature-extraction",
                        "--library-name", "transformers", "--optimize", "O2", tmp], check=True, capture_output=True)
        optimized = sorted(Path(tmp).glob("*optimized*.onnx")) or [Path(tmp) / "model.onnx"]
        shutil.copy(optimized[0], out / "model.onnx")
    if kind == "int8":
        # (The fused graph has ONNX Runtime's own operators, whose output types shape
        # inference does not know: they are float.) Per tensor (one scale per weight
        # matrix, quantize_dynamic's default) or per channel (one per output column: on
        # all-MiniLM-L6-v2 a cosine to float32 of ~0.99 rather than ~0.93 — the accuracy
        # check prints it).
        subprocess.run([str(python), "-c", "import sys, onnx\n"
                        "from onnxruntime.quantization import quantize_dynamic, QuantType\n"
                        "quantize_dynamic(sys.argv[1], sys.argv[2], weight_type=QuantType.QInt8,\n"
                        "                 per_channel=sys.argv[3] == 'per-channel',\n"
                        "                 extra_options={'DefaultTensorType': onnx.TensorProto.FLOAT})",
                        str(out / "model.onnx"), str(wanted), args.onnx_int8], check=True, capture_output=True)
    return out


def pooling_of(model: Path) -> str:
    """The model's pooling as Infinity names it (sentence-transformers' 1_Pooling/config.json):
    mean, cls, or auto where the directory does not say."""
    try:
        modules = json.loads((model / "modules.json").read_text())
        pooling = next(m["path"] for m in modules if m["type"].endswith(".Pooling"))
        config = json.loads((model / pooling / "config.json").read_text())
    except (OSError, ValueError, StopIteration, KeyError):
        return "auto"
    if config.get("pooling_mode_mean_tokens"):
        return "mean"
    if config.get("pooling_mode_cls_token"):
        return "cls"
    return "auto"


def start_server(kind: str, args, port: int) -> Server:
    if kind in ("attend", "attend-old"):
        if kind == "attend-old" and args.attend_old is None:
            raise RuntimeError("--servers attend-old needs --attend-old BINARY")
        binary = args.attend if kind == "attend" else args.attend_old
        command = [str(binary), "serve", "-m", f"model={args.model}", "--port", str(port), "--no-access-log",
                   "--compute-type", args.compute_type, "-t", str(args.threads),
                   "--max-concurrent-requests", "4096", "--max-client-batch-size", "64"]
        return Server("attend serve" if kind == "attend" else f"attend serve ({binary})", command, port, "/embed",
                      lambda b: {"inputs": b, "normalize": False})
    python = Path(args.peers_venv) / "bin/python"
    if not python.exists():
        raise RuntimeError(f"no peers venv at {args.peers_venv} (run with --setup)")
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads),
           "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1"}  # (no telemetry, no Hub: nothing outside is reached)
    if kind == "infinity" or kind.startswith("infinity-b"):
        # Its best CPU setting: the optimum (ONNX Runtime) engine, int8 where it is asked for;
        # its batch size 32, or N as "infinity-bN" says (--servers infinity-b8,infinity-b128:
        # the batch size swept, each a server of its own taking its turns).
        batch_size = int(kind[len("infinity-b"):]) if kind.startswith("infinity-b") else 32
        dtype = "int8" if args.compute_type.startswith("int8") else "float32"
        try:
            model = onnx_model(args)
        except subprocess.CalledProcessError as e:
            raise RuntimeError(f"the ONNX export for Infinity failed: {e.stderr[-2000:]!r}")
        # Run in the model's directory as "--model-id .": Infinity hands the ONNX file's path
        # as it globbed it to optimum, which wants it relative to the directory.
        # The pooling said, not inferred: run as "--model-id .", Infinity's "auto" took the
        # CLS token of all-MiniLM-L6-v2, a mean-pooling model (cosine ~0.45 to its vectors).
        command = [str((Path(args.peers_venv) / "bin/infinity_emb").resolve()), "v2", "--model-id", ".",
                   "--served-model-name", "model", "--engine", "optimum", "--device", "cpu", "--dtype", dtype,
                   "--pooling-method", pooling_of(args.model),
                   "--batch-size", str(batch_size), "--port", str(port), "--no-model-warmup"]
        name = "infinity (optimum)" if kind == "infinity" else f"infinity (optimum, batch {batch_size})"
        return Server(name, command, port, "/embeddings", lambda b: {"model": "model", "input": b}, env=env,
                      cwd=model, vectors=lambda answer: [d["embedding"] for d in sorted(answer["data"], key=lambda d: d["index"])])
    if kind == "sentence-transformers":
        app = Path(tempfile.mkdtemp()) / "st_app.py"
        app.write_text(FASTAPI_APP)
        env = {**env, "MODEL": str(args.model), "THREADS": str(args.threads)}
        command = [str(python), "-m", "uvicorn", "st_app:app", "--app-dir", str(app.parent), "--port", str(port),
                   "--log-level", "warning"]
        return Server("sentence-transformers + FastAPI", command, port, "/embed", lambda b: {"inputs": b}, env=env)
    raise ValueError(kind)


REFERENCE = textwrap.dedent('''
    # sentence-transformers in float32: the vectors every server's are judged against.
    import json, sys, torch
    from sentence_transformers import SentenceTransformer
    torch.set_num_threads(int(sys.argv[3]))
    model = SentenceTransformer(sys.argv[1], device="cpu")
    sentences = json.load(open(sys.argv[2], encoding="utf-8"))
    vectors = model.encode(sentences, batch_size=32, convert_to_numpy=True).astype("float64")
    json.dump(vectors.tolist(), sys.stdout)
''')


def reference_vectors(args, sentences: List[str]) -> List[List[float]]:
    """sentence-transformers' float32 embeddings of `sentences` (the peers' venv), the
    reference of the accuracy check."""
    python = Path(args.peers_venv) / "bin/python"
    if not python.exists():
        raise RuntimeError(f"no peers venv at {args.peers_venv} (run with --setup)")
    with tempfile.TemporaryDirectory() as tmp:
        given = Path(tmp) / "sentences.json"
        given.write_text(json.dumps(sentences, ensure_ascii=False), encoding="utf-8")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
        run = subprocess.run([str(python), "-c", REFERENCE, str(args.model), str(given), str(args.threads)],
                             capture_output=True, text=True, env=env)
    if run.returncode != 0:
        raise RuntimeError(f"sentence-transformers' reference failed: {run.stderr[-2000:]}")
    return json.loads(run.stdout)


def cosine(a: List[float], b: List[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norms = sum(x * x for x in a) ** 0.5 * sum(y * y for y in b) ** 0.5
    return dot / norms if norms > 0 else 0.0


def served_vectors(server: Server, sentences: List[str], batch: int = 32) -> List[List[float]]:
    """The server's vectors of `sentences`, asked `batch` at a time on its embedding route."""
    import urllib.request
    out: List[List[float]] = []
    for i in range(0, len(sentences), batch):
        chunk = sentences[i:i + batch]
        request = urllib.request.Request(server.url + server.route, data=json.dumps(server.body(chunk)).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as r:
            vectors = server.vectors(json.loads(r.read()))
        if len(vectors) != len(chunk):
            raise RuntimeError(f"{server.name}: {len(vectors)} vectors for {len(chunk)} sentences")
        out.extend(vectors)
    return out


def accuracy(server: Server, sentences: List[str], reference: List[List[float]]) -> Dict:
    """Each sentence's cosine between the server's vector and sentence-transformers'
    float32 one: what the throughput is bought with (int8 against float32)."""
    cosines = sorted(cosine(a, b) for a, b in zip(served_vectors(server, sentences), reference))
    return {"sentences": len(cosines), "mean_cosine": statistics.fmean(cosines), "min_cosine": cosines[0],
            "p1_cosine": cosines[int(0.01 * (len(cosines) - 1))]}


OFFLINE = "attend embed (offline)"  # the rounds' turn that is no server


def run_embeddings(args, sentences: List[str], workload: Path) -> Dict:
    """Every server up at once (idle ones cost no CPU), then for each (request size,
    clients) the servers take turns, --rounds times, the order rotating each round: a
    drift of the machine (another process, the clock) falls on all of them alike.
    Throughput is the median of the rounds; p50/p99 are over every request of them."""
    results: Dict = {"offline_attend_embed_sentences_per_s": offline_embed(args.attend, args.model, workload,
                                                                           args.compute_type, args.threads)}
    print(f"attend embed (offline, {args.compute_type}, {args.threads} threads): "
          f"{results['offline_attend_embed_sentences_per_s']:.1f} sentences/s", flush=True)
    servers: Dict[str, Server] = {}
    try:
        for kind in args.servers:
            try:
                servers[kind] = start_server(kind, args, free_port())
            except (RuntimeError, OSError) as e:
                print(f"{kind}: skipped: {e}", flush=True)
                results[kind] = {"skipped": str(e)}
        # Accuracy first (not timed): every server's vectors of the workload's first
        # sentences against sentence-transformers in float32.
        checked = sentences[:args.accuracy_sentences]
        scores: Dict[str, Dict] = {}
        if checked and servers:
            try:
                reference = reference_vectors(args, checked)
            except (RuntimeError, OSError) as e:
                print(f"accuracy: skipped: {e}", flush=True)
                reference = None
            for kind, server in servers.items() if reference else []:
                try:
                    scores[kind] = accuracy(server, checked, reference)
                except (RuntimeError, OSError, ValueError, KeyError) as e:
                    scores[kind] = {"skipped": str(e)}
                    print(f"{server.name}: accuracy: skipped: {e}", flush=True)
                    continue
                a = scores[kind]
                print(f"{server.name}: cosine to sentence-transformers float32 over {a['sentences']} sentences: "
                      f"mean {a['mean_cosine']:.6f}, 1st percentile {a['p1_cosine']:.6f}, min {a['min_cosine']:.6f}",
                      flush=True)
        runs: Dict[str, List[Dict]] = {kind: [] for kind in servers}
        failed: Dict[str, List[Dict]] = {}
        for batch in args.batches if servers else []:
            groups = [sentences[i:i + batch] for i in range(0, len(sentences), batch)]
            for server in servers.values():  # warm-up
                asyncio.run(load_aiohttp(server.url + server.route, server.body, groups[:4], 1))
            for clients in args.clients:
                rounds: Dict[str, List[Dict]] = {kind: [] for kind in servers}
                # `attend embed` offline takes a turn in every round too, so that the
                # share of offline a server reaches compares runs minutes apart at most
                # (offline measured once, at the start, read 666 sentences/s where the
                # served runs later reached 832 on a VM that had sped up).
                offline_rounds: List[float] = []
                kinds = list(servers) + [OFFLINE]
                for r in range(args.rounds):
                    for kind in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
                        if kind == OFFLINE:
                            wait_until_quiet()
                            offline_rounds.append(offline_embed(args.attend, args.model, workload, args.compute_type,
                                                                args.threads))
                            continue
                        server = servers[kind]
                        # A server that fails a round (an error answer, no request done in
                        # wrk's time) is reported so, and the others' runs go on.
                        wait_until_quiet()
                        try:
                            rounds[kind].append(load(server.url + server.route, server.body, groups, clients, args,
                                                     server.process.pid))
                        except RuntimeError as e:
                            failed.setdefault(kind, []).append({"clients": clients, "batch": batch, "error": str(e)})
                            print(f"{server.name}: {clients:3d} clients × {batch:2d} sentences/request: failed: {e}",
                                  flush=True)
                for kind, measured in rounds.items():
                    if not measured:
                        continue
                    run = summarise(measured)
                    run.update(clients=clients, batch=batch, offline_rounds_sentences_per_s=offline_rounds,
                               offline_sentences_per_s=statistics.median(offline_rounds))
                    runs[kind].append(run)
                    mean = scores.get(kind, {}).get("mean_cosine")
                    print(f"{servers[kind].name}: {clients:3d} clients × {batch:2d} sentences/request: "
                          f"{run['sentences_per_s']:8.1f} sentences/s"
                          f"{f' (cosine {mean:.5f})' if mean is not None else ''} (rounds: "
                          f"{', '.join(f'{m:.0f}' for m in run['rounds_sentences_per_s'])}), "
                          f"p50 {run['p50_ms']:8.1f} ms, p99 {run['p99_ms']:8.1f} ms; CPU s per 1000 sentences: "
                          f"server {run['server_cpu_per_1000']:.2f}, client {run['client_cpu_per_1000']:.2f} "
                          f"({args.load_generator}: {100 * run['client_machine_share']:.0f}% of the machine)", flush=True)
                print(f"attend embed offline in the same rounds: {statistics.median(offline_rounds):.1f} sentences/s "
                      f"(rounds: {', '.join(f'{m:.0f}' for m in offline_rounds)})", flush=True)
        for kind, server in servers.items():
            results[kind] = {"runs": runs[kind], "peak_rss_mib": peak_rss_mib(server.process.pid)}
            if kind in scores:
                results[kind]["accuracy"] = scores[kind]
            if kind in failed:
                results[kind]["failed"] = failed[kind]
            print(f"{server.name}: peak RSS {results[kind]['peak_rss_mib']:.0f} MiB", flush=True)
    finally:
        for server in servers.values():
            server.stop()
    return results


def summarise(measured: List[Dict]) -> Dict:
    """Rounds of one configuration: the median throughput, percentiles over all requests
    (wrk's: the median round's), CPU seconds of each side per 1000 sentences, and the
    share of the machine's cores the load generator took."""
    latencies = sorted(x for m in measured for x in m["latencies"])
    median = sorted(measured, key=lambda m: m["sentences_per_s"])[len(measured) // 2]
    sentences = sum(m["sentences_per_s"] * m["seconds"] for m in measured)
    wall = sum(m["seconds"] for m in measured)
    client = sum(m["client_cpu_seconds"] for m in measured)
    return {"sentences_per_s": statistics.median(m["sentences_per_s"] for m in measured),
            "rounds_sentences_per_s": [m["sentences_per_s"] for m in measured],
            "p50_ms": 1000 * statistics.median(latencies) if latencies else median["p50_ms"],
            "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else median["p99_ms"],
            "client_cpu_seconds": client, "server_cpu_seconds": sum(m.get("server_cpu_seconds", 0) for m in measured),
            "client_cpu_per_1000": 1000 * client / sentences,
            "server_cpu_per_1000": 1000 * sum(m.get("server_cpu_seconds", 0) for m in measured) / sentences,
            "client_machine_share": client / (wall * (os.cpu_count() or 1))}


def base_model(args) -> Path:
    """Transformer-base with random weights (bench/make_base_model.py, `attend bench`'s
    preset: d 512, 6 + 6 layers, 32000 tokens), made once beside the peers' venv, with a
    shared_vocabulary.txt of placeholder tokens (w4 … w31999 after the specials) so that
    /translate, which reads text or tokens, can take it; its 256 sources (10–50 tokens)
    as those tokens, one sentence a line (sources.tokens)."""
    out = Path(args.peers_venv).parent / "bench-base-model"
    if not (out / "model/model.safetensors").exists() or not (out / "sources.ids").exists():
        maker = SOURCE / "bench/make_base_model.py"
        pythons = [sys.executable, "/usr/bin/python3"]
        python = next((p for p in pythons if subprocess.run([p, "-c", "import torch"], capture_output=True).returncode == 0),
                      None)
        if python is None:
            raise RuntimeError("--translation-model base needs PyTorch (python3-torch, tools/bootstrap.sh) to make the model")
        subprocess.run([python, str(maker), str(out)], check=True)
    if not (out / "sources.tokens").exists():
        config = json.loads((out / "model/config.json").read_text())
        specials = {config["unk_id"]: "<unk>", config["pad_id"]: "<blank>", config["bos_id"]: "<s>", config["eos_id"]: "</s>"}
        vocabulary = [specials.get(i, f"w{i}") for i in range(config["src_vocab_size"])]
        (out / "model/shared_vocabulary.txt").write_text("\n".join(vocabulary) + "\n")
        ids = (out / "sources.ids").read_text().splitlines()
        (out / "sources.tokens").write_text("".join(" ".join(vocabulary[int(t)] for t in line.split()) + "\n" for line in ids))
    return out


def run_translation(args) -> Dict:
    """--translation-clients one-sentence clients on /translate against `attend translate`
    offline, same compute type, threads and (with --translation-length) output lengths."""
    model, length = args.translation_model, args.translation_length
    if str(model) == "base":
        made = base_model(args)
        model, args.translation_input = made / "model", made / "sources.tokens"
        length = length or 32  # random weights: no end token to stop at; fixed, as attend bench's --tgt-len
    model = Path(model)
    if args.translation_input is None:
        args.translation_input = SOURCE / "build/release/tests/cli_fixture/corpus.txt"
    lines = [line for line in Path(args.translation_input).read_text(encoding="utf-8").splitlines()][: args.sentences]
    tokens_mode = not (model / "source.spm").exists() and not (model / "vocab.spm").exists()
    fixed = ["--max-length", str(length), "--min-length", str(length)] if length else []
    # Offline on the sources repeated to ≥ 1024 lines (256 took ~1 s: one noisy sample),
    # before and after the served run, their mean the yardstick: on a shared VM the rate
    # drifts by ±15% within minutes (docs/performance.md).
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines) * max(1, -(-1024 // max(1, len(lines)))))

    def offline_generated_per_s(batch: Optional[int] = None) -> float:
        # batch: that many sentences per batch, one batch at a time on every thread — the
        # most the server can run with `clients` one-sentence requests in flight.
        shape = ["--max-batch-size", str(batch), "--inter-threads", "1"] if batch else []
        summary = subprocess.run([str(args.attend), "translate", "-m", str(model), "-i", f.name, "-o", os.devnull,
                                  "--compute-type", args.compute_type, "-t", str(args.threads)] + fixed + shape
                                 + (["--input-format", "tokens"] if tokens_mode else []), capture_output=True, text=True,
                                 check=True).stderr
        # "… generated tokens (N/s) …" in the summary line
        return float(summary.rsplit("generated tokens (", 1)[1].split("/s")[0])

    clients = args.translation_clients
    extra = {"max_length": length, "min_length": length} if length else {}
    body = (lambda line: {"tokens": line.split(), **extra}) if tokens_mode else (lambda line: {"text": line, **extra})
    # Rounds alternate offline and served runs (offline, served, offline, served, …,
    # offline); each served run is held to the mean of the offline runs either side of it
    # and the verdict takes the median round: one run's ratio swung 68–82% with the VM.
    offline_runs, ceiling_runs, rounds = [offline_generated_per_s()], [offline_generated_per_s(clients)], []
    for _ in range(max(1, args.translation_rounds)):
        served = serve_translation_once(args, model, lines, body, length, clients)
        offline_runs.append(offline_generated_per_s())
        ceiling_runs.append(offline_generated_per_s(clients))
        offline, ceiling = statistics.mean(offline_runs[-2:]), statistics.mean(ceiling_runs[-2:])
        served.update(offline_generated_tokens_per_s=offline, offline_batches_of_clients_tokens_per_s=ceiling,
                      share_of_offline=served["served_generated_tokens_per_s"] / offline,
                      ceiling_share_of_offline=ceiling / offline)
        rounds.append(served)
        print(f"  translation round {len(rounds)}: offline {offline:.0f} generated tokens/s, in batches of {clients} "
              f"{ceiling:.0f} ({100 * ceiling / offline:.0f}%), served {served['served_generated_tokens_per_s']:.0f} "
              f"({100 * served['share_of_offline']:.0f}%), p50 {served['p50_ms']:.1f} ms, p99 {served['p99_ms']:.1f} ms",
              flush=True)
    middle = lambda key: statistics.median(r[key] for r in rounds)
    result = {"model": str(model), "clients": clients, "output_length": length or None, "rounds": rounds,
              "offline_runs": offline_runs, "offline_batches_of_clients_runs": ceiling_runs,
              "offline_generated_tokens_per_s": statistics.mean(offline_runs),
              "offline_batches_of_clients_tokens_per_s": statistics.mean(ceiling_runs),
              "served_generated_tokens_per_s": middle("served_generated_tokens_per_s"),
              "share_of_offline": middle("share_of_offline"), "ceiling_share_of_offline": middle("ceiling_share_of_offline"),
              "p50_ms": middle("p50_ms"), "p99_ms": middle("p99_ms"),
              "peak_rss_mib": max(r["peak_rss_mib"] for r in rounds)}
    print(f"translation ({model.name if model.name != 'model' else model.parent.name}), median of {len(rounds)} "
          f"round(s): attend serve, {clients} clients × 1 sentence, at {100 * result['share_of_offline']:.0f}% of "
          f"attend translate offline (offline runs: {' / '.join(f'{r:.0f}' for r in offline_runs)} generated tokens/s); "
          f"in batches of {clients} on all threads offline gives {100 * result['ceiling_share_of_offline']:.0f}% (the "
          f"most {clients} one-sentence clients can get); p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms",
          flush=True)
    return result


def serve_translation_once(args, model: Path, lines: List[str], body, length: int, clients: int) -> Dict:
    """One served run: attend serve started, warmed up, loaded by `clients` one-sentence
    clients, stopped (an idle server's threads would share the cores with the offline runs)."""
    port = free_port()
    command = [str(args.attend), "serve", "-m", f"translator={model}", "--port", str(port),
               "--no-access-log", "--compute-type", args.compute_type, "-t", str(args.threads)]
    server = Server("attend serve /translate", command, port, "/translate", None)
    try:
        # Warm-up: each lane's first batches make its plans.
        asyncio.run(load_aiohttp(server.url + "/translate", lambda b: body(b[0]), [[line] for line in lines[:2 * clients]],
                                 clients))
        server_before = cpu_seconds(server.process.pid)
        if length and args.load_generator == "wrk":  # every answer `length` tokens: wrk need not read them
            w = load_wrk(server.url + "/translate", lambda b: body(b[0]), [[line] for line in lines], clients,
                         args.wrk_seconds)
            seconds, generated, client_cpu = w["seconds"], w["requests"] * length, w["client_cpu_seconds"]
            p50, p99 = w["p50_ms"], w["p99_ms"]
        else:
            before = own_cpu_seconds()
            seconds, generated, latencies = asyncio.run(translate_aiohttp(server.url + "/translate", body, lines, clients))
            client_cpu = own_cpu_seconds() - before
            p50, p99 = 1000 * statistics.median(latencies), 1000 * latencies[int(0.99 * (len(latencies) - 1))]
        server_cpu = cpu_seconds(server.process.pid) - server_before
        return {"served_generated_tokens_per_s": generated / seconds, "p50_ms": p50, "p99_ms": p99,
                "client_cpu_seconds": client_cpu, "server_cpu_seconds": server_cpu,
                "client_machine_share": client_cpu / (seconds * (os.cpu_count() or 1)),
                "load_generator": args.load_generator if length else "aiohttp",
                "peak_rss_mib": peak_rss_mib(server.process.pid)}
    finally:
        server.stop()


async def translate_aiohttp(url: str, body, lines: List[str], clients: int):
    """Every line once, `clients` one-sentence requests in flight: (seconds, generated
    tokens, sorted latencies)."""
    import aiohttp
    queue, latencies, generated = list(lines), [], 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as session:
        async def client():
            nonlocal generated
            while queue:
                line = queue.pop()
                start = time.perf_counter()
                async with session.post(url, json=body(line)) as r:
                    payload = await r.json()
                    if r.status != 200:
                        raise RuntimeError(f"/translate: {r.status} {payload}")
                generated += payload["usage"]["generated_tokens"]
                latencies.append(time.perf_counter() - start)
        start = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return time.perf_counter() - start, generated, sorted(latencies)


def verdicts(results: Dict) -> List[str]:
    out = []
    offline = results["embeddings"]["offline_attend_embed_sentences_per_s"]
    attend_runs = results["embeddings"].get("attend", {}).get("runs", [])
    single = {r["clients"]: r for r in attend_runs if r["batch"] == 1}
    if 64 in single:
        # Offline as measured in the same rounds where it was (else the figure of the start).
        share = single[64]["sentences_per_s"] / single[64].get("offline_sentences_per_s", offline)
        out.append(f"{'PASS' if share >= 0.8 else 'MISS'}: attend serve, 64 single-sentence clients: "
                   f"{100 * share:.0f}% of attend embed offline (target ≥ 80%)")
    # Infinity's best over every setting that ran (its batch sizes, its configurations).
    infinity = [dict(r, setting=kind) for kind, result in results["embeddings"].items()
                if kind == "infinity" or kind.startswith("infinity-b") for r in
                (result.get("runs", []) if isinstance(result, dict) else [])]
    if attend_runs and infinity:
        best = max(infinity, key=lambda r: r["sentences_per_s"])
        mine = max((r for r in attend_runs if r["p99_ms"] <= best["p99_ms"]), key=lambda r: r["sentences_per_s"], default=None)
        if mine:
            ratio = mine["sentences_per_s"] / best["sentences_per_s"]
            out.append(f"{'PASS' if ratio >= 3 else 'MISS'}: attend serve {ratio:.1f}× Infinity's best "
                       f"({best['sentences_per_s']:.0f} sentences/s, p99 {best['p99_ms']:.0f} ms: {best['setting']}, "
                       f"{best['clients']} clients × {best['batch']}) against attend's {mine['clients']} × "
                       f"{mine['batch']} at equal or better p99 "
                       "(target ≥ 3×)")
        else:
            out.append("MISS: no attend serve run reached Infinity's best p99")
    scored = [(kind, r["accuracy"]) for kind, r in results["embeddings"].items()
              if isinstance(r, dict) and "mean_cosine" in r.get("accuracy", {})]
    if scored:
        out.append("accuracy, cosine to sentence-transformers float32 (mean / min over "
                   f"{scored[0][1]['sentences']} sentences): "
                   + "; ".join(f"{kind} {a['mean_cosine']:.5f} / {a['min_cosine']:.5f}" for kind, a in scored))
    t = results.get("translation")
    if t:
        # The median round's ratios where rounds ran (each against its own offline runs).
        share = t.get("share_of_offline", t["served_generated_tokens_per_s"] / t["offline_generated_tokens_per_s"])
        ceiling = t.get("ceiling_share_of_offline",
                        t["offline_batches_of_clients_tokens_per_s"] / t["offline_generated_tokens_per_s"])
        out.append(f"{'PASS' if share >= 0.7 else 'MISS'}: translation, {t['clients']} clients: {100 * share:.0f}% of "
                   f"attend translate offline tokens/s (target ≥ 70%); offline in batches of {t['clients']} (the "
                   f"clients' most): {100 * ceiling:.0f}%, so the server ran at {100 * share / ceiling:.0f}% of that")
    return out


def setup(venv: Path) -> None:
    """The peers' venv: Infinity with its optimum engine, sentence-transformers, FastAPI."""
    if not (venv / "bin/python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["infinity-emb[all]", "sentence-transformers", "fastapi", "uvicorn", "aiohttp"], check=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, type=Path, help="all-MiniLM-L6-v2 (a sentence-transformers directory)")
    p.add_argument("--attend", type=Path, default=SOURCE / "build/release/bin/attend")
    p.add_argument("--attend-old", type=Path, help="another attend binary, served as 'attend-old' (--servers attend,attend-old): "
                   "old and new in turns, in one run")
    p.add_argument("--compute-type", default="int8")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--clients", default="1,8,64")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--sentences", type=int, default=1024)
    p.add_argument("--accuracy-sentences", type=int, default=200,
                   help="each server's cosine to sentence-transformers float32 over the workload's first N sentences "
                        "(0: no accuracy check)")
    p.add_argument("--servers", default="attend,infinity,sentence-transformers",
                   help="comma-separated: attend, attend-old, infinity (its batch size 32), infinity-bN (its batch "
                        "size N: list several to sweep it; the targets take Infinity's best), sentence-transformers")
    p.add_argument("--rounds", type=int, default=3, help="turns each server takes per configuration (alternating)")
    p.add_argument("--peers-venv", default=str(SOURCE / "build/bench-peers-venv"))
    p.add_argument("--onnx-cache", help="where Infinity's ONNX copies of the model are made once (default: "
                   "PEERS_VENV/onnx-models)")
    p.add_argument("--onnx-int8", choices=["per-tensor", "per-channel"], default="per-channel",
                   help="Infinity's int8 model: ONNX Runtime's quantize_dynamic per tensor, or per channel (more "
                        "accurate; the accuracy check prints both sides' cosine to float32)")
    p.add_argument("--translation-model", help="a translation model directory, or 'base': Transformer-base, random weights")
    p.add_argument("--translation-input", type=Path, help="one source sentence per line (default: the CLI fixture corpus)")
    p.add_argument("--translation-clients", type=int, default=16)
    p.add_argument("--translation-rounds", type=int, default=3,
                   help="served translation runs, each between two offline runs; the verdict takes the median")
    p.add_argument("--translation-length", type=int, default=0,
                   help="every output exactly this many tokens, offline and served (0: as the model decodes; base: 32)")
    p.add_argument("--load-generator", choices=["aiohttp", "wrk"], default="aiohttp",
                   help="the client: aiohttp (Python, every latency kept) or wrk (C, far less CPU; its percentiles)")
    p.add_argument("--wrk-seconds", type=float, default=10, help="how long each wrk run lasts")
    p.add_argument("--out", type=Path)
    p.add_argument("--setup", action="store_true", help="make the peers' venv first")
    p.add_argument("--quick", action="store_true", help="a tiny run that checks the script (64 sentences, 1 and 8 clients)")
    args = p.parse_args()
    # A SIGTERM (timeout, a CI's kill) unwinds as an exception: the servers, in sessions
    # of their own, are stopped by the finally clauses instead of left running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.quick:
        args.sentences, args.clients, args.rounds = min(args.sentences, 64), "1,8", 2
        args.wrk_seconds = min(args.wrk_seconds, 1)
        args.translation_rounds = 1
    args.clients = [int(c) for c in args.clients.split(",")]
    args.batches = [int(b) for b in args.batches.split(",")]
    args.servers = [s for s in args.servers.split(",") if s]
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        print("serve_load.py needs aiohttp (pip install aiohttp)", file=sys.stderr)
        return 2
    if args.setup:
        setup(Path(args.peers_venv))
    with tempfile.TemporaryDirectory() as tmp:
        workload = Path(tmp) / "workload.txt"
        subprocess.run([sys.executable, str(WORKLOAD), str(args.model), str(workload), "--sentences", str(args.sentences)],
                       check=True)
        sentences = workload.read_text(encoding="utf-8").splitlines()
        results = {"machine": {"cpus": os.cpu_count(), "threads": args.threads, "compute_type": args.compute_type,
                               "load_generator": args.load_generator},
                   "embeddings": run_embeddings(args, sentences, workload)}
    if args.translation_model:
        results["translation"] = run_translation(args)
    results["verdicts"] = verdicts(results)
    for v in results["verdicts"]:
        print(v)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
