"""attend.ray on a real Ray cluster on loopback: a head started with `ray start --head`
and a second node process joining it. The corpus is translated with
the shared transliteration model and compared line for line with `attend translate` on
one machine; one test kills a translating worker process mid-job.

Skipped (by run_pytest.sh, with a message) only when Ray could not be installed.
"""

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import CLI, assert_same_output, cli_translate, name_corpus

ray = pytest.importorskip("ray", reason="Ray could not be installed from PyPI")

RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes() -> dict:
    """pid → (parent pid, command line) of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parent = int(stat[stat.rindex(")") + 2:].split()[1])
                table[int(entry.name)] = (parent, (entry / "cmdline").read_bytes().decode(errors="replace"))
            except (OSError, ValueError):
                pass
    return table


def our_processes(marker: str) -> list:
    """PIDs of our cluster: the processes whose command line names its temp dir, and
    their descendants (Ray's workers retitle themselves "ray::…")."""
    table = processes()
    ours = {pid for pid, (_, cmdline) in table.items() if marker in cmdline}
    grew = True
    while grew:
        children = {pid for pid, (parent, _) in table.items() if parent in ours} - ours
        ours |= children
        grew = bool(children)
    return sorted(ours)


def translate_actor_pids(marker: str) -> list:
    """Our cluster's worker processes running attend.ray.Translate (titled ray::Translate…)."""
    table = processes()
    return [pid for pid in our_processes(marker) if table.get(pid, (0, ""))[1].startswith("ray::Translate")]


@pytest.fixture(scope="module")
def cluster():
    """HEAD:PORT of a two-node cluster (stopped, by PID, at the end)."""
    temp = tempfile.mkdtemp(prefix="attend-ray-", dir="/tmp")  # short: Ray's socket paths
    port = free_port()
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    # Two logical CPUs a node: two translating actors leave room for Ray Data's reads.
    common = ["--num-cpus=2", "--object-store-memory=100000000", "--disable-usage-stats"]
    try:
        subprocess.run([RAY, "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1",
                        "--include-dashboard=false", f"--temp-dir={temp}", *common],
                       check=True, env=env, capture_output=True, timeout=120)
        subprocess.run([RAY, "start", f"--address=127.0.0.1:{port}", "--node-ip-address=127.0.0.1", *common],
                       check=True, env=env, capture_output=True, timeout=120)
        address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            status = subprocess.run([RAY, "status", f"--address={address}"], env=env, capture_output=True, text=True)
            if status.stdout.count("node_") >= 2 or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert status.stdout.count("node_") >= 2, status.stdout + status.stderr
        yield address, temp
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in our_processes(temp):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            time.sleep(1)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Two files, 3000 and 2000 lines (a few empty); the second opens with a UTF-8
    byte-order mark (dropped, as `attend translate` drops it) and has no final newline."""
    d = tmp_path_factory.mktemp("corpus")
    lines = name_corpus(5000, seed=5)
    files = [d / "part-a.txt", d / "part-b.txt"]
    files[0].write_text("\n".join(lines[:3000]) + "\n", encoding="utf-8")
    files[1].write_text("\ufeff" + "\n".join(lines[3000:]), encoding="utf-8")
    return files


def run_cli(address, model, inputs, output, *flags, wait=True):
    command = [sys.executable, "-m", "attend.ray", "translate", "--address", address, "-m", str(model),
               "--input-format", "tokens", "-i", *map(str, inputs), "-o", str(output), *flags]
    if not wait:
        return subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_cli_translates_every_line_in_order_like_attend_translate(cluster, translit, corpus, tmp_path, cli):
    address, _ = cluster
    out = tmp_path / "out"
    run = run_cli(address, translit, corpus, out, "--beam", "2", "--shard-lines", "700", "--actors", "2")
    assert run.returncode == 0, run.stderr
    assert "5000/5000 lines" in run.stderr and "lines/s" in run.stderr
    for f in corpus:
        expected = cli_translate(translit, f, "--input-format", "tokens", "--beam", "2")
        got = (out / f.name).read_text(encoding="utf-8").split("\n")[:-1]
        assert len(got) == len(expected) == len(f.read_text(encoding="utf-8").splitlines())
        assert got == expected

    # A second run finds the outputs complete and translates nothing.
    before = [(out / f.name).stat().st_mtime_ns for f in corpus]
    again = run_cli(address, translit, corpus, out, "--beam", "2", "--shard-lines", "700", "--actors", "2")
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("is complete: skipped") == 2
    assert [(out / f.name).stat().st_mtime_ns for f in corpus] == before

    # An interrupted run leaves finished shards, which the next run skips.
    work = out / ".attend-ray" / corpus[0].name
    (out / ".attend-ray" / f"{corpus[0].name}.json").unlink()
    (out / corpus[0].name).unlink()
    work.mkdir()
    resumed = run_cli(address, translit, corpus[:1], out, "--beam", "2", "--shard-lines", "700", "--actors", "2")
    assert resumed.returncode == 0 and "3000/3000" in resumed.stderr, resumed.stderr
    assert (out / corpus[0].name).read_text(encoding="utf-8").split("\n")[:-1] == cli_translate(
        translit, corpus[0], "--input-format", "tokens", "--beam", "2")


def test_cli_takes_attend_translates_decoding_flags(cluster, translit, corpus, tmp_path, cli):
    """--n-best, a forced prefix, scores: the decoding flags of `attend translate`, with its output."""
    address, _ = cluster
    out = tmp_path / "out"
    flags = ["--beam", "3", "--n-best", "2", "--target-prefix", "a", "--no-repeat-ngram-size", "2"]
    run = run_cli(address, translit, corpus[1:], out, *flags, "--shard-lines", "300", "--actors", "2")
    assert run.returncode == 0, run.stderr
    got = (out / corpus[1].name).read_text(encoding="utf-8").split("\n")[:-1]
    assert len(got) == 2 * 2000
    assert_same_output(got, cli_translate(translit, corpus[1], "--input-format", "tokens", *flags))

    # Seeded sampling: each line draws by its line number, empty lines included, so the
    # cluster's shards and batches give the CLI's bytes.
    sampled = ["--sample-topk", "10", "--temperature", "1.5", "--seed", "7"]
    run = run_cli(address, translit, corpus[1:], tmp_path / "sampled", *sampled, "--shard-lines", "333",
                  "--max-batch-size", "5", "--actors", "2")
    assert run.returncode == 0, run.stderr
    expected = subprocess.run([str(CLI), "translate", "-m", str(translit), "-i", str(corpus[1]), "-q",
                               "--input-format", "tokens", *sampled], check=True, capture_output=True).stdout
    assert (tmp_path / "sampled" / corpus[1].name).read_bytes() == expected


def test_a_killed_worker_loses_and_repeats_no_line(cluster, translit, tmp_path, cli):
    address, temp = cluster
    source = tmp_path / "big.txt"
    source.write_text("\n".join(name_corpus(12000, seed=9)) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    job = run_cli(address, translit, [source], out, "--beam", "4", "--shard-lines", "300", "--actors", "2",
                  wait=False)
    killed = None
    seen = []
    deadline = time.monotonic() + 300
    for line in job.stderr:  # progress lines: kill once some lines are done, well before the end
        seen.append(line)
        if killed is None and "lines (" in line and not line.startswith("attend.ray: 0/"):
            victims = translate_actor_pids(temp)
            assert victims, "no ray::Translate worker process found"
            os.kill(victims[0], signal.SIGKILL)
            killed = victims[0]
            assert not (out / source.name).exists()
        if time.monotonic() > deadline:
            job.kill()
            break
    assert job.wait(timeout=300) == 0, "".join(seen)
    assert killed is not None, "".join(seen)
    got = (out / source.name).read_text(encoding="utf-8").split("\n")[:-1]
    assert got == cli_translate(translit, source, "--input-format", "tokens", "--beam", "4")


def test_map_batches_with_ray_data(cluster, translit, corpus, cli):
    """The library pattern: read_text → map_batches(attend.ray.Translate, …) with a
    model loaded once per actor."""
    import attend.ray

    address, _ = cluster
    ray.init(address=address, log_to_driver=False)
    try:
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True
        ds = ray.data.read_text(str(corpus[1]), drop_empty_lines=False)
        ds = ds.map_batches(attend.ray.Translate, fn_constructor_args=(str(translit),),
                            fn_constructor_kwargs={"input_format": "tokens"}, concurrency=2, batch_size=250,
                            num_cpus=1, batch_format="pandas")
        got = [row["translation"] for row in ds.take_all()]
    finally:
        ray.shutdown()
    assert got == cli_translate(translit, corpus[1], "--input-format", "tokens")


# ---- encoder-only models: attend.ray.Embed and `python -m attend.ray embed` ----

ENCODER = Path(__file__).resolve().parents[2] / "tests/data/encoders/bert"


def id_corpus(lines: int, seed: int) -> list:
    """Lines of token ids of the bert fixture ([CLS] … [SEP]), 0 to 60 tokens between."""
    rng = random.Random(seed)
    return [" ".join(["2"] + [str(rng.randint(5, 61)) for _ in range(rng.randint(0, 60))] + ["3"]) for _ in range(lines)]


def cli_embed(source) -> np.ndarray:
    """`attend embed` on one machine: the rows the cluster's output must equal."""
    out = source.with_suffix(".reference.npy")
    subprocess.run([str(CLI), "embed", "-m", str(ENCODER), "--input-format", "ids", "-i", str(source), "-o", str(out),
                    "-q"], check=True)
    return np.load(out)


def run_embed(address, inputs, output, *flags, wait=True):
    command = [sys.executable, "-m", "attend.ray", "embed", "--address", address, "-m", str(ENCODER),
               "--input-format", "ids", "-i", *map(str, inputs), "-o", str(output), *flags]
    if not wait:
        return subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_embed_cli_one_npy_row_per_line_and_restartable(cluster, tmp_path, cli):
    address, _ = cluster
    sources = [tmp_path / "a.txt", tmp_path / "b.txt"]
    sources[0].write_text("\n".join(id_corpus(1500, 1)) + "\n")
    sources[1].write_text("\ufeff" + "\n".join(id_corpus(700, 2)))  # a byte-order mark; no final newline
    out = tmp_path / "out"
    run = run_embed(address, sources, out, "--shard-lines", "400", "--actors", "2")
    assert run.returncode == 0, run.stderr
    for s in sources:
        got = np.load(out / (s.name + ".npy"))
        expected = cli_embed(s)
        assert got.shape == expected.shape == (len(s.read_text().splitlines()), 32)
        # Shards form other batches than the CLI's chunks: the GEMMs may round a sum the
        # other way (tests/encoder/test_encoder_fixtures.cpp, batching).
        np.testing.assert_allclose(got, expected, atol=1e-5)
    again = run_embed(address, sources, out, "--shard-lines", "400", "--actors", "2")
    assert again.returncode == 0 and again.stderr.count("is complete: skipped") == 2, again.stderr


def test_a_line_over_the_cap_is_read_as_the_cli_reads_it(cluster, translit, tmp_path, cli):
    """A line longer than the CLI reads (16 MiB for translate, 1 MiB for embed) is read
    only that far on the driver too, with the CLI's warning: the outputs are the CLI's,
    and the driver never holds the line whole (test_reliability.py measures that)."""
    address, _ = cluster
    name = "آ ت ز م و ن"
    source = tmp_path / "long.txt"
    with open(source, "w", encoding="utf-8") as f:
        f.write(name + "\n" + (name + " ") * ((17 << 20) // (len(name.encode()) + 1)) + name + "\n" + name + "\n")
    out = tmp_path / "out"
    run = run_cli(address, translit, [source], out, "--shard-lines", "2", "--actors", "1")
    assert run.returncode == 0, run.stderr
    assert (out / "long.txt").read_text(encoding="utf-8").split("\n")[:-1] == cli_translate(
        translit, source, "--input-format", "tokens")
    assert f"{source}: 1 line(s) longer than 16777216 bytes were read only up to that" in run.stderr, run.stderr
    long_line = source.read_bytes().split(b"\n")[1]
    assert f"(first: line 2, {len(long_line)} bytes)" in run.stderr, run.stderr

    ids = tmp_path / "ids.txt"
    ids.write_text("2 7 8 3\n2 " + "9 " * (600_000) + "3\n2 11 3\n")
    run = run_embed(address, [ids], tmp_path / "out-ids", "--actors", "1")
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out-ids" / "ids.txt.npy"), cli_embed(ids), atol=1e-5)
    assert f"{ids}: 1 line(s) longer than 1048576 bytes were read only up to that" in run.stderr, run.stderr


def test_embed_an_empty_input_is_zero_rows_of_the_models_dimension(cluster, tmp_path, cli):
    """(0, dim) as `attend embed` writes it, never (0, 0): the arrays of several inputs concatenate."""
    address, _ = cluster
    empty, some = tmp_path / "empty.txt", tmp_path / "some.txt"
    empty.write_text("")
    some.write_text("\n".join(id_corpus(3, 5)) + "\n")
    out = tmp_path / "out"
    run = run_embed(address, [empty, some], out, "--actors", "1")
    assert run.returncode == 0, run.stderr
    got = np.load(out / "empty.txt.npy")
    assert got.shape == cli_embed(empty).shape == (0, 32) and got.dtype == np.float32
    assert np.concatenate([got, np.load(out / "some.txt.npy")]).shape == (3, 32)


def test_embed_a_killed_worker_loses_and_repeats_no_line(cluster, tmp_path, cli):
    address, temp = cluster
    source = tmp_path / "big.txt"
    source.write_text("\n".join(id_corpus(40000, 3)) + "\n")
    out = tmp_path / "out"
    job = run_embed(address, [source], out, "--shard-lines", "200", "--actors", "2", wait=False)
    killed, seen = None, []
    for line in job.stderr:
        seen.append(line)
        if killed is None and "lines (" in line and not line.startswith("attend.ray: 0/"):
            table = processes()
            victims = [p for p in our_processes(temp) if table.get(p, (0, ""))[1].startswith("ray::Embed")]
            assert victims, "no ray::Embed worker process found"
            os.kill(victims[0], signal.SIGKILL)
            killed = victims[0]
    assert job.wait(timeout=300) == 0, "".join(seen)
    assert killed is not None, "".join(seen)
    np.testing.assert_allclose(np.load(out / "big.txt.npy"), cli_embed(source), atol=1e-5)


def test_embed_map_batches_with_ray_data(cluster, tmp_path, cli):
    import attend.ray

    address, _ = cluster
    source = tmp_path / "lines.txt"
    source.write_text("\ufeff" + "\n".join(id_corpus(300, 4)) + "\n")  # read_text keeps the mark; Embed drops it
    ray.init(address=address, log_to_driver=False)
    try:
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True
        ds = ray.data.read_text(str(source), drop_empty_lines=False)
        ds = ds.map_batches(attend.ray.Embed, fn_constructor_args=(str(ENCODER),),
                            fn_constructor_kwargs={"input_format": "ids"}, concurrency=2, batch_size=64, num_cpus=1)
        rows = ds.take_all()
    finally:
        ray.shutdown()
    got = np.stack([r["embedding"] for r in rows])
    np.testing.assert_allclose(got, cli_embed(source), atol=1e-5)


# ---- one exit status per failure class, on every command that runs a model ----

def test_each_failure_class_exits_as_the_cli_and_names_the_thing(cluster, translit, corpus, tmp_path, cli):
    """0 ok, 1 a bad model or input, 2 bad usage — the same through `attend translate`,
    `attend embed` and `python -m attend.ray translate|embed`, each message naming the
    path or flag at fault. (The model cases need the cluster: a model is looked at where
    it runs.)"""
    address, _ = cluster
    text = tmp_path / "text.txt"
    text.write_text("hello world\nthe cat\n")
    ray = [sys.executable, "-m", "attend.ray"]
    commands = {  # name: (model, input, the command line for MODEL, INPUT, EXTRA flags)
        "attend translate": (translit, corpus[1], lambda m, i, x: [str(CLI), "translate", "-m", m, "--input-format",
                                                                   "tokens", "-i", i, "-o", str(tmp_path / "t.txt"), *x]),
        "attend embed": (ENCODER, text, lambda m, i, x: [str(CLI), "embed", "-m", m, "-i", i, "-o",
                                                         str(tmp_path / "e.npy"), *x]),
        "attend.ray translate": (translit, corpus[1], lambda m, i, x: [*ray, "translate", "--address", address, "-m", m,
                                                                      "--input-format", "tokens", "-i", i, "-o",
                                                                      str(tmp_path / "rt"), *x]),
        "attend.ray embed": (ENCODER, text, lambda m, i, x: [*ray, "embed", "--address", address, "-m", m, "-i", i,
                                                             "-o", str(tmp_path / "re"), *x]),
    }
    # (failure class, model or None, input or None, flags, status, what the message names)
    cases = [
        ("missing model", "/nonexistent/model", None, [], 1, "/nonexistent/model: model directory does not exist"),
        ("model path is a file", "FILE", None, [], 1, "FILE: not a directory"),
        ("missing input", None, "/nonexistent/in.txt", [], 1, "/nonexistent/in.txt: No such file or directory"),
        ("input is a directory", None, str(tmp_path), [], 1, f"{tmp_path}: Is a directory"),
        ("bad option value", None, None, ["--max-batch-size", "0"], 2, "--max-batch-size"),
        ("unknown option", None, None, ["--frobnicate"], 2, "--frobnicate"),
    ]
    for name, (good_model, good_input, command) in commands.items():
        model_file = str((good_model / ("model.bin" if "translate" in name else "config.json")).resolve())
        for what, model, source, flags, status, message in cases:
            model = model_file if model == "FILE" else model or str(good_model)
            message = message.replace("FILE", model_file)
            run = subprocess.run(command(model, source or str(good_input), flags), capture_output=True, text=True,
                                 timeout=120)
            assert run.returncode == status, (name, what, run.stderr)
            assert message in run.stderr and "Errno" not in run.stderr, (name, what, run.stderr)
    # Options the model cannot take: a usage error, found where the model is.
    for name in ("attend translate", "attend.ray translate"):
        good_model, good_input, command = commands[name]
        run = subprocess.run(command(str(good_model), str(good_input), ["--max-length", "100000"]),
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and "100000: must be in [0, " in run.stderr, (name, run.stderr)
