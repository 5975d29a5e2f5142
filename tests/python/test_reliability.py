"""Reliability of the Python faces (issue 36): a forked child uses the models its parent
made (os.fork, multiprocessing "fork" pools — every child under a deadline), sampling
draws the same whatever the chunking (translate_iterable, the asynchronous path,
generate_tokens, the CLI), Ctrl-C stops a long SentenceEncoder.encode within a second
and leaves it usable, the engine's limits are named as the caller's arguments, and a
huge line costs what truncation keeps of it."""

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import attend
import attend.ray

from conftest import cli_translate

ENCODER = Path(__file__).resolve().parents[2] / "tests/data/encoders/bert"
NAME = ["آ", "ت", "ز", "م", "و", "ن"]
TEXTS = ["a first text", "the second one", "three", "and a fourth", "five", "six of them", "seven", "eight"]


def in_child(check, seconds=60):
    """check() in a forked child: True or False as it returned, or "hung" past `seconds`
    (compare with `is True`: the string is truthy)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # report and leave at once, whatever happens
        try:
            os.write(write, b"1" if check() else b"0")
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + seconds
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return "hung"
        time.sleep(0.02)
    with os.fdopen(read, "rb") as r:
        return r.read() == b"1"


def hypotheses(results):
    return [r.hypotheses for r in results]


# ---- fork ----

def test_a_forked_child_translates_with_the_parents_inter_threads_translator(translit):
    translator = attend.Translator(str(translit), inter_threads=2, intra_threads=1)
    sources = [NAME[:k] for k in range(1, 7)] * 4
    expected = hypotheses(translator.translate_batch(sources, max_batch_size=2, beam_size=1))  # both workers run
    assert in_child(lambda: hypotheses(translator.translate_batch(sources, max_batch_size=2, beam_size=1)) == expected) is True
    assert hypotheses(translator.translate_batch(sources, max_batch_size=2, beam_size=1)) == expected


@pytest.mark.parametrize("threads", [{}, {"inter_threads": 2, "intra_threads": 1}])
def test_a_forked_child_encodes_with_the_parents_sentence_encoder(threads):
    model = attend.SentenceEncoder(str(ENCODER), **threads)  # {}: the defaults, inter_threads chosen for the cores
    expected = model.encode(TEXTS * 8)
    assert in_child(lambda: np.array_equal(model.encode(TEXTS * 8), expected)) is True
    assert np.array_equal(model.encode(TEXTS * 8), expected)


# Module globals, so that a "fork" pool's workers inherit the models the parent made.
_POOL = {}


def _translate(k):
    return _POOL["translator"].translate_batch([NAME[:k]] * 4, beam_size=1)[0].hypotheses


def _encode(k):
    return _POOL["encoder"].encode(TEXTS[:k])


def _ray_translate(k):
    return _POOL["ray_translate"].translate_lines([" ".join(NAME[:k])] * 3, k)


def _ray_embed(k):
    return _POOL["ray_embed"].embed_lines(TEXTS[:k])


def test_a_multiprocessing_fork_pool_uses_the_parents_models(translit):
    _POOL["translator"] = attend.Translator(str(translit), inter_threads=2, intra_threads=1)
    _POOL["encoder"] = attend.SentenceEncoder(str(ENCODER), inter_threads=2, intra_threads=1)
    _POOL["ray_translate"] = attend.ray.Translate(str(translit), input_format="tokens", threads=2, max_batch_size=1)
    _POOL["ray_embed"] = attend.ray.Embed(str(ENCODER), threads=2, max_batch_size=1)
    jobs = {_translate: range(1, 7), _encode: range(1, 9), _ray_translate: range(1, 7), _ray_embed: range(1, 9)}
    expected = {f: [f(k) for k in ks] for f, ks in jobs.items()}  # the parent's workers and locks are in use
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        for f, ks in jobs.items():
            got = pool.map_async(f, ks).get(timeout=60)  # a child that hangs fails here, not the suite
            for a, b in zip(got, expected[f]):
                assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, f.__name__


# ---- sampling: a sentence draws by its index in the stream, whatever the chunk ----

def test_translate_iterable_samples_as_translate_batch_the_async_path_and_the_cli(translit, cli, tmp_path):
    translator = attend.Translator(str(translit), intra_threads=1)
    options = dict(beam_size=1, sampling_topk=0, sampling_temperature=2.0)
    attend.set_random_seed(5)
    batch = hypotheses(translator.translate_batch([NAME] * 1024, **options))
    assert len({tuple(h[0]) for h in batch[:64]}) > 8  # really sampled
    streamed = [r.hypotheses for r in translator.translate_iterable(iter([NAME] * 1024), max_batch_size=32, **options)]
    assert streamed == batch  # not line i + 512 == line i: chunks are not numbered from 0
    asynchronous = [r.result().hypotheses for r in translator.translate_batch([NAME] * 1024, asynchronous=True, **options)]
    assert asynchronous == batch
    one_at_a_time = [r.hypotheses for r in translator.translate_iterable([NAME] * 60, max_batch_size=1, **options)]
    assert one_at_a_time == batch[:60] and len({tuple(h[0]) for h in one_at_a_time}) > 1
    source = tmp_path / "names.txt"
    source.write_text((" ".join(NAME) + "\n") * 200)
    cli_lines = cli_translate(translit, source, "--input-format", "tokens", "--seed", "5", "--sampling",
                              "--temperature", "2")
    assert cli_lines == [" ".join(h[0]) for h in batch[:200]]


def test_generate_tokens_samples_as_translate_batch_of_its_source(translit):
    translator = attend.Translator(str(translit), intra_threads=1)
    attend.set_random_seed(11)
    for k in range(2, 7):
        options = dict(sampling_topk=0, sampling_temperature=3.0, max_decoding_length=12)
        expected = translator.translate_batch([NAME[:k]], beam_size=1, **options)[0].hypotheses[0]
        steps = list(translator.generate_tokens(NAME[:k], **options))
        assert [s.token for s in steps if not (s.is_last and s.token == "</s>")] == expected


def test_score_iterable_scores_as_score_batch(translit):
    translator = attend.Translator(str(translit), intra_threads=1)
    sources = [NAME[:k] for k in range(1, 7)] * 30
    targets = [["a", "t", "z"][: k % 3 + 1] for k in range(len(sources))]
    batch = translator.score_batch(sources, targets)
    streamed = list(translator.score_iterable(iter(sources), iter(targets), max_batch_size=4))
    assert [r.log_probs for r in streamed] == [r.log_probs for r in batch]


# ---- Ctrl-C ----

INTERRUPTED = textwrap.dedent("""
    import sys, time
    import attend
    model = attend.SentenceEncoder(sys.argv[1])
    sample = model.encode(["hello world"])
    texts = ["a fairly long text of several words that the tokenizer cuts into pieces " * 2] * 2000
    began = time.monotonic()
    model.encode(texts)
    rate = len(texts) / (time.monotonic() - began)
    texts = texts * max(1, int(rate * 12 / len(texts)))  # about 12 s of work, whatever the machine
    print("ready", flush=True)
    began = time.monotonic()
    try:
        model.encode(texts)
        print("finished", time.monotonic() - began, flush=True)
    except KeyboardInterrupt:
        print("interrupted", time.monotonic() - began, flush=True)
    print("usable", bool((model.encode(["hello world"]) == sample).all()), flush=True)
""")


def test_ctrl_c_stops_a_long_encode_within_a_second_and_the_encoder_stays_usable():
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED, str(ENCODER)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    lines = out.split("\n")
    assert lines[0].startswith("interrupted"), (out, err)
    assert float(lines[0].split()[1]) < 1.0 + 1.5, out  # the signal came 1 s in: stopped within 1.5 s of it
    assert lines[1] == "usable True", out
    assert time.monotonic() - sent < 10


def test_forward_batch_in_pieces_gives_what_one_call_gives():
    encoder = attend.Encoder(str(ENCODER))
    ids = [[2] + [5 + (i * 7 + k) % 50 for k in range(i % 40)] + [3] for i in range(700)]
    whole = encoder._engine.forward_ids(ids, None)
    out = encoder.forward_batch(ids)  # long: cut into pieces Ctrl-C can stop between
    np.testing.assert_array_equal(out.last_hidden_state, whole[0])
    np.testing.assert_array_equal(out.pooler_output, whole[1])


# ---- limits, named as the caller's arguments ----

def test_settings_out_of_the_engines_range_are_value_errors_naming_them(translit):
    limits = attend._attend.limits
    translator = attend.Translator(str(translit), intra_threads=1)
    with pytest.raises(ValueError, match=r"translate_batch: max_batch_size=65537 must be in \[0, 65536\]"):
        translator.translate_batch([NAME], max_batch_size=limits["max_batch_size"] + 1)
    with pytest.raises(ValueError, match=r"max_batch_size=16777217 must be in \[0, 16777216\]"):
        translator.translate_batch([NAME], max_batch_size=limits["max_batch_tokens"] + 1, batch_type="tokens")
    with pytest.raises(ValueError, match=r"max_length = 100000: must be in \[0, 64\]"):
        attend.SentenceEncoder(str(ENCODER), max_length=100000)  # was cut to 64 in silence
    with pytest.raises(ValueError, match=r"max_batch_tokens = -1"):
        attend.Encoder(str(ENCODER), max_batch_tokens=-1)
    with pytest.raises(ValueError, match=r"max_batch_size = 65537"):
        attend.ray.Embed(str(ENCODER), max_batch_size=65537)


# ---- a huge line costs what truncation keeps ----

HUGE = textwrap.dedent("""
    import resource, sys
    import attend
    translator = attend.Translator(sys.argv[1], intra_threads=1)
    head = "The quick brown fox jumps over the lazy dog. A small cat sat on the old stone."
    line = head + " the lazy dog and the quick fox" * (40_000_000 // 31)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    whole = translator.translate_text([line], max_input_length=16, beam_size=1, max_decoding_length=8)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    short = translator.translate_text([head], max_input_length=16, beam_size=1, max_decoding_length=8)
    print(grown // 1024, whole[0].hypotheses[0] == short[0].hypotheses[0])
""")


def test_translate_text_of_a_40_mb_line_costs_what_the_kept_tokens_cost(text_model):
    out = subprocess.run([sys.executable, "-c", HUGE, str(text_model)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    grown_mib, same = out.stdout.split()
    assert same == "True"  # the kept ids are the whole line's
    assert int(grown_mib) < 100, out.stdout  # was ~17 bytes per byte of the line (> 600 MiB)


def test_python_m_attend_ray_flags_show_and_check_the_engines_ranges(tmp_path):
    """The Ray command line's numeric flags: ranges in --help, exit 2 naming the flag —
    checked by argparse, before any cluster starts."""
    for command in ("translate", "embed"):
        help_text = subprocess.run([sys.executable, "-m", "attend.ray", command, "--help"], capture_output=True,
                                   text=True, check=True).stdout
        assert "[1, 65536]" in help_text and "[1, 4096]" in help_text, help_text
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    for command, flag, value, message in (("translate", "--max-batch-size", "65537", "[1, 65536], got 65537"),
                                          ("embed", "--max-batch-size", "0", "[1, 65536], got 0"),
                                          ("translate", "--max-batch-tokens", "-1", "[0, 16777216], got -1"),
                                          ("embed", "--threads", "5000", "[1, 4096], got 5000"),
                                          ("translate", "--seed", "-1", "[0, 18446744073709551615], got -1")):
        run = subprocess.run([sys.executable, "-m", "attend.ray", command, "--address", "local", "-m", str(ENCODER),
                              "-i", str(source), "-o", str(tmp_path / "out"), flag, value],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 2 and flag in run.stderr and message in run.stderr, (command, flag, run.stderr)


def test_attend_ray_reads_a_long_line_as_attend_translate_does(tmp_path):
    """python -m attend.ray reads a line as the CLI's LineReader does: a line longer than
    the cap (a "\\r" before its "\\n" counted) keeps its first cap bytes, backed off to
    the start of a character they would split; the rest is dropped as it is read."""
    from attend.ray import _Cuts, _read_lines

    path = tmp_path / "lines.txt"
    path.write_bytes(b"short\r\n" + b"ab" + "é".encode() * 10 + b"\n" + b"fits\r\n" + b"x" * 9 + b"\r\n" + b"last")
    cuts = _Cuts()
    with open(path, "rb") as f:
        assert _read_lines(f, 2, 5, cuts, 1) + _read_lines(f, 10, 5, cuts, 3) == ["short", "abé", "fits", "xxxxx", "last"]
    assert (cuts.count, cuts.first, cuts.first_bytes) == (3, 1, 6)
    with open(path, "rb") as f:
        assert _read_lines(f, 10) == ["short", "ab" + "é" * 10, "fits", "x" * 9, "last"]  # no cap: whole


def test_attend_ray_never_holds_a_long_line_whole(tmp_path):
    import tracemalloc

    from attend.ray import _Cuts, _read_lines

    path = tmp_path / "long.txt"
    with open(path, "wb") as f:
        f.write(b"first\n")
        for _ in range(40):
            f.write(b"the quick brown fox " * 52_429)  # ~1 MiB a write, no newline: one 40 MiB line
        f.write(b"\nafter\n")
    cuts = _Cuts()
    tracemalloc.start()
    with open(path, "rb") as f:
        lines = _read_lines(f, 10, 1 << 20, cuts, 1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [len(x) for x in lines] == [5, 1 << 20, 5] and lines[2] == "after"
    assert (cuts.count, cuts.first, cuts.first_bytes) == (1, 2, 40 * 20 * 52_429)
    assert peak < 8 << 20, peak  # was the whole line, and its str: > 80 MiB
