#!/usr/bin/env python3
"""The standard workload of the runtime issue, on attend and on PyTorch, in one run.

    bench/standard_workload.py [--workdir /tmp/attend-standard-workload] [--beams 1 4]

Transformer-base (vocab 32000 shared, d 512, 8 heads, FFN 2048, ReLU, 6 + 6 layers,
pre-LN, random weights), 256 sources of 10–50 tokens, batches of 32, exactly 48
generated tokens each, 2 threads. attend runs `attend bench --json` (the CLI,
build/release/bin/attend, built if missing); PyTorch runs tools/reference.py's
batched KV-cache decoder. Order per beam: attend, PyTorch, attend (attend's figure is the
mean of its two runs, so drift during the long PyTorch run affects both sides alike). Prints a Markdown table with
generated tokens/s, the ratio, and attend's peak RSS against 1.5 × fp32 weights + arena.
Needs PyTorch (Debian's python3-torch, installed by tools/bootstrap.sh).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out[out.index("{"):])  # attend prints an indented object, reference.py one line


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default="/tmp/attend-standard-workload")
    p.add_argument("--beams", type=int, nargs="+", default=[1, 4])
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()

    attend = os.path.join(ROOT, "build", "release", "bin", "attend")
    if not os.path.exists(attend):
        subprocess.run(["cmake", "--preset", "release"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", "--preset", "release", "--target", "attend_cli"], cwd=ROOT, check=True)
    if not os.path.exists(os.path.join(a.workdir, "model", "model.safetensors")):
        print(f"writing the model and inputs to {a.workdir} ...", file=sys.stderr)
        subprocess.run([PYTHON, os.path.join(ROOT, "bench", "make_base_model.py"), a.workdir], check=True)

    common = ["--input", os.path.join(a.workdir, "sources.ids"), "--batch", "32", "--tgt-len", "48",
              "--threads", str(a.threads)]
    # PyTorch has no warm-up either; attend's is one batch of 32.
    rows = []
    for beam in a.beams:
        attend_cmd = [attend, "bench", "--model", os.path.join(a.workdir, "model"), "--input-format", "ids",
                      "--beam", str(beam), "--json"] + common
        torch_cmd = [PYTHON, os.path.join(ROOT, "tools", "reference.py"), "bench", os.path.join(a.workdir, "tutorial.pt"),
                     "--nhead", "8", "--norm-first", "--beam", str(beam)] + common
        print(f"beam {beam}: attend, PyTorch, attend ...", file=sys.stderr)
        first = run_json(attend_cmd)
        torch = run_json(torch_cmd)
        second = run_json(attend_cmd)
        ours = (first["generated_tokens_per_second"] + second["generated_tokens_per_second"]) / 2
        rows.append((beam, ours, torch["generated_tokens_per_second"], second))

    print("| search | attend tokens/s | PyTorch tokens/s | attend / PyTorch | attend peak RSS | 1.5 × fp32 weights + arena |")
    print("|---|---:|---:|---:|---:|---:|")
    for beam, ours, theirs, m in rows:
        weights_mib = m["parameters"] * 4 / 2**20
        bound = 1.5 * weights_mib + m["arena_mib"]
        name = "greedy" if beam == 1 else f"beam {beam}"
        print(f"| {name} | {ours:.0f} | {theirs:.0f} | **{ours / theirs:.2f}×** | {m['peak_rss_mib']:.0f} MiB | "
              f"{bound:.0f} MiB (weights {weights_mib:.0f}, arena {m['arena_mib']:.0f}) |")


if __name__ == "__main__":
    main()
