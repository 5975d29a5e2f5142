#!/usr/bin/env python3
"""The end-to-end fraction of the arithmetic's peak an encoder reaches (issue 34), with the
peak measured beside each run rather than once.

On a shared VM the core's speed drifts by ±15% from minute to minute, so a fraction taken
against a peak measured earlier says as much about the drift as about attend: the same
binary read 53% against a peak measured an hour before and ~60% against one measured
seconds before. Each round here measures the compute type's peak (`machine_limits
--quick`, ~70 ms) right before and right after one `attend bench` run and takes the
fraction against their mean; rounds where the two peaks differ by more than
--max-peak-drift are reported but left out of the medians (the machine changed speed
during the run).

    bench/peak_fraction.py [--attend build/release/bin/attend] [--model DIR]
        [--compute-type int8] [--threads 2] [--rounds 5] [--isa NAME] [--json OUT]

The workload is the standard embedding workload (../shared/workloads/
embedding_workload.py), 1024 sentences in batches of 32 unless --sentences says fewer.
--isa runs attend with ATTEND_ISA=NAME and measures the peak at that ISA.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOAD = os.path.join(ROOT, "..", "shared", "workloads", "embedding_workload.py")


def run(cmd, env=None):
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def measure_limits(machine_limits, isa, path):
    cmd = [machine_limits, "--quick", "--json"] + (["--isa", isa] if isa else [])
    text = run(cmd)
    with open(path, "w") as f:
        f.write(text)
    return json.loads(text)["attend"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attend", default=os.path.join(ROOT, "build", "release", "bin", "attend"))
    p.add_argument("--machine-limits", default=os.path.join(ROOT, "build", "release", "bench", "machine_limits"))
    p.add_argument("--model", default=os.path.join(ROOT, "build", "release", "models", "all-MiniLM-L6-v2", "model"))
    p.add_argument("--compute-type", default="int8", choices=["int8", "float32", "bfloat16"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--sentences", type=int, default=1024)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--isa", default=None, help="ATTEND_ISA for attend, and the ISA the peak is measured at")
    p.add_argument("--max-peak-drift", type=float, default=0.05,
                   help="leave out rounds whose two peaks differ by more than this fraction")
    p.add_argument("--json", default=None, help="write every round here")
    args = p.parse_args()
    for path in (args.attend, args.machine_limits):
        if not os.access(path, os.X_OK):
            sys.exit(f"{path}: not found or not executable (build the release preset first)")
    if not os.path.isdir(args.model):
        sys.exit(f"{args.model}: no such model directory")

    env = dict(os.environ)
    if args.isa:
        env["ATTEND_ISA"] = args.isa
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "embedding.txt")
        run([sys.executable, WORKLOAD, args.model, inputs])
        limits = os.path.join(tmp, "limits.json")
        for r in range(args.rounds):
            before = measure_limits(args.machine_limits, args.isa, limits)
            out = json.loads(run([args.attend, "bench", "-m", args.model, "--input", inputs, "--sentences",
                                  str(args.sentences), "--batch", str(args.batch), "--compute-type",
                                  args.compute_type, "--threads", str(args.threads), "--repeat", "1",
                                  "--machine-limits", limits, "--json"], env))
            after = measure_limits(args.machine_limits, args.isa, limits)
            kind = {"int8": "int8", "float32": "float32", "bfloat16": "bfloat16"}[args.compute_type]
            peak_before, peak_after = before[kind]["gops_per_core"], after[kind]["gops_per_core"]
            peak = (peak_before + peak_after) / 2
            b = out["breakdown"]
            macs, seconds = b["peak"]["multiply_adds"], b["total_seconds"]
            threads = b["peak"]["threads"]
            fraction = 2 * macs / seconds / (threads * peak * 1e9)
            parts = {q["part"]: 2 * q["multiply_adds"] / q["seconds"] / (threads * peak * 1e9)
                     for q in b["parts"] if q["multiply_adds"] and q["seconds"] > 0}
            drift = abs(peak_after - peak_before) / peak
            row = {"round": r + 1, "sentences_per_second": out["sentences_per_second"], "peak_before": peak_before,
                   "peak_after": peak_after, "peak_drift": drift, "fraction": fraction, "parts": parts,
                   "kept": drift <= args.max_peak_drift}
            rounds.append(row)
            print(f"round {r + 1}: {out['sentences_per_second']:.1f} sentences/s, peak {peak_before:.1f} → "
                  f"{peak_after:.1f} GOP/s per core{'' if row['kept'] else ' (drifted: left out)'}: "
                  f"{100 * fraction:.1f}% of it end to end; " +
                  ", ".join(f"{k} {100 * v:.1f}%" for k, v in parts.items()), flush=True)
    kept = [r for r in rounds if r["kept"]]
    if kept:
        med = statistics.median(r["fraction"] for r in kept)
        print(f"{len(kept)} of {len(rounds)} rounds kept: end to end {100 * med:.1f}% of the {args.compute_type} "
              f"peak (median; {100 * min(r['fraction'] for r in kept):.1f}–{100 * max(r['fraction'] for r in kept):.1f}%), "
              f"{statistics.median(r['sentences_per_second'] for r in kept):.1f} sentences/s")
    else:
        print("no round kept: the machine changed speed during every run")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "rounds": rounds}, f, indent=1)


if __name__ == "__main__":
    main()
