#!/usr/bin/env python3
"""The standard workload on attend and CTranslate2, in one run, each at its best setting.

    bench/vs_ctranslate2.py [--workdir DIR] [--beams 1 4] [--rounds 2] [--sentences N]
                            [--splits 1x2 2x1 ...] [--isa avx2]
                            [--attend-types float32 int8 bfloat16] [--ct2-types float32 int8]
    bench/vs_ctranslate2.py --report-only [--workdir DIR] [--run ID]

Transformer-base (d 512, 8 heads, FFN 2048, ReLU, pre-LN, 6 + 6 layers, one 32000-token
vocabulary shared by source and target, random weights), N sources of 10–50 tokens (256
by default, 1024 on 8 cores or more, so every worker has batches), batches of 32 sorted
by length, exactly 48 generated tokens per sentence (end of sequence impossible before),
greedy and beam 4.

Both engines read the SAME model directory: a CTranslate2 model.bin written by
CTranslate2's own spec API (ctranslate2.specs.TransformerSpec) from seeded random
weights. Lower precisions are made by each engine at load time from those fp32 weights.

Every system runs at each thread split — attend `--inter-threads I --intra-threads J`,
CTranslate2 `inter_threads=I, intra_threads=J` (also with OMP_WAIT_POLICY=PASSIVE) — for
every I × J = cores unless --splits names some; runs alternate between the systems round
after round, and each setting's best round is kept. The table gives tokens/s, peak RSS,
the fraction of each one's compute limit (operations per generated token from the
model's shapes, against build/release/bench/machine_limits' per-core peak of the step
its GEMMs run: for attend the one of the ISA it ran, for CTranslate2 the fastest the CPU
has), and every ratio to CTranslate2 int8 and float32 at their best settings.

--isa NAME runs attend's kernels at that ISA (`attend bench --isa`), e.g. `--isa avx2`
on an AVX-512 machine measures the AVX2 proxy; with avx2, CTranslate2 is limited to AVX2
too (CT2_FORCE_CPU_ISA, MKL_ENABLE_INSTRUCTIONS, ONEDNN_MAX_CPU_ISA). The report says
which was measured.

Nothing is lost: every result is appended, as it comes, to WORKDIR/results.jsonl (one
JSON object a line: a "run" record with the machine's peaks first, then one "result" per
measurement, tagged with the run's id), and each round's line goes to stderr.
--report-only prints the table of the last run in that file (or of --run ID).

CTranslate2 comes from PyPI (pinned below); the script makes a virtual environment for
it under the work directory on first use. attend is build/release/bin/attend.
"""
import argparse
import datetime
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine_peaks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CT2_VERSION = "4.8.1"
VOCAB, D, HEADS, FFN, LAYERS = 32000, 512, 8, 2048, 6
BATCH, TGT_LEN = 32, 48
RESULTS = "results.jsonl"

# What limits CTranslate2 (its own kernels, MKL's, oneDNN's) to attend's --isa, for a
# proxy run. Only AVX2 is mapped: the AVX-512 sub-levels have no common names across the three.
CT2_ISA_ENV = {"avx2": {"CT2_FORCE_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                        "DNNL_MAX_CPU_ISA": "AVX2"}}


def ensure_ctranslate2(workdir):
    """Re-runs this script under a venv that has CTranslate2, making it if needed. (Found,
    not imported: this process stays small, see measure().)"""
    if importlib.util.find_spec("ctranslate2") is not None:
        return
    venv = os.path.join(workdir, "venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"making {venv} with ctranslate2=={CT2_VERSION} (PyPI) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", f"ctranslate2=={CT2_VERSION}", "numpy"], check=True)
    os.execv(python, [python] + sys.argv)


def draw_model(seed, model_dir=None):
    """The model's weights through CTranslate2's spec API, saved to model_dir if given;
    returns the generator, which then draws the sources (so sentence i is the same
    whatever their number, and the first 256 are those of every earlier run)."""
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
    if model_dir:
        spec.validate()
        spec.optimize(quantization=None)
        os.makedirs(model_dir, exist_ok=True)
        spec.save(model_dir)
    return rng



def workload_paths(workdir, sentences):
    return os.path.join(workdir, "model"), os.path.join(workdir, f"sources-{sentences}.txt")


def prepare_workload(workdir, seed, sentences):
    """The model directory and a file of `sentences` sources, made on first use by a child
    process (see measure()); returns their paths."""
    model, sources = workload_paths(workdir, sentences)
    if not (os.path.exists(os.path.join(model, "model.bin")) and os.path.exists(sources)):
        subprocess.run([sys.executable, os.path.abspath(__file__), "--workdir", workdir, "--make-workload",
                        "--seed", str(seed), "--sentences", str(sentences)], check=True)
    return model, sources


def make_workload(workdir, seed, sentences):
    """The model (unless present) and the sources, as vocabulary tokens."""
    model, sources = workload_paths(workdir, sentences)
    have_model = os.path.exists(os.path.join(model, "model.bin"))
    print(f"writing {'the sources' if have_model else 'the model and sources'} to {workdir} ...", file=sys.stderr)
    rng = draw_model(seed, None if have_model else model)
    with open(sources + ".tmp", "w") as f:
        for _ in range(sentences):
            f.write(" ".join(f"w{t}" for t in rng.integers(4, VOCAB, size=int(rng.integers(10, 51)))) + "\n")
    os.replace(sources + ".tmp", sources)


# ---- the results file: one JSON object a line, appended as results come -------------

def append_record(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def read_records(path):
    """Every well-formed record of the file (a line cut short by a crash is skipped, with a warning)."""
    records = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                print(f"{path}:{number}: not a JSON record, skipped", file=sys.stderr)
    return records


def records_of_run(records, run=None):
    """The run record and the results of run `run` (default: the last run in the file)."""
    runs = [r for r in records if r.get("kind") == "run"]
    if not runs:
        return None, []
    chosen = runs[-1] if run is None else next((r for r in runs if r.get("run") == run), None)
    if chosen is None:
        return None, []
    return chosen, [r for r in records if r.get("kind") == "result" and r.get("run") == chosen["run"]]


# ---- settings ------------------------------------------------------------------------

def parse_split(text):
    """'2x1' (or '2×1') → (2, 1)."""
    parts = text.replace("×", "x").lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"'{text}' is not a split INTERxINTRA such as 2x1")
    return int(parts[0]), int(parts[1])


def default_splits(cores):
    return [(i, cores // i) for i in range(1, cores + 1) if cores % i == 0]


def default_sentences(cores):
    return 1024 if cores >= 8 else 256


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def git_commit():
    try:
        done = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    except OSError:
        return None
    return done.stdout.strip() or None


def attend_supports(attend, flag):
    return flag in subprocess.run([attend, "bench", "--help"], capture_output=True, text=True).stdout


def run_json(cmd, env):
    """The JSON object a measurement prints, or None and the reason it failed."""
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return None, f"exit status {done.returncode}: {done.stderr.strip()[-500:]}"
    try:
        return json.loads(done.stdout[done.stdout.index("{"):]), None
    except ValueError:
        return None, f"no JSON in its output: {done.stdout.strip()[-300:]}"


# ---- measuring -------------------------------------------------------------------------

def measure(a):
    """Every setting, round after round. This process stays small — it imports neither
    numpy nor CTranslate2 and draws the model in a child — because Linux starts a child's
    peak RSS (ru_maxrss, which both engines report) at its parent's size: a parent that
    had drawn the model made every measurement read 444 MiB."""
    model, sources = prepare_workload(a.workdir, a.seed, a.sentences)
    attend = os.path.join(ROOT, "build", "release", "bin", "attend")
    if not os.path.exists(attend):
        sys.exit(f"{attend} is missing: cmake --preset release && cmake --build --preset release")
    has_split = attend_supports(attend, "--inter-threads")
    has_type = attend_supports(attend, "--compute-type")
    has_isa = attend_supports(attend, "--isa")  # else ATTEND_ISA in its environment
    splits = a.splits or default_splits(a.cores)
    ct2_env = CT2_ISA_ENV.get(a.isa, {}) if a.isa else {}
    if a.isa and not ct2_env:
        print("note: CTranslate2 runs at its own best ISA (only --isa avx2 limits it too)", file=sys.stderr)

    machine, why = machine_peaks.measure(a.isa)
    if machine is None:
        print(f"machine_limits: {why}; the report will have no compute limits", file=sys.stderr)
    run_id = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    results_path = os.path.join(a.workdir, RESULTS)
    append_record(results_path, {
        "kind": "run", "run": run_id, "cpu": cpu_model(), "cores": a.cores, "commit": git_commit(),
        "sentences": a.sentences, "beams": a.beams, "rounds": a.rounds, "splits": [f"{i}x{j}" for i, j in splits],
        "attend_isa": (machine or {}).get("attend", {}).get("isa") or a.isa, "isa_forced": a.isa, "ct2_env": ct2_env,
        "machine": machine, "launcher_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "argv": sys.argv[1:]})
    print(f"run {run_id}: results appended to {results_path} as they come", file=sys.stderr)

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

    for r in range(a.rounds):
        for system, ctype, beam, inter, intra, policy in settings:
            env = dict(os.environ)
            env.pop("OMP_WAIT_POLICY", None)
            if policy:
                env["OMP_WAIT_POLICY"] = policy
            if system == "attend":
                cmd = [attend, "bench", "--model", model, "--input", sources, "--input-format", "tokens",
                       "--sentences", str(a.sentences), "--batch", str(BATCH), "--tgt-len", str(TGT_LEN),
                       "--beam", str(beam), "--json"]
                cmd += ["--inter-threads", str(inter), "--intra-threads", str(intra)] if has_split else ["--threads", str(intra)]
                if has_type:
                    cmd += ["--compute-type", ctype]
                if a.isa and has_isa:
                    cmd += ["--isa", a.isa]
                elif a.isa:
                    env["ATTEND_ISA"] = a.isa
            else:
                env.update(ct2_env)
                cmd = [sys.executable, os.path.abspath(__file__), "--workdir", a.workdir, "--ct2-worker", "--model", model,
                       "--sources", sources, "--compute-type", ctype, "--inter", str(inter), "--intra", str(intra),
                       "--beam", str(beam)]
            m, error = run_json(cmd, env)
            where = f"round {r + 1}: {system} {ctype} beam {beam} {inter}×{intra}{' ' + policy if policy else ''}"
            record = {"kind": "result", "run": run_id, "round": r + 1, "system": system, "compute_type": ctype,
                      "beam": beam, "inter": inter, "intra": intra, "policy": policy}
            if m is None:
                print(f"{where}: FAILED ({error})", file=sys.stderr)
                append_record(results_path, dict(record, error=error))
                continue
            append_record(results_path, dict(m, **record))
            print(f"{where}: {m['generated_tokens_per_second']:.0f} tok/s", file=sys.stderr)
    run, results = records_of_run(read_records(results_path), run_id)
    report(run, results)


# ---- the report ------------------------------------------------------------------------

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



def operations_per_token(beam):
    """2 × multiply-adds of the workload's GEMMs and attention per generated token."""
    mean_src = 30.0
    enc_per_src_token = 2 * LAYERS * (4 * D * D + 2 * D * FFN) + 2 * LAYERS * 2 * mean_src * D
    cross_kv_per_src_token = 2 * LAYERS * 2 * D * D
    mean_tgt = TGT_LEN / 2
    dec_per_row = 2 * LAYERS * (3 * D * D + D * D + 2 * D * D + 2 * D * FFN) + 2 * D * VOCAB \
        + 2 * LAYERS * 2 * (mean_tgt + mean_src) * D
    return (beam * dec_per_row) + (enc_per_src_token + cross_kv_per_src_token) * mean_src / TGT_LEN



def system_name(run, system):
    if system == "attend" and run.get("isa_forced"):
        return f"attend ({run['isa_forced']})"
    if system == "CTranslate2" and run.get("ct2_env"):
        return f"CTranslate2 ({run['ct2_env'].get('CT2_FORCE_CPU_ISA', 'limited')})"
    return system


def compute_limit(run, system, ctype):
    """Per-core operations/s bounding this system's GEMMs of ctype, and the step's key."""
    machine = run.get("machine")
    if system == "attend":
        return machine_peaks.attend_peak(machine, ctype)
    cap = "avx2" if run.get("ct2_env", {}).get("CT2_FORCE_CPU_ISA") == "AVX2" else None
    return machine_peaks.fastest_peak(machine, ctype, cap)


def describe_run(run, out):
    machine = run.get("machine") or {}
    isa = (machine.get("attend") or {}).get("isa") or run.get("attend_isa") or "?"
    forced = run.get("isa_forced")
    best = next((r["isa"] for r in sorted(machine.get("rates", []), key=lambda r: -machine_peaks.ISA_ORDER.index(r["isa"]))), None)
    print(f"Run {run.get('run')}: {run.get('cpu', '?')}, {run.get('cores')} cores, commit {run.get('commit') or '?'}, "
          f"{run.get('sentences')} sentences, {run.get('rounds')} rounds, splits {' '.join(run.get('splits', []))}", file=out)
    if forced:
        proxy = f" — a proxy on a CPU whose best is {best}" if best and best != forced else ""
        print(f"attend's kernels: {isa} (forced{proxy})", file=out)
    else:
        print(f"attend's kernels: {isa} (the best this CPU runs)", file=out)
    env = run.get("ct2_env") or {}
    print("CTranslate2: " + (" ".join(f"{k}={v}" for k, v in env.items()) if env else "its own best ISA"), file=out)
    if not machine:
        print("Compute limits: not measured (machine_limits missing or failed)", file=out)
        return
    parts = []
    for system in ("attend", "CTranslate2"):
        for ctype in ("float32", "int8", "bfloat16"):
            peak, step = compute_limit(run, system, ctype)
            parts.append(f"{system} {ctype} {peak / 1e9:.0f} G ({step})" if peak else f"{system} {ctype} n/a")
    print("Per-core peaks (operations/s): " + ", ".join(parts), file=out)


def report(run, results, out=sys.stdout):
    """The tables of one run: best split and round of each system and compute type."""
    if run is None:
        print("no run recorded", file=out)
        return
    print(file=out)
    describe_run(run, out)
    cores = run.get("cores") or 1
    failed = [r for r in results if "error" in r]
    if failed:
        print(f"{len(failed)} measurement(s) failed; see their 'error' in the results file", file=out)
    print(file=out)
    for beam in run.get("beams", sorted({r["beam"] for r in results})):
        best = {}
        for r in results:
            if r["beam"] != beam or not r.get("generated_tokens_per_second"):
                continue
            key = (r["system"], r["compute_type"])
            if key not in best or r["generated_tokens_per_second"] > best[key]["generated_tokens_per_second"]:
                best[key] = r
        ct2_int8 = best.get(("CTranslate2", "int8"))
        ct2_fp32 = best.get(("CTranslate2", "float32"))
        name = "greedy" if beam == 1 else f"beam {beam}"
        print(f"### {name}\n", file=out)
        print("| system | compute type | best split | tokens/s | peak RSS | % of its compute limit | / CT2 int8 | / CT2 float32 |",
              file=out)
        print("|---|---|---|---:|---:|---:|---:|---:|", file=out)
        ops = operations_per_token(beam)
        for (system, ctype), m in sorted(best.items()):
            tps = m["generated_tokens_per_second"]
            peak, _ = compute_limit(run, system, ctype)
            share = f"{100 * tps * ops / (peak * cores):.0f}%" if peak else "n/a"

            def ratio(ref):
                return f"{tps / ref['generated_tokens_per_second']:.2f}×" if ref else "—"

            split = f"{m['inter']}×{m['intra']}" + (f" {m['policy']}" if m.get("policy") else "")
            rss = f"{m['peak_rss_mib']:.0f} MiB" if m.get("peak_rss_mib") else "?"
            print(f"| {system_name(run, system)} | {ctype} | {split} | {tps:.0f} | {rss} | {share} | "
                  f"{ratio(ct2_int8)} | {ratio(ct2_fp32)} |", file=out)
        print(file=out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default="/tmp/attend-vs-ctranslate2")
    p.add_argument("--beams", type=int, nargs="+", default=[1, 4])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--sentences", type=int, help="sources to translate (default: 256, 1024 on 8 cores or more)")
    p.add_argument("--splits", type=parse_split, nargs="+", metavar="IxJ",
                   help="thread splits, inter × intra (default: every I×J = cores)")
    p.add_argument("--isa", choices=machine_peaks.ISA_ORDER, help="attend's kernels (attend --isa); avx2 limits CTranslate2 too")
    p.add_argument("--attend-types", nargs="+", default=["float32", "int8", "bfloat16"])
    p.add_argument("--ct2-types", nargs="+", default=["float32", "int8"])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--report-only", action="store_true", help="print the table of saved results (WORKDIR/results.jsonl)")
    p.add_argument("--run", help="with --report-only: the run to report (default: the last)")
    p.add_argument("--ct2-worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--make-workload", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--sources", help=argparse.SUPPRESS)
    p.add_argument("--compute-type", help=argparse.SUPPRESS)
    p.add_argument("--inter", type=int, help=argparse.SUPPRESS)
    p.add_argument("--intra", type=int, help=argparse.SUPPRESS)
    p.add_argument("--beam", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.report_only:
        path = os.path.join(a.workdir, RESULTS)
        if not os.path.exists(path):
            sys.exit(f"{path}: no results saved there")
        run, results = records_of_run(read_records(path), a.run)
        if run is None:
            sys.exit(f"{path}: no run {a.run}" if a.run else f"{path}: no run recorded")
        return report(run, results)
    if a.sentences is None:
        a.sentences = default_sentences(a.cores)
    if a.isa is None and os.environ.get("ATTEND_ISA"):
        a.isa = os.environ["ATTEND_ISA"]  # the same as --isa: attend, machine_limits and CTranslate2 follow it
        if a.isa not in machine_peaks.ISA_ORDER:
            p.error(f"ATTEND_ISA={a.isa}: expected one of {', '.join(machine_peaks.ISA_ORDER)}")
    for inter, intra in a.splits or []:
        if inter * intra > a.cores:
            print(f"note: split {inter}×{intra} uses more threads than --cores {a.cores}", file=sys.stderr)
    os.makedirs(a.workdir, exist_ok=True)
    ensure_ctranslate2(a.workdir)
    if a.ct2_worker:
        return ct2_worker(a)
    if a.make_workload:
        return make_workload(a.workdir, a.seed, a.sentences)
    measure(a)


if __name__ == "__main__":
    main()
