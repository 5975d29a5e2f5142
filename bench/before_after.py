#!/usr/bin/env python3
"""Two attend builds on the standard workloads, run by run in turn so that machine drift
hits both alike: what a change costs (or gains) end to end.

    bench/before_after.py OLD_ATTEND NEW_ATTEND [--rounds 5] [--threads 2]
        [--types float32 bfloat16 int8] [--workloads ...] [--encoder DIR]
        [--sentences N] [--out results.jsonl] [--report-only results.jsonl]

Workloads (one `attend bench --json` each; --sentences scales them down):
  translate-greedy     the base preset, greedy, batches of 32, 256 sentences × 48 tokens
                       (issue 3's standard workload)
  translate-beam4      the same with beam 4
  translate-one        one sentence per batch, greedy: every decoder GEMM has 1 row (64)
  translate-one-beam2  one sentence per batch, beam 2: 2 rows (64)
  embed                the standard embedding workload (../shared/workloads/
                       embedding_workload.py: 1024 sentences, 5–100 words) on --encoder
                       DIR (all-MiniLM-L6-v2; default: the copy the tests fetch into
                       build/release/models), batches of 32
Every round runs each (workload, compute type) with both binaries, OLD first in even
rounds and NEW first in odd ones. Each result goes to --out (JSON lines) the moment it
is measured. The report: per workload and type, both binaries' median throughput
(generated tokens/s; embed: tokens/s), and the median, min and max of the per-round
ratios NEW / OLD (> 1: NEW is faster).

Run it alone on a quiet machine; e.g. the batch-invariance change (issue 29):
    bench/before_after.py /tmp/before/build/release/bin/attend build/release/bin/attend
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMBED_WORKLOAD = os.path.join(ROOT, "..", "shared", "workloads", "embedding_workload.py")
DEFAULT_ENCODER = os.path.join(ROOT, "build", "release", "models", "all-MiniLM-L6-v2", "model")

# name: (attend bench arguments, sentences at full size)
TRANSLATION = {
    "translate-greedy": (["--batch", "32"], 256),
    "translate-beam4": (["--batch", "32", "--beam", "4"], 256),
    "translate-one": (["--batch", "1"], 64),
    "translate-one-beam2": (["--batch", "1", "--beam", "2"], 64),
}
WORKLOADS = list(TRANSLATION) + ["embed"]


def bench_command(attend, workload, ctype, threads, sentences, encoder, embed_input):
    common = ["--compute-type", ctype, "--threads", str(threads), "--json"]
    if workload == "embed":
        lines = sentences or 1024
        return [attend, "bench", "-m", encoder, "--input", embed_input, "--sentences", str(lines), "--batch", "32"] + common
    args, full = TRANSLATION[workload]
    n = min(full, sentences) if sentences else full
    return [attend, "bench", "--sentences", str(n)] + args + common


def throughput(workload, result):
    return result["tokens_per_second"] if workload == "embed" else result["generated_tokens_per_second"]


def report(records):
    """The table of medians and per-round ratios, from the result records."""
    by_key = {}
    for r in records:
        if r.get("kind") != "result":
            continue
        by_key.setdefault((r["workload"], r["type"]), {}).setdefault(r["round"], {})[r["binary"]] = r["value"]
    lines = [f"{'workload':22s} {'type':9s} {'old':>11s} {'new':>11s} {'new/old':>8s} {'min':>7s} {'max':>7s} rounds"]
    order = {w: i for i, w in enumerate(WORKLOADS)}
    for (workload, ctype), rounds in sorted(by_key.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])):
        old = [v["old"] for v in rounds.values() if v.get("old") is not None]
        new = [v["new"] for v in rounds.values() if v.get("new") is not None]
        ratios = [v["new"] / v["old"] for v in rounds.values() if v.get("old") and v.get("new") is not None]
        cell = lambda xs, f: f(xs) if xs else None  # noqa: E731
        fmt = lambda x, spec: format(x, spec) if x is not None else "n/a"  # noqa: E731
        lines.append(f"{workload:22s} {ctype:9s} {fmt(cell(old, statistics.median), '11.1f')} "
                     f"{fmt(cell(new, statistics.median), '11.1f')} {fmt(cell(ratios, statistics.median), '8.3f')} "
                     f"{fmt(cell(ratios, min), '7.3f')} {fmt(cell(ratios, max), '7.3f')} {len(ratios)}")
    return "\n".join(lines)


def read_records(path):
    records = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a line cut short by a crash
    return records


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old", nargs="?")
    p.add_argument("new", nargs="?")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--types", nargs="+", default=["float32", "bfloat16", "int8"])
    p.add_argument("--workloads", nargs="+", default=WORKLOADS, choices=WORKLOADS)
    p.add_argument("--encoder", default=DEFAULT_ENCODER)
    p.add_argument("--sentences", type=int, default=0, help="at most this many sentences per workload (0: full)")
    p.add_argument("--out", default="before_after.jsonl")
    p.add_argument("--report-only", metavar="RESULTS", help="print the report of a results file and stop")
    a = p.parse_args()
    if a.report_only:
        print(report(read_records(a.report_only)))
        return 0
    if not a.old or not a.new:
        p.error("OLD_ATTEND and NEW_ATTEND are required")
    for path in (a.old, a.new):
        if not os.access(path, os.X_OK):
            p.error(f"{path}: not an executable")
    workloads = list(a.workloads)
    embed_input = None
    if "embed" in workloads:
        if not os.path.isfile(os.path.join(a.encoder, "vocab.txt")):
            print(f"embed skipped: {a.encoder} is not a WordPiece encoder directory (--encoder DIR)", file=sys.stderr)
            workloads.remove("embed")
        else:
            embed_input = os.path.join(tempfile.mkdtemp(prefix="before_after."), "sentences.txt")
            n = ["--sentences", str(a.sentences)] if a.sentences else []
            subprocess.run([sys.executable, EMBED_WORKLOAD, a.encoder, embed_input] + n, check=True)

    with open(a.out, "a", encoding="utf-8") as out:
        out.write(json.dumps({"kind": "run", "old": a.old, "new": a.new, "threads": a.threads, "types": a.types,
                              "workloads": workloads, "rounds": a.rounds, "sentences": a.sentences}) + "\n")
        records = []
        for round_ in range(a.rounds):
            for workload in workloads:
                for ctype in a.types:
                    pair = [("old", a.old), ("new", a.new)]
                    for binary, attend in pair if round_ % 2 == 0 else pair[::-1]:
                        cmd = bench_command(attend, workload, ctype, a.threads, a.sentences, a.encoder, embed_input)
                        run = subprocess.run(cmd, capture_output=True, text=True)
                        record = {"kind": "result", "round": round_, "workload": workload, "type": ctype,
                                  "binary": binary, "value": None}
                        if run.returncode == 0:
                            record["value"] = throughput(workload, json.loads(run.stdout))
                        else:
                            record["error"] = run.stderr.strip()[-500:]
                            print(f"{binary} {workload} {ctype}: failed: {record['error']}", file=sys.stderr)
                        out.write(json.dumps(record) + "\n")
                        out.flush()
                        records.append(record)
            print(f"round {round_ + 1}/{a.rounds} done", file=sys.stderr)
    print(report(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
