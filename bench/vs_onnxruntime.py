#!/usr/bin/env python3
"""The standard embedding workload on attend, ONNX Runtime, OpenVINO and sentence-transformers.

    bench/vs_onnxruntime.py [--model DIR] [--workdir DIR] [--threads 2 4 16]
                            [--systems attend-float32 attend-int8 attend-bfloat16 ort-fp32 ort-int8
                                       ov-fp32 ov-default ov-int8 st-fp32]
                            [--sentences 1024] [--rounds 1] [--calibration-sentences 300]

The workload (issue 19): all-MiniLM-L6-v2 (default: the copy tests/encoder/run_minilm.sh
fetched from PyPI into build/release/models), the sentences of
../shared/workloads/embedding_workload.py (1024 by default: 5–100 whole words of its
vocab.txt, random.Random(7)), batches of 32 sorted by length, max_seq_length 256.
Each system runs in a fresh process (its own peak RSS), at every thread split of each
--threads count (attend: inter × intra; the others: their intra-op threads), round
after round; each setting's best round is kept and each system's best setting is
reported. Timing covers tokenization and the model, not loading (reported apart).

- attend: attend.SentenceEncoder (float32, int8, bfloat16).
- ONNX Runtime: the model exported with torch.onnx, BERT-optimised by
  onnxruntime.transformers.optimizer (SkipLayerNorm, BiasGelu, fused attention), and
  its dynamic int8 (onnxruntime.quantization.quantize_dynamic); padded batches as
  fastembed runs them; mean pooling and normalisation in NumPy.
- OpenVINO (issue 34: the anchor every embedding figure is compared with): the plain
  fp32 ONNX export read by openvino.Core, run on its CPU plugin with padded batches as
  ONNX Runtime is. ov-fp32 pins INFERENCE_PRECISION_HINT to f32; ov-default leaves
  OpenVINO its own choice (bf16 where the CPU has AVX512_BF16 or AMX, else f32: the
  precision it chose is printed); ov-int8 is NNCF's static quantisation
  (nncf.quantize, ModelType.TRANSFORMER — what sentence-transformers' "openvino-qint8"
  export runs) calibrated on --calibration-sentences sentences of the workload's
  generator under another seed (CALIBRATION_SEED), so no workload sentence calibrates it.
- sentence-transformers (fp32, torch), where torch installs.

Printed: sentences/s, tokens/s, peak RSS, min and mean cosine to the fp32 reference
(sentence-transformers', else attend float32's), and the fraction of the machine's
FMA (fp32) / VNNI (int8) / BF16 peak (bench/machine_peaks.py, from
build/release/bench/machine_limits). Each result is appended to WORKDIR/results.jsonl
the moment it is measured, so a long run never loses its measurements.

Packages come from PyPI into WORKDIR/venv on first use (onnxruntime, onnx, torch,
transformers, sentence-transformers, numpy, openvino, nncf; those a venv made by an older
version lacks are added to it) and the attend package from this tree
(pip install .). Run it in a quiet window: `flock -x /tmp/attend-cpu.lock bench/vs_onnxruntime.py`.
"""
import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import machine_peaks  # noqa: E402
WORKLOAD = os.path.join(ROOT, "..", "shared", "workloads", "embedding_workload.py")
BATCH, MAX_LENGTH = 32, 256
PACKAGES = ["numpy", "onnxruntime", "onnx", "onnxscript", "torch", "transformers", "sentence-transformers", "openvino",
            "nncf"]
ADDED_PACKAGES = {"openvino": "openvino", "nncf": "nncf"}  # module: PyPI name, added to an existing venv
REFRESHED = "ATTEND_VS_ONNXRUNTIME_ATTEND_REFRESHED"  # set once attend is checked against the tree
CALIBRATION_SEED = 1234  # the workload's sentences are random.Random(7)'s


def ensure_venv(workdir):
    """Re-runs this script under a venv with the packages (made if needed)."""
    venv = os.path.join(workdir, "venv")
    python = os.path.join(venv, "bin", "python")
    try:
        import attend  # noqa: F401
        import numpy  # noqa: F401
        import onnxruntime  # noqa: F401
        add_missing_packages(venv)
        if refresh_attend(venv):
            os.execv(python, [python] + sys.argv)  # the new attend, in a fresh interpreter
        return
    except ImportError:
        pass
    # sys.prefix, not the interpreter: a venv's python is a link to the system one, so by
    # realpath the system python3 that starts this script looked like the venv's, and a
    # second run stopped here instead of re-running itself under the venv.
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        raise SystemExit("vs_onnxruntime.py: the venv lacks attend, numpy or onnxruntime")
    if not os.path.exists(python):
        print(f"making {venv} (PyPI: {', '.join(PACKAGES)}; attend from {ROOT}) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        for p in PACKAGES:  # torch and sentence-transformers may not install: their systems are skipped
            subprocess.run([python, "-m", "pip", "install", "-q", p], check=False)
        subprocess.run([python, "-m", "pip", "install", "-q", ROOT], check=True)
        write_source_stamp(venv)
    os.execv(python, [python] + sys.argv)


def source_stamp():
    """This tree's commit and uncommitted changes, or None without git."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        diff = subprocess.run(["git", "-C", ROOT, "diff", "HEAD"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return f"{head.stdout.strip()} {hashlib.sha256(diff.stdout).hexdigest()}"


def write_source_stamp(venv):
    stamp = source_stamp()
    if stamp:
        with open(os.path.join(venv, "attend-source"), "w") as f:
            f.write(stamp + "\n")


def refresh_attend(venv):
    """Reinstalls attend into this script's venv when the tree changed since it was installed
    there (a venv made once kept measuring the attend of that day). True if it did."""
    if os.path.realpath(sys.prefix) != os.path.realpath(venv):
        return False  # not our venv: the attend it has is the caller's choice
    if os.environ.get(REFRESHED):
        return False  # this run (or the run that started this measurement) has refreshed it
    os.environ[REFRESHED] = "1"  # inherited by the re-exec and every measurement's process
    stamp, path = source_stamp(), os.path.join(venv, "attend-source")
    installed = open(path).read().strip() if os.path.exists(path) else None
    if stamp is not None and stamp == installed:
        return False
    print(f"installing this tree's attend into {venv} ({stamp or 'no git: every run'}) ...", file=sys.stderr)
    subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "--no-deps",
                    "--force-reinstall", ROOT], check=True)
    write_source_stamp(venv)
    return True


def add_missing_packages(venv):
    """Installs into this script's venv the packages a venv made before them lacks (they
    may not install: their systems are then skipped)."""
    import importlib.util
    if os.path.realpath(sys.prefix) != os.path.realpath(venv):
        return  # not running in our venv (its python is a link to the base one): leave it alone
    python = os.path.join(venv, "bin", "python")
    missing = [pypi for module, pypi in ADDED_PACKAGES.items() if importlib.util.find_spec(module) is None]
    if missing:
        print(f"adding {', '.join(missing)} to {os.path.dirname(os.path.dirname(python))} ...", file=sys.stderr)
        subprocess.run([python, "-m", "pip", "install", "-q"] + missing, check=False)


def peak_per_core(machine, system, precision=None):
    """Operations/s of one core for `system`'s arithmetic: the step attend's kernels run
    for attend, the fastest step of that arithmetic the CPU has for the others (they pick
    their own kernels); None where machine_limits did not measure it."""
    kind = "int8" if "int8" in system else "bfloat16" if "bfloat16" in system or precision == "bf16" else "float32"
    if system.startswith("attend"):
        return machine_peaks.attend_peak(machine, kind)[0]
    return machine_peaks.fastest_peak(machine, kind)[0]


def sentences_of(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def ids_and_batches(model_dir, sentences):
    """The HF tokenizer's ids (truncated to MAX_LENGTH) and batches of BATCH sorted by length."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()  # (the file pads to 128: batches pad to their longest here, where a system pads at all)
    tok.enable_truncation(MAX_LENGTH)
    ids = [e.ids for e in tok.encode_batch(sentences)]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    return tok, ids, [order[i:i + BATCH] for i in range(0, len(order), BATCH)]


def worker(a):
    """One measurement in this process: load, warm up, time, save embeddings, print JSON."""
    import numpy as np

    sentences = sentences_of(a.sentences_file)
    system, kind = a.system.split("-", 1)
    extra = {}  # what the system chose (OpenVINO: its precision)
    load_start = time.perf_counter()
    if system == "attend":
        import attend
        inter, intra = (int(x) for x in a.split.split("x"))
        model = attend.SentenceEncoder(a.model, compute_type=kind, inter_threads=inter, intra_threads=intra,
                                       max_batch_tokens=1 << 20)
        try:
            model.encode(sentences[:2])
            run = lambda: model.encode(sentences, batch_size=BATCH)  # noqa: E731
        except (RuntimeError, ValueError):  # no Hugging Face tokenizer in this build: the HF one's ids
            engine = model._engine

            def run():
                return engine.embed_ids(ids_and_batches(a.model, sentences)[1])
    elif system == "ort":
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = a.threads, 1
        session = ort.InferenceSession(a.onnx, options, providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        run = lambda: run_padded(a.model, sentences, names, lambda feed: session.run(None, feed)[0])  # noqa: E731
    elif system == "ov":
        import openvino as ov
        config = {"INFERENCE_NUM_THREADS": a.threads, "PERFORMANCE_HINT": "LATENCY"}
        if kind == "fp32":
            config["INFERENCE_PRECISION_HINT"] = "f32"
        compiled = ov.Core().compile_model(a.onnx, "CPU", config)
        extra["precision"] = precision_name(compiled.get_property("INFERENCE_PRECISION_HINT"))
        request = compiled.create_infer_request()
        names = {i.get_any_name() for i in compiled.inputs}
        output = compiled.output(0)
        run = lambda: run_padded(a.model, sentences, names, lambda feed: request.infer(feed)[output])  # noqa: E731
    else:
        import torch
        from sentence_transformers import SentenceTransformer
        torch.set_num_threads(a.threads)
        model = SentenceTransformer(a.model, device="cpu")
        run = lambda: model.encode(sentences, batch_size=BATCH, convert_to_numpy=True)  # noqa: E731
    load = time.perf_counter() - load_start
    run()  # warm-up pass
    start = time.perf_counter()
    embeddings = np.asarray(run(), dtype=np.float32)
    seconds = time.perf_counter() - start
    np.save(a.embeddings, embeddings)
    print(json.dumps(dict(extra, seconds=seconds, load_seconds=load, peak_rss_mib=peak_rss_mib())))


def run_padded(model_dir, sentences, names, infer):
    """Tokenizes, runs `infer` on padded batches ({input name: int64 [batch, longest]} →
    last hidden state) and mean-pools and normalises in NumPy, as fastembed does."""
    import numpy as np
    tok, ids, batches = ids_and_batches(model_dir, sentences)
    out = None
    for batch in batches:
        longest = max(len(ids[i]) for i in batch)
        x = np.zeros((len(batch), longest), np.int64)
        mask = np.zeros_like(x)
        for r, i in enumerate(batch):
            x[r, :len(ids[i])], mask[r, :len(ids[i])] = ids[i], 1
        feed = {"input_ids": x, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(x)
        h = np.asarray(infer(feed), dtype=np.float32)
        if out is None:
            out = np.zeros((len(ids), h.shape[-1]), np.float32)
        pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        out[batch] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return out


def precision_name(hint):
    """OpenVINO's inference precision ("f32", "bf16", "f16") from the property's value."""
    name = getattr(hint, "get_type_name", lambda: str(hint))()
    return {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}.get(name, name)


def peak_rss_mib():
    """This process's peak resident memory (VmHWM: getrusage's maxrss would include the
    parent's from before exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def export_onnx(model_dir, workdir):
    """fp32 (BERT-optimised) and dynamic int8 ONNX files, made once."""
    fp32, opt, int8 = (os.path.join(workdir, n) for n in ("model.onnx", "model.opt.onnx", "model.int8.onnx"))
    if not os.path.exists(int8):
        import torch
        from transformers import AutoModel
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers import optimizer
        model = AutoModel.from_pretrained(model_dir).eval()

        class Forward(torch.nn.Module):  # the three inputs by name, whatever forward's order
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.m(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

        x = torch.ones(1, 8, dtype=torch.long)
        axes = {0: "batch", 1: "sequence"}
        torch.onnx.export(Forward(model), (x, x, torch.zeros_like(x)), fp32,
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                                        "last_hidden_state": axes}, opset_version=17, dynamo=False)
        c = model.config
        optimizer.optimize_model(fp32, model_type="bert", num_heads=c.num_attention_heads,
                                 hidden_size=c.hidden_size).save_model_to_file(opt)
        import onnx
        # The optimiser's fused ops have no type inference: say their outputs are float.
        quantize_dynamic(opt, int8, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return {"ort-fp32": opt, "ort-int8": int8, "plain-fp32": fp32}


def export_openvino(model_dir, workdir, plain_onnx, calibration_sentences):
    """The OpenVINO models: the plain fp32 ONNX export as is (OpenVINO reads it; the ONNX
    Runtime-optimised one holds com.microsoft ops it does not), and its NNCF static int8
    quantisation, calibrated on sentences the workload never holds (made once per count)."""
    int8 = os.path.join(workdir, f"model.ov-int8-c{calibration_sentences}.xml")
    if not os.path.exists(int8):
        import nncf
        import numpy as np
        import openvino as ov
        path = os.path.join(workdir, f"calibration-{calibration_sentences}.txt")
        subprocess.run([sys.executable, WORKLOAD, model_dir, path, "--sentences", str(calibration_sentences),
                        "--seed", str(CALIBRATION_SEED)], check=True)
        _, ids, _ = ids_and_batches(model_dir, sentences_of(path))
        model = ov.Core().read_model(plain_onnx)
        names = {i.get_any_name() for i in model.inputs}

        def feed(sentence_ids):  # one unpadded sentence per calibration item
            x = np.asarray([sentence_ids], np.int64)
            f = {"input_ids": x, "attention_mask": np.ones_like(x)}
            if "token_type_ids" in names:
                f["token_type_ids"] = np.zeros_like(x)
            return f

        quantized = nncf.quantize(model, nncf.Dataset(ids, feed), model_type=nncf.ModelType.TRANSFORMER,
                                  subset_size=len(ids))
        ov.save_model(quantized, int8, compress_to_fp16=False)
    return {"ov-fp32": plain_onnx, "ov-default": plain_onnx, "ov-int8": int8}


def splits(threads, system):
    if not system.startswith("attend"):
        return [f"1x{threads}"]
    return [f"{i}x{threads // i}" for i in range(1, threads + 1) if threads % i == 0]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default=os.path.join(ROOT, "build/release/models/all-MiniLM-L6-v2/model"))
    p.add_argument("--workdir", default=os.path.join(ROOT, "build/vs_onnxruntime"))
    p.add_argument("--threads", type=int, nargs="+", default=[os.cpu_count() or 1])
    p.add_argument("--systems", nargs="+", default=["attend-float32", "attend-int8", "attend-bfloat16", "ort-fp32",
                                                    "ort-int8", "ov-fp32", "ov-default", "ov-int8", "st-fp32"])
    p.add_argument("--sentences", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--calibration-sentences", type=int, default=300,
                   help="ov-int8's NNCF calibration set: sentences of another seed than the workload's")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for hidden in ("system", "split", "onnx", "sentences-file", "embeddings"):
        p.add_argument(f"--{hidden}", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        a.threads = int(a.split.split("x")[0]) * int(a.split.split("x")[1])
        return worker(a)
    os.makedirs(a.workdir, exist_ok=True)
    ensure_venv(a.workdir)
    import numpy as np

    sentences_file = os.path.join(a.workdir, "sentences.txt")
    subprocess.run([sys.executable, WORKLOAD, a.model, sentences_file, "--sentences", str(a.sentences)], check=True)
    sentences = sentences_of(sentences_file)
    _, ids, _ = ids_and_batches(a.model, sentences)
    tokens = sum(len(i) for i in ids)
    onnx = {}
    if any(s.startswith(("ort", "ov")) for s in a.systems):
        try:
            onnx = export_onnx(a.model, a.workdir)
        except Exception as e:  # torch or the optimizer missing: ONNX Runtime and OpenVINO are skipped
            print(f"ONNX export failed ({e}): ONNX Runtime and OpenVINO skipped", file=sys.stderr)
    if "plain-fp32" in onnx and any(s.startswith("ov") for s in a.systems):
        try:
            onnx.update(export_openvino(a.model, a.workdir, onnx["plain-fp32"], a.calibration_sentences))
        except Exception as e:  # openvino or nncf missing: OpenVINO is skipped
            print(f"OpenVINO model failed ({e}): OpenVINO skipped", file=sys.stderr)
    machine, why = machine_peaks.measure()
    if machine is None:
        print(f"machine_limits not run ({why}): no fraction of peak", file=sys.stderr)
    results_path = os.path.join(a.workdir, "results.jsonl")
    best = {}
    for _ in range(a.rounds):
        for system in a.systems:
            if system.startswith(("ort", "ov")) and system not in onnx:
                continue
            for threads in a.threads:
                for split in splits(threads, system):
                    emb = os.path.join(a.workdir, f"{system}-{split}.npy")
                    cmd = [sys.executable, __file__, "--worker", "--system", system, "--split", split, "--model", a.model,
                           "--sentences-file", sentences_file, "--embeddings", emb, "--onnx", onnx.get(system, "")]
                    run = subprocess.run(cmd, capture_output=True, text=True)
                    if run.returncode != 0:
                        print(f"{system} {split}: failed: {run.stderr.strip()[-300:]}", file=sys.stderr)
                        continue
                    r = json.loads(run.stdout[run.stdout.index("{"):])
                    r.update(system=system, threads=threads, split=split, sentences=len(sentences), tokens=tokens,
                             sentences_per_second=len(sentences) / r["seconds"], tokens_per_second=tokens / r["seconds"])
                    with open(results_path, "a") as f:  # written as it comes
                        f.write(json.dumps(r) + "\n")
                    chose = f"  ({r['precision']})" if "precision" in r else ""
                    print(f"{system:16s} {split:>5s}  {r['sentences_per_second']:8.1f} sentences/s{chose}", file=sys.stderr)
                    key = (system, threads)
                    if key not in best or r["sentences_per_second"] > best[key]["sentences_per_second"]:
                        best[key] = dict(r, embeddings=emb)
    reference = next((best[k]["embeddings"] for k in best if k[0] == "st-fp32"), None) or \
        next((best[k]["embeddings"] for k in best if k[0] == "attend-float32"), None)
    ref = np.load(reference) if reference else None
    # FLOPs per token: the layers' GEMMs (2 per multiply-add) and attention over the mean length.
    layers, d, ffn = 6, 384, 1536
    mean_len = tokens / len(sentences)
    flops_per_token = 2 * layers * (4 * d * d + 2 * d * ffn) + 2 * layers * 2 * mean_len * d
    print(f"\nall-MiniLM-L6-v2, {len(sentences)} sentences, {tokens} tokens, batches of {BATCH}; reference "
          f"{os.path.basename(reference) if reference else 'none'}")
    print(f"{'system':16s} {'threads':>7s} {'split':>5s} {'sent/s':>8s} {'tok/s':>8s} {'RSS MiB':>8s} {'min cos':>8s} "
          f"{'mean cos':>8s} {'peak%':>6s}  precision")
    for (system, threads), r in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        e = np.load(r["embeddings"])
        cosines = np.sum(e * ref, 1) / (np.linalg.norm(e, axis=1) * np.linalg.norm(ref, axis=1)) if ref is not None \
            else np.full(1, np.nan)
        peak = peak_per_core(machine, system, r.get("precision"))
        fraction = 100 * r["tokens_per_second"] * flops_per_token / (peak * threads) if peak else float("nan")
        print(f"{system:16s} {threads:7d} {r['split']:>5s} {r['sentences_per_second']:8.1f} {r['tokens_per_second']:8.0f} "
              f"{r['peak_rss_mib']:8.1f} {float(cosines.min()):8.5f} {float(cosines.mean()):8.5f} {fraction:6.1f}  {r.get('precision', '')}")
    print(f"\nresults: {results_path}")


if __name__ == "__main__":
    main()
