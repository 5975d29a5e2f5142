#!/usr/bin/env python3
"""The standard workload on attend and CTranslate2, in one run, each at its best setting.

    bench/vs_ctranslate2.py [--workdir DIR] [--beams 1 4] [--rounds 2]
                            [--attend-types float32 int8 bfloat16] [--ct2-types float32 int8]

Transformer-base (d 512, 8 heads, FFN 2048, ReLU, pre-LN, 6 + 6 layers, one 32000-token
vocabulary shared by source and target, random weights), 256 sources of 10–50 tokens,
batches of 32 sorted by length, exactly 48 generated tokens per sentence (end of
sequence impossible before), greedy and beam 4.

Both engines read the SAME model directory: a CTranslate2 model.bin written by
CTranslate2's own spec API (ctranslate2.specs.TransformerSpec) from seeded random
weights. Lower precisions are made by each engine at load time from those fp32 weights.

Every system runs at each of its thread splits on the machine's cores — attend
`--inter-threads I --intra-threads J`, CTranslate2 `inter_threads=I, intra_threads=J`
(also with OMP_WAIT_POLICY=PASSIVE) — for I × J = cores; runs alternate between the
systems round after round, and each setting's best round is kept. The table gives
tokens/s, peak RSS, the fraction of the machine's compute limit for that precision
(operations per generated token from the model's shapes against the measured peaks of
build/release/bench/machine_limits), and every ratio to CTranslate2 int8 and float32
at their best settings.

CTranslate2 comes from PyPI (pinned below); the script makes a virtual environment for
it under the work directory on first use. attend is build/release/bin/attend.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CT2_VERSION = "4.8.1"
VOCAB, D, HEADS, FFN, LAYERS = 32000, 512, 8, 2048, 6
SENTENCES, BATCH, TGT_LEN = 256, 32, 48


def ensure_ctranslate2(workdir):
    """Re-runs this script under a venv that has CTranslate2, making it if needed."""
    try:
        import ctranslate2  # noqa: F401
        return
    except ImportError:
        pass
    venv = os.path.join(workdir, "venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"making {venv} with ctranslate2=={CT2_VERSION} (PyPI) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", f"ctranslate2=={CT2_VERSION}", "numpy"], check=True)
    os.execv(python, [python] + sys.argv)


def make_model(model_dir, sources_path, seed):
    """The model through CTranslate2's spec API, and the sources as vocabulary tokens."""
    import numpy as np
    from ctranslate2.specs import transformer_spec

    rng = np.random.default_rng(seed)
    spec = transformer_spec.TransformerSpec.from_config((LAYERS, LAYERS), HEADS, pre_norm=True)

    def xavier(rows, cols):
        bound = np.sqrt(6.0 / (rows + cols))
        return rng.uniform(-bound, bound, size=(rows, cols)).astype(np.float32)

    def visit(scope, obj):
        for name, value in list(obj.__dict__.items()):
            if name.startswith("_"):
                continue
            path = f"{scope}/{name}" if scope else name
            if isinstance(value, list):
                for i, item in enumerate(value):
                    visit(f"{path}_{i}", item)
            elif hasattr(value, "__dict__") and not isinstance(value, np.ndarray):
                visit(path, value)
            elif value is None or isinstance(value, np.ndarray) or isinstance(value, str):
                setattr(obj, name, tensor_for(path, obj, name))

    def tensor_for(path, obj, name):
        leaf = path.rsplit("/", 1)[-1]
        if "embeddings" in path and leaf == "weight":
            return xavier(VOCAB, D)
        if path.endswith("projection/weight"):
            return xavier(VOCAB, D)
        if path.endswith("projection/bias"):
            return np.zeros(VOCAB, np.float32)
        if leaf == "gamma":
            return np.ones(D, np.float32)
        if leaf == "beta":
            return np.zeros(D, np.float32)
        if leaf == "weight":
            out, inp = linear_shape(path)
            return xavier(out, inp)
        if leaf == "bias":
            out, _ = linear_shape(path)
            return rng.uniform(-0.05, 0.05, size=out).astype(np.float32)
        return getattr(obj, name)

    def linear_shape(path):
        if "self_attention/linear_0" in path:
            return 3 * D, D
        if "attention/linear_1" in path and "self_attention" not in path:
            return 2 * D, D  # cross-attention K and V
        if "ffn/linear_0" in path:
            return FFN, D
        if "ffn/linear_1" in path:
            return D, FFN
        return D, D

    visit("", spec)
    spec.decoder.embeddings.weight = spec.encoder.embeddings[0].weight  # one vocabulary, one table
    tokens = ["<blank>", "<s>", "</s>", "<unk>"] + [f"w{i}" for i in range(4, VOCAB)]
    spec.register_source_vocabulary(tokens)
    spec.register_target_vocabulary(tokens)
    spec.validate()
    spec.optimize(quantization=None)
    os.makedirs(model_dir, exist_ok=True)
    spec.save(model_dir)
    with open(sources_path, "w") as f:
        for _ in range(SENTENCES):
            f.write(" ".join(f"w{t}" for t in rng.integers(4, VOCAB, size=int(rng.integers(10, 51)))) + "\n")


def ct2_worker(args):
    """One CTranslate2 measurement in this process: load, warm up, time, print JSON."""
    import ctranslate2

    sources = [line.split() for line in open(args.sources)]
    translator = ctranslate2.Translator(args.model, device="cpu", compute_type=args.compute_type,
                                        inter_threads=args.inter, intra_threads=args.intra)
    options = dict(max_batch_size=BATCH, beam_size=args.beam, max_decoding_length=TGT_LEN,
                   min_decoding_length=TGT_LEN, return_scores=False)
    translator.translate_batch(sources[:BATCH], **options)  # warm-up: one batch, like attend bench
    start = time.perf_counter()
    results = translator.translate_batch(sources, **options)
    seconds = time.perf_counter() - start
    generated = sum(len(r.hypotheses[0]) for r in results)
    print(json.dumps({"generated_tokens_per_second": generated / seconds, "seconds": seconds,
                      "generated_tokens": generated,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def run_json(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out[out.index("{"):])


def attend_supports(attend, flag):
    return flag in subprocess.run([attend, "bench", "--help"], capture_output=True, text=True).stdout


def machine_peaks():
    """Per-core peaks in operations/s (2 per multiply-add), read from machine_limits' lines
    ("fp32 FMA peak …: X GFLOP/s", and the int8 VNNI / bf16 dot-product peaks), if built."""
    import re
    program = os.path.join(ROOT, "build", "release", "bench", "machine_limits")
    peaks = {}
    if not os.path.exists(program):
        return peaks
    out = subprocess.run([program], capture_output=True, text=True, timeout=300).stdout
    for line in out.splitlines():
        m = re.search(r"([\d.]+) G(FLOP|OP)/s", line)
        if not m:
            continue
        value = float(m.group(1)) * 1e9
        lower = line.lower()
        if "vnni" in lower or "int8" in lower:
            peaks.setdefault("int8", value)
        elif "bf16" in lower or "bfloat16" in lower:
            peaks.setdefault("bfloat16", value)
        elif "fma" in lower:
            peaks.setdefault("float32", value)
    return peaks


def operations_per_token(beam):
    """2 × multiply-adds of the workload's GEMMs and attention per generated token."""
    mean_src = 30.0
    enc_per_src_token = 2 * LAYERS * (4 * D * D + 2 * D * FFN) + 2 * LAYERS * 2 * mean_src * D
    cross_kv_per_src_token = 2 * LAYERS * 2 * D * D
    mean_tgt = TGT_LEN / 2
    dec_per_row = 2 * LAYERS * (3 * D * D + D * D + 2 * D * D + 2 * D * FFN) + 2 * D * VOCAB \
        + 2 * LAYERS * 2 * (mean_tgt + mean_src) * D
    return (beam * dec_per_row) + (enc_per_src_token + cross_kv_per_src_token) * mean_src / TGT_LEN


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default="/tmp/attend-vs-ctranslate2")
    p.add_argument("--beams", type=int, nargs="+", default=[1, 4])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--attend-types", nargs="+", default=["float32", "int8", "bfloat16"])
    p.add_argument("--ct2-types", nargs="+", default=["float32", "int8"])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ct2-worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--sources", help=argparse.SUPPRESS)
    p.add_argument("--compute-type", help=argparse.SUPPRESS)
    p.add_argument("--inter", type=int, help=argparse.SUPPRESS)
    p.add_argument("--intra", type=int, help=argparse.SUPPRESS)
    p.add_argument("--beam", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    ensure_ctranslate2(a.workdir)
    if a.ct2_worker:
        return ct2_worker(a)

    model = os.path.join(a.workdir, "model")
    sources = os.path.join(a.workdir, "sources.txt")
    if not os.path.exists(os.path.join(model, "model.bin")):
        print(f"writing the model and sources to {a.workdir} ...", file=sys.stderr)
        make_model(model, sources, a.seed)
    attend = os.path.join(ROOT, "build", "release", "bin", "attend")
    if not os.path.exists(attend):
        sys.exit(f"{attend} is missing: cmake --preset release && cmake --build --preset release")

    splits = [(i, a.cores // i) for i in range(1, a.cores + 1) if a.cores % i == 0]
    has_split = attend_supports(attend, "--inter-threads")
    has_type = attend_supports(attend, "--compute-type")
    settings = []  # (system, compute type, beam, inter, intra, wait policy)
    for beam in a.beams:
        for ctype in a.attend_types:
            if ctype != "float32" and not has_type:
                print(f"attend has no --compute-type yet: {ctype} skipped", file=sys.stderr)
                continue
            for inter, intra in (splits if has_split else [(1, a.cores)]):
                settings.append(("attend", ctype, beam, inter, intra, None))
        for ctype in a.ct2_types:
            for inter, intra in splits:
                for policy in (None, "PASSIVE"):
                    settings.append(("CTranslate2", ctype, beam, inter, intra, policy))

    results = {}
    for r in range(a.rounds):
        for s in settings:
            system, ctype, beam, inter, intra, policy = s
            env = dict(os.environ)
            env.pop("OMP_WAIT_POLICY", None)
            if policy:
                env["OMP_WAIT_POLICY"] = policy
            if system == "attend":
                cmd = [attend, "bench", "--model", model, "--input", sources, "--input-format", "tokens",
                       "--batch", str(BATCH), "--tgt-len", str(TGT_LEN), "--beam", str(beam), "--json"]
                cmd += ["--inter-threads", str(inter), "--intra-threads", str(intra)] if has_split else ["--threads", str(intra)]
                if has_type:
                    cmd += ["--compute-type", ctype]
            else:
                cmd = [sys.executable, os.path.abspath(__file__), "--workdir", a.workdir, "--ct2-worker", "--model", model,
                       "--sources", sources, "--compute-type", ctype, "--inter", str(inter), "--intra", str(intra),
                       "--beam", str(beam)]
            m = run_json(cmd, env)
            print(f"round {r + 1}: {system} {ctype} beam {beam} {inter}×{intra}{' ' + policy if policy else ''}: "
                  f"{m['generated_tokens_per_second']:.0f} tok/s", file=sys.stderr)
            best = results.get(s)
            if best is None or m["generated_tokens_per_second"] > best["generated_tokens_per_second"]:
                results[s] = m
    report(results, a, machine_peaks())


def report(results, a, peaks):
    fp32_peak = peaks.get("float32", 117e9)  # per core; the measured figures otherwise
    type_peak = {"float32": fp32_peak, "int8": peaks.get("int8", 4 * fp32_peak),
                 "bfloat16": peaks.get("bfloat16", 2 * fp32_peak)}
    print(f"\nMachine: {a.cores} cores; per-core peaks (operations/s): fp32 {type_peak['float32'] / 1e9:.0f} G, "
          f"bf16 {type_peak['bfloat16'] / 1e9:.0f} G, int8 {type_peak['int8'] / 1e9:.0f} G\n")
    for beam in a.beams:
        best = {}
        for (system, ctype, b, inter, intra, policy), m in results.items():
            if b != beam:
                continue
            key = (system, ctype)
            if key not in best or m["generated_tokens_per_second"] > best[key][1]["generated_tokens_per_second"]:
                best[key] = ((inter, intra, policy), m)
        ct2_int8 = best.get(("CTranslate2", "int8"))
        ct2_fp32 = best.get(("CTranslate2", "float32"))
        name = "greedy" if beam == 1 else f"beam {beam}"
        print(f"### {name}\n")
        print("| system | compute type | best split | tokens/s | peak RSS | % of compute limit | / CT2 int8 | / CT2 float32 |")
        print("|---|---|---|---:|---:|---:|---:|---:|")
        ops = operations_per_token(beam)
        for (system, ctype), ((inter, intra, policy), m) in sorted(best.items()):
            tps = m["generated_tokens_per_second"]
            limit = type_peak.get(ctype, fp32_peak) * a.cores / ops
            ratio = lambda ref: f"{tps / ref[1]['generated_tokens_per_second']:.2f}×" if ref else "—"  # noqa: E731
            split = f"{inter}×{intra}" + (f" {policy}" if policy else "")
            print(f"| {system} | {ctype} | {split} | {tps:.0f} | {m['peak_rss_mib']:.0f} MiB | {100 * tps / limit:.0f}% | "
                  f"{ratio(ct2_int8)} | {ratio(ct2_fp32)} |")
        print()


if __name__ == "__main__":
    main()
