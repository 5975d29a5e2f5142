#!/usr/bin/env python3
"""The Python package's overhead against the CLI, on the standard workload.

The workload is `attend bench`'s: preset base (Transformer-base, random weights, seed 1),
256 synthetic sources of 10–50 ids (splitmix64, seed 1), exactly 48 generated tokens
each, batches of at most 32 sentences, 2 threads. Both sides run it as a user would,
from a file of ids to a file of ids:

  CLI     attend translate --preset base --input-format ids --min-length 48 --max-length 48 …
  Python  attend.Translator(attend.Model.preset("base"), intra_threads=2).translate_batch(…)
          over the same chunks of lines the CLI reads (64, 128, 256, … lines), so that both
          form the same batches and the difference is the Python layer alone.

Runs alternate (CLI then Python, Python then CLI, …) in one process tree; the ratio of the medians is
reported for the translation time (after loading, as the CLI's summary counts it) and
for the whole command (interpreter start, import and model building included). A
second table measures two Python threads sharing one translator (intra_threads=1 each)
against one thread doing the same work: the GIL is released while translating.

Run it under the exclusive lock: flock -x /tmp/attend-cpu.lock bench/python_overhead.py
Needs the attend package installed in the running interpreter (pip install .).
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


def splitmix64(seed):
    state = seed
    while True:
        state = (state + SPLITMIX_GAMMA) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def bench_sentences(model, count=256, lengths=(10, 50), seed=1):
    """tools/cli/bench_workload.cpp's synthetic_sentences, id for id."""
    special = model.special_ids
    avoid = {special.pad, special.bos, special.eos, special.unk, special.decoder_start}
    vocabulary = model.source_vocabulary_size
    rng = splitmix64(seed)
    out = []
    for _ in range(count):
        length = lengths[0] + next(rng) % (lengths[1] - lengths[0] + 1)
        s = []
        while len(s) < length:
            token = next(rng) % vocabulary
            if token not in avoid:
                s.append(token)
        out.append(s)
    return out


PYTHON_SIDE = r'''
import sys, time
t_start = time.perf_counter()
import attend
inp, out, tgt = sys.argv[1], sys.argv[2], int(sys.argv[3])
translator = attend.Translator(attend.Model.preset("base", seed=1), intra_threads=2)
lines = open(inp).read().split("\n")[:-1]
t0 = time.perf_counter()
with open(out, "w") as f:
    first, chunk = 0, 64                      # the CLI's chunks: 64, 128, 256, … lines
    while first < len(lines):
        ids = [list(map(int, l.split())) for l in lines[first:first + chunk]]
        for r in translator.translate_batch(ids, beam_size=1, min_decoding_length=tgt,
                                            max_decoding_length=tgt, max_batch_size=32):
            f.write(" ".join(map(str, r.hypotheses[0])) + "\n")
        first, chunk = first + chunk, min(chunk * 2, 4096)
print(f"translate_seconds {time.perf_counter() - t0:.6f}", file=sys.stderr)
'''


def run_cli(cli, workload, out, tgt, threads):
    t0 = time.perf_counter()
    r = subprocess.run([cli, "translate", "--preset", "base", "--seed", "1", "--input-format", "ids",
                        "--min-length", str(tgt), "--max-length", str(tgt),
                        # the Python side's split (CTranslate2's default inter_threads=1)
                        "--inter-threads", "1", "--intra-threads", str(threads),
                        "--max-batch-size", "32", "-i", workload, "-o", out], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    seconds = float(re.search(r"lines \(\d+ empty\) in ([0-9.]+) s", r.stderr).group(1))
    return seconds, wall


def run_python(script, workload, out, tgt):
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, script, workload, out, str(tgt)], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    return float(re.search(r"translate_seconds ([0-9.]+)", r.stderr).group(1)), wall


def thread_scaling(rounds):
    import attend

    model = attend.Model.preset("base", seed=1)
    translator = attend.Translator(model, intra_threads=1)
    sentences = bench_sentences(model, count=64)
    batches = [sentences[i:i + 16] for i in range(0, 64, 16)]

    def work(my_batches):
        for b in my_batches:
            translator.translate_batch(b, beam_size=1, min_decoding_length=24, max_decoding_length=24)

    work(batches[:1])
    ratios = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        work(batches)
        one = time.perf_counter() - t0
        threads = [threading.Thread(target=work, args=(batches[i::2],)) for i in range(2)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        two = time.perf_counter() - t0
        ratios.append(one / two)
    return ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default=str(Path(__file__).resolve().parents[1] / "build/release/bin/attend"))
    parser.add_argument("--rounds", type=int, default=3, help="alternating CLI/Python pairs")
    parser.add_argument("--tgt-len", type=int, default=48)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import attend

    with tempfile.TemporaryDirectory() as d:
        model = attend.Model.preset("base", seed=1)
        workload = Path(d) / "workload.ids"
        workload.write_text("".join(" ".join(map(str, s)) + "\n" for s in bench_sentences(model)))
        del model
        script = Path(d) / "python_side.py"
        script.write_text(PYTHON_SIDE)
        cli_runs, py_runs = [], []
        for round in range(args.rounds):  # alternating, and each side first in every other round
            sides = [lambda: cli_runs.append(run_cli(args.cli, str(workload), f"{d}/cli.out", args.tgt_len,
                                                     args.threads)),
                     lambda: py_runs.append(run_python(str(script), str(workload), f"{d}/py.out", args.tgt_len))]
            for side in sides if round % 2 == 0 else sides[::-1]:
                side()
        same = Path(f"{d}/cli.out").read_text() == Path(f"{d}/py.out").read_text()
    scaling = thread_scaling(args.rounds)

    median = lambda runs, i: statistics.median(r[i] for r in runs)  # noqa: E731
    result = {
        "cli_translate_seconds": median(cli_runs, 0), "python_translate_seconds": median(py_runs, 0),
        "cli_wall_seconds": median(cli_runs, 1), "python_wall_seconds": median(py_runs, 1),
        "same_output": same, "rounds": args.rounds, "runs": {"cli": cli_runs, "python": py_runs},
        "two_threads_speedup": statistics.median(scaling), "two_threads_runs": scaling,
    }
    result["python_over_cli_translate"] = result["python_translate_seconds"] / result["cli_translate_seconds"]
    result["python_over_cli_wall"] = result["python_wall_seconds"] / result["cli_wall_seconds"]
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"standard workload (preset base, 256 × 10–50 ids → 48 tokens, batch 32, {args.threads} threads), "
          f"median of {args.rounds} alternating runs; outputs identical: {same}")
    print("| | CLI s | Python s | Python / CLI |\n|---|---:|---:|---:|")
    print(f"| translation | {result['cli_translate_seconds']:.2f} | {result['python_translate_seconds']:.2f} | "
          f"{result['python_over_cli_translate']:.3f} |")
    print(f"| whole command | {result['cli_wall_seconds']:.2f} | {result['python_wall_seconds']:.2f} | "
          f"{result['python_over_cli_wall']:.3f} |")
    print(f"two Python threads on one translator (intra_threads=1): {result['two_threads_speedup']:.2f}× one thread "
          f"(runs: {', '.join(f'{r:.2f}' for r in scaling)})")


if __name__ == "__main__":
    main()
