"""`attend serve` (the CLI, a real process on loopback) against the clients people use:
the `openai` package's client.embeddings.create (float and base64), LangChain's
OpenAIEmbeddings, `requests` and
`httpx` on the TEI routes, LibreTranslate's request, curl (TCP and a Unix socket); the
answers equal `attend embed` / `attend translate` for the same inputs (bit for bit: one
request is one engine call, as the CLI's file is), and Hugging Face `tokenizers` for
/tokenize and /decode. Then the operations side: 64 concurrent clients, SIGTERM during
load (no accepted request lost, exit 0), memory flat over 10,000 bad requests, and the
Python faces (attend.serve, python -m attend serve).

Run by ctest through tests/python/run_pytest.sh (the test venv); each client library
missing from the venv skips its test with a message."""

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(__file__).resolve().parents[2]
CLI = Path(os.environ.get("ATTEND_CLI", SOURCE / "build/release/bin/attend"))
FIXTURE = Path(os.environ.get("ATTEND_CLI_FIXTURE", SOURCE / "build/release/tests/cli_fixture"))
MINILM = Path(os.environ.get("ATTEND_MINILM_DIR", SOURCE / "build/release/models/all-MiniLM-L6-v2/model"))
CROSS_ENCODER = SOURCE / "tests/data/encoders/bert-cross-encoder"
TEXTS = [c["text"] for c in json.load(open(SOURCE / "tests/data/encoders/minilm-reference.json", encoding="utf-8"))["cases"]]


def need(module: str):
    try:
        return __import__(module)
    except ImportError:
        pytest.skip(f"{module} is not installed in the test venv (tests/python/setup_venv.sh installs it from PyPI)")


@pytest.fixture(scope="module")
def minilm():
    if not (MINILM / "model.safetensors").exists():
        pytest.skip(f"{MINILM} is absent: ctest's 'encoder: all-MiniLM-L6-v2 from PyPI' test downloads it")
    if not CLI.exists():
        pytest.skip(f"{CLI} is absent: build the CLI first")
    return MINILM


class Serve:
    """`attend serve … --port 0 --json-output` in the background: its URL from its log,
    its log lines kept (stderr), stopped by SIGTERM."""

    def __init__(self, *args, env=None):
        self.process = subprocess.Popen([str(CLI), "serve", "--port", "0", "--json-output", *map(str, args)],
                                        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
        self.lines, self.url = [], None
        ready = threading.Event()

        def read():
            for line in self.process.stderr:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                self.lines.append(record)
                if record.get("message") == "listening" and "url" in record:
                    self.url = record["url"]
                if record.get("message") in ("ready", "stopped") or record.get("level") == "ERROR":
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not ready.wait(120) or self.url is None:
            self.stop()
            raise AssertionError(f"attend serve did not become ready: {self.lines}")

    def stop(self, sig=signal.SIGTERM, timeout=60) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout)
        self.reader.join(10)
        return code

    def requests(self, status=None):
        return [r for r in self.lines if r.get("message") == "request" and (status is None or r.get("status") == status)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def cli_embed(model: Path, texts) -> np.ndarray:
    """`attend embed`: the reference each served vector must equal."""
    out = subprocess.run([str(CLI), "embed", "-m", str(model), "-q"], input="".join(t + "\n" for t in texts),
                         capture_output=True, text=True, check=True).stdout
    return np.array([json.loads(line) for line in out.splitlines()], dtype=np.float32)


def test_openai_client_gets_attend_embeds_vectors_bit_for_bit_as_base64_and_float(minilm):
    openai = need("openai")
    texts = [t if t.strip() else "blank" for t in TEXTS]  # (the CLI reads lines: no newline inside a text)
    texts = [t.replace("\n", " ") for t in texts]
    expected = cli_embed(minilm, texts)
    with Serve("-m", f"minilm={minilm}") as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
        got = client.embeddings.create(model="minilm", input=texts)  # the client asks for base64 and decodes it
        assert got.model == "minilm"
        assert [d.index for d in got.data] == list(range(len(texts)))
        assert np.array_equal(np.array([d.embedding for d in got.data], dtype=np.float32), expected)
        as_float = client.embeddings.create(model="minilm", input=texts, encoding_format="float")
        assert np.array_equal(np.array([d.embedding for d in as_float.data], dtype=np.float32), expected)
        tokenizers = need("tokenizers")
        tok = tokenizers.Tokenizer.from_file(str(minilm / "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(256)
        assert got.usage.prompt_tokens == sum(len(tok.encode(t).ids) for t in texts)
        # dimensions: the first 64 values, normalised again (the model normalises).
        cut = client.embeddings.create(model="minilm", input=texts[:2], dimensions=64, encoding_format="float")
        v = np.array(cut.data[0].embedding)
        assert v.shape == (64,) and abs(np.linalg.norm(v) - 1) < 1e-5
        assert np.allclose(v, expected[0][:64] / np.linalg.norm(expected[0][:64]), atol=1e-6)
        # An unknown model is the client's NotFoundError, with the server's message.
        with pytest.raises(openai.NotFoundError, match="not served here"):
            client.embeddings.create(model="text-embedding-3-small", input="x")
        with pytest.raises(openai.BadRequestError):
            client.embeddings.create(model="minilm", input=[[1, 2, 10**9]])
        assert server.stop() == 0


def test_langchain_openai_embeddings_as_the_readme_shows(minilm):
    langchain_openai = need("langchain_openai")
    texts = [f"document {i} about the quick brown fox" for i in range(40)]  # two chunks of 32 and 8
    expected = cli_embed(minilm, texts)
    with Serve("-m", f"minilm={minilm}") as server:
        embeddings = langchain_openai.OpenAIEmbeddings(model="minilm", base_url=server.url + "/v1", api_key="unused",
                                                       check_embedding_ctx_length=False, chunk_size=32)
        got = np.array(embeddings.embed_documents(texts), dtype=np.float32)
        assert got.shape == expected.shape
        assert np.max(np.abs(got - expected)) < 1e-5  # (other batches than the CLI's: to 1e-5)
        assert np.max(np.abs(np.array(embeddings.embed_query(texts[0]), dtype=np.float32) - expected[0])) < 1e-5
        assert server.stop() == 0


def test_tei_routes_with_requests_equal_the_cli_and_hugging_face_tokenizers(minilm):
    requests = need("requests")
    tokenizers = need("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(minilm / "tokenizer.json"))
    tok.no_padding()
    texts = ["This is an example sentence.", "Café au lait, naïve façade", "A man is eating food."]
    with Serve("-m", f"minilm={minilm}", "-m", f"rerank={CROSS_ENCODER}") as server:
        s = requests.Session()
        info = s.get(server.url + "/info").json()
        assert info["model_type"] == {"embedding": {"pooling": "mean"}} and info["max_input_length"] == 256
        embedded = s.post(server.url + "/embed", json={"inputs": texts}).json()
        assert np.array_equal(np.array(embedded, dtype=np.float32), cli_embed(minilm, texts))  # normalised, as the model
        tokens = s.post(server.url + "/tokenize", json={"inputs": texts}).json()
        for text, row in zip(texts, tokens):
            enc = tok.encode(text)
            assert [t["id"] for t in row] == enc.ids
            assert [t["text"] for t in row] == enc.tokens
            assert [t["special"] for t in row] == [bool(m) for m in enc.special_tokens_mask]
        ids = [tok.encode(t).ids for t in texts]
        decoded = s.post(server.url + "/decode", json={"ids": ids}).json()
        assert decoded == [tok.decode(i) for i in ids]
        kept = s.post(server.url + "/decode", json={"ids": ids[1], "skip_special_tokens": False}).json()
        assert kept == [tok.decode(ids[1], skip_special_tokens=False)]
        ranks = s.post(server.url + "/rerank", json={"query": "fox", "texts": ["the quick fox", "a dog", ""]}).json()
        pairs = "".join(f"fox\t{t}\n" for t in ["the quick fox", "a dog", ""])
        scores = subprocess.run([str(CLI), "classify", "-m", str(CROSS_ENCODER), "-q"], input=pairs, capture_output=True,
                                text=True, check=True).stdout.splitlines()
        expected = [float(line.split("\t")[1]) for line in scores]
        assert sorted(r["index"] for r in ranks) == [0, 1, 2]
        for r in ranks:
            assert np.float32(r["score"]) == np.float32(expected[r["index"]])
        assert [r["score"] for r in ranks] == sorted((r["score"] for r in ranks), reverse=True)
        bad = s.post(server.url + "/embed", data=b'{"inputs": [1, "a"]}', headers={"Content-Type": "application/json"})
        assert bad.status_code == 400 and "field 'inputs'" in bad.json()["error"]
        assert server.stop() == 0


def test_decode_equals_hugging_face_tokenizers_for_every_decoder_kind(tmp_path):
    """/decode through tokenizer.json's decoder (WordPiece, ByteLevel, Metaspace, none)
    against `tokenizers`' own decode of the same ids: the 313 texts of the tokenizer
    fixtures, and random ids, special tokens skipped and kept."""
    requests = need("requests")
    tokenizers = need("tokenizers")
    import shutil

    names = ["bert-cased", "roberta-bpe", "xlmr-unigram", "mix-bpe"]
    args = []
    for name in names:  # the tokenizer beside a small model (/decode needs only the tokenizer)
        model = tmp_path / name
        model.mkdir()
        for f in ("config.json", "model.safetensors"):
            shutil.copy(SOURCE / "tests/data/encoders/bert" / f, model / f)
        shutil.copy(SOURCE / f"tests/data/tokenizers/{name}.json", model / "tokenizer.json")
        args += ["-m", f"{name}={model}"]
    cases = [json.loads(line) for line in open(SOURCE / "tests/data/tokenizers/expected/cases.jsonl", encoding="utf-8")]
    texts = [c["a"] for c in cases if "a" in c] + [c["b"] for c in cases if "b" in c]
    rng = np.random.default_rng(11)
    with Serve(*args, "--max-client-batch-size", "400", "--no-access-log") as server:
        s = requests.Session()
        for name in names:
            tok = tokenizers.Tokenizer.from_file(str(SOURCE / f"tests/data/tokenizers/{name}.json"))
            tok.no_padding()
            tok.no_truncation()
            ids = [tok.encode(t).ids for t in texts]
            ids += [rng.integers(0, tok.get_vocab_size(), size=int(rng.integers(1, 12))).tolist() for _ in range(50)]
            for skip in (True, False):
                r = s.post(server.url + "/decode", json={"model": name, "ids": ids, "skip_special_tokens": skip})
                assert r.status_code == 200, r.text
                got = r.json()
                for i, (row, text) in enumerate(zip(ids, got)):
                    assert text == tok.decode(row, skip_special_tokens=skip), (name, skip, i, row)
        assert server.stop() == 0


def test_libretranslate_request_with_httpx_equals_attend_translate():
    httpx = need("httpx")
    model = FIXTURE / "model"
    if not (model / "source.spm").exists():
        pytest.skip(f"{model} is absent: ctest's 'cli: build the test models and tokenizers' makes it")
    texts = ["The quick brown fox.", "", "A café over the river."]
    expected = subprocess.run([str(CLI), "translate", "-m", str(model), "-q"], input="".join(t + "\n" for t in texts),
                              capture_output=True, text=True, check=True).stdout.split("\n")[:-1]
    with Serve("-m", f"en-de={model}") as server:
        with httpx.Client(base_url=server.url) as client:
            r = client.post("/translate", json={"q": texts, "source": "en", "target": "de", "format": "text"})
            assert r.status_code == 200
            assert r.json() == {"translatedText": expected}
            one = client.post("/translate", json={"q": texts[0], "source": "auto", "target": "de"}).json()
            assert one == {"translatedText": expected[0]}
            assert client.get("/languages").json() == [{"code": "en", "name": "en", "targets": ["de"]}]
        assert server.stop() == 0


def test_curl_over_tcp_and_a_unix_socket(minilm, tmp_path):
    if subprocess.run(["which", "curl"], capture_output=True).returncode != 0:
        pytest.skip("curl is not installed")
    sock = tmp_path / "attend.sock"
    with Serve("-m", f"minilm={minilm}", "--uds-path", sock) as server:
        body = json.dumps({"inputs": "hello"})
        tcp = subprocess.run(["curl", "-sS", "-H", "Content-Type: application/json", "-d", body, server.url + "/embed"],
                             capture_output=True, text=True, check=True).stdout
        unix = subprocess.run(["curl", "-sS", "--unix-socket", str(sock), "-H", "Content-Type: application/json", "-d", body,
                               "http://localhost/embed"], capture_output=True, text=True, check=True).stdout
        assert json.loads(tcp) == json.loads(unix) and len(json.loads(tcp)[0]) == 384
        health = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", server.url + "/health"],
                                capture_output=True, text=True).stdout
        assert health == "200"
        assert server.stop() == 0
    assert not sock.exists()


def test_model_flags_apply_to_the_model_they_follow(minilm):
    requests = need("requests")
    # Before the first -m: every model; after one: that model.
    with Serve("--max-length", "64", "-m", f"a={minilm}", "--compute-type", "int8", "--max-length", "128",
               "-m", f"b={minilm}", "-m", f"c={minilm}", "--compute-type", "int8") as server:
        models = {m["served_model_name"]: m for m in requests.get(server.url + "/info").json()["models"]}
        assert (models["a"]["model_dtype"], models["a"]["max_input_length"]) == ("int8", 128)
        assert (models["b"]["model_dtype"], models["b"]["max_input_length"]) == ("float32", 64)
        assert (models["c"]["model_dtype"], models["c"]["max_input_length"]) == ("int8", 64)
        assert server.stop() == 0
    bad = subprocess.run([str(CLI), "serve", "-m", str(minilm), "--max-batch-tokens", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--max-batch-tokens" in bad.stderr
    missing = subprocess.run([str(CLI), "serve", "-m", "/no/such/model"], capture_output=True, text=True)
    assert missing.returncode == 2 and "must be a model directory" in missing.stderr
    broken = subprocess.run([str(CLI), "serve", "-m", str(SOURCE / "tests/data"), "--port", "0"], capture_output=True,
                            text=True, timeout=60)
    assert broken.returncode == 1 and "model 'data'" in broken.stderr


def test_64_concurrent_clients_each_get_their_own_rows(minilm):
    httpx = need("httpx")
    import asyncio

    words = [w for w in (minilm / "vocab.txt").read_text(encoding="utf-8").split() if w.isalpha()][1000:3000]
    rng = np.random.default_rng(3)
    requests_ = [[" ".join(rng.choice(words, size=int(rng.integers(3, 40)))) for _ in range(int(rng.integers(1, 4)))]
                 for _ in range(64)]
    flat = [t for r in requests_ for t in r]
    expected = dict(zip(flat, cli_embed(minilm, flat)))
    with Serve("-m", f"minilm={minilm}") as server:
        async def run():
            limits = httpx.Limits(max_connections=64)
            async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=120) as client:
                async def one(texts):
                    r = await client.post("/embed", json={"inputs": texts})
                    return texts, r.status_code, r.json()
                return await asyncio.gather(*(one(r) for r in requests_))
        results = asyncio.run(run())
        for texts, status, rows in results:
            assert status == 200
            assert len(rows) == len(texts)
            for text, row in zip(texts, rows):  # other batch-mates than the CLI's: within 1e-5
                assert np.max(np.abs(np.array(row, dtype=np.float32) - expected[text])) < 1e-5
        batched = [r for r in server.requests(200) if r.get("batch_requests", 1) > 1]
        assert batched, "no request shared a batch with another"
        assert server.stop() == 0


def test_sigterm_during_load_answers_every_accepted_request_and_exits_0(minilm):
    requests = need("requests")
    with Serve("-m", f"minilm={minilm}") as server:
        stop = threading.Event()
        received = {"ok": 0, "refused": 0, "unconnected": 0, "errors": 0}
        lock = threading.Lock()

        def client(k):
            s = requests.Session()
            i = 0
            while not stop.is_set():
                i += 1
                try:
                    r = s.post(server.url + "/embed", json={"inputs": [f"client {k} request {i} " + "word " * (i % 60)]},
                               timeout=60)
                    key = "ok" if r.status_code == 200 and len(r.json()) == 1 else "refused" if r.status_code == 503 else "errors"
                    if key == "errors":
                        print("unexpected", r.status_code, r.text, file=sys.stderr)
                except requests.ConnectionError:
                    key = "unconnected"  # the listener had closed: never read by the server
                with lock:
                    received[key] += 1
                if key != "ok":
                    time.sleep(0.01)

        threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        server.process.send_signal(signal.SIGTERM)
        code = server.process.wait(60)
        stop.set()
        for t in threads:
            t.join()
        server.reader.join(10)
        assert code == 0
        assert received["errors"] == 0
        assert received["ok"] > 0
        # Every request the server answered 200 reached its client: none lost in the shutdown.
        assert len(server.requests(200)) == received["ok"]
        # And every request it read was answered (200, or 503 once draining): none read
        # and then dropped without an answer.
        assert len(server.requests()) == received["ok"] + received["refused"], (server.requests()[-5:], received)
        assert any(r.get("message") == "stopped" for r in server.lines)


def vmrss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_memory_stays_flat_over_10000_bad_requests(minilm):
    bad = [
        ("POST", "/embed", b"{not json"),
        ("POST", "/embed", b'{"inputs": 42}'),
        ("POST", "/embed", b'{"inputs": "\xff\xfe"}'),
        ("POST", "/embed", json.dumps({"inputs": ["a"] * 1000}).encode()),  # over --max-client-batch-size
        ("POST", "/v1/embeddings", b'{"model": "nope", "input": "a"}'),
        ("GET", "/nowhere", b""),
        ("DELETE", "/embed", b""),
        ("POST", "/embed", b'{"inputs": [' + b"[" * 5000 + b"]" * 5000 + b"]}"),
        ("POST", "/rerank", b'{"query": 1}'),
        ("POST", "/embed", json.dumps({"inputs": "x " * 600, "truncate": False}).encode()),  # 422
    ]
    import http.client

    with Serve("-m", f"minilm={minilm}", "--no-access-log") as server:
        host, port = server.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)

        def send(n):
            for i in range(n):
                method, path, body = bad[i % len(bad)]
                connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
                r = connection.getresponse()
                r.read()
                assert 400 <= r.status < 500, (method, path, r.status)

        send(1000)  # warm-up: the allocator's arenas reach their working size
        before = vmrss_kib(server.process.pid)
        send(10_000)
        after = vmrss_kib(server.process.pid)
        assert after - before < 8 * 1024, f"RSS grew {before} → {after} KiB over 10,000 bad requests"
        assert server.stop() == 0


def test_attend_serve_from_python_and_python_m_attend_serve(minilm, tmp_path):
    requests = need("requests")
    import attend

    with attend.serve(f"minilm={minilm}", port=0, block=False, access_log=False, threads=2) as server:
        assert server.ready
        r = requests.post(server.url + "/v1/embeddings", json={"model": "minilm", "input": "hello"})
        assert r.status_code == 200 and len(r.json()["data"][0]["embedding"]) == 384
    with pytest.raises(ValueError, match="unknown model option"):
        attend.serve({"directory": str(minilm), "colour": "red"}, port=0, block=False)
    with pytest.raises(ValueError, match="must be a model directory"):
        attend.serve(f"nowhere={SOURCE / 'tests/data/models/README.md'}", port=0, block=False)
    with pytest.raises(RuntimeError, match="model 'empty'"):
        attend.serve(f"empty={tmp_path}", port=0, block=False, access_log=False)

    # python -m attend serve: the same flags; SIGINT shuts it down (exit 0).
    process = subprocess.Popen([sys.executable, "-m", "attend", "serve", "-m", f"minilm={minilm}", "--compute-type", "int8",
                                "--port", "0", "--json-output"], stderr=subprocess.PIPE, text=True)
    url = None
    for line in process.stderr:
        record = json.loads(line)
        url = record.get("url", url)
        if record.get("message") == "ready":
            break
    info = requests.get(url + "/info").json()
    assert info["model_dtype"] == "int8"
    process.send_signal(signal.SIGINT)
    assert process.wait(60) == 0
