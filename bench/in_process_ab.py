#!/usr/bin/env python3
"""Two builds of libattend in one process, the standard embedding workload alternated pass by
pass: what a change does end to end, free of the drift between processes.

    bench/in_process_ab.py OLD_LIBATTEND_SO NEW_LIBATTEND_SO [--model DIR] [--pairs 16]
        [--threads 2] [--sentences 1024] [--compute-type int8]

On the shared VMs these figures come from, the machine's speed moves ±20–30% from minute
to minute, so two `attend bench` processes run one after the other (bench/before_after.py)
need many rounds to see a few percent. Here both libraries are loaded side by side through
the C API (ctypes, RTLD_LOCAL | RTLD_DEEPBIND: each keeps its own kernels, plans and
threads), each pass embeds the same sentences with one then the other (the order swapped
every pair), and the report is the median of the per-pair ratios. It also says whether
the two builds' embeddings are bit-identical (a change meant to keep the bits must).

Build the old library from a worktree, e.g.
    git worktree add /tmp/old HEAD~1 && cmake --preset release -S /tmp/old -B /tmp/old/build/release \\
        && cmake --build /tmp/old/build/release --target attend
    bench/in_process_ab.py /tmp/old/build/release/runtime/api/libattend.so build/release/runtime/api/libattend.so
Copy the two files first when they have the same path (one library cannot be loaded twice).
The sentences are ../shared/workloads/embedding_workload.py's (or --input FILE, one per line).
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOAD = os.path.join(ROOT, "..", "shared", "workloads", "embedding_workload.py")
DEFAULT_MODEL = os.path.join(ROOT, "build", "release", "models", "all-MiniLM-L6-v2", "model")


class EncoderOptions(ctypes.Structure):  # attend_encoder_options (include/attend/attend.h)
    _fields_ = [("isa", ctypes.c_char_p), ("compute_type", ctypes.c_char_p), ("pooling", ctypes.c_char_p),
                ("threads", ctypes.c_int), ("inter_threads", ctypes.c_int), ("intra_threads", ctypes.c_int),
                ("max_batch_size", ctypes.c_int64), ("max_batch_tokens", ctypes.c_int64), ("max_length", ctypes.c_int64)]


class Build:
    """One libattend loaded on its own, with an encoder."""

    def __init__(self, path, model, compute_type, threads):
        self.path = path
        self.lib = ctypes.CDLL(os.path.abspath(path), mode=os.RTLD_LOCAL | getattr(os, "RTLD_DEEPBIND", 0))
        lib = self.lib
        lib.attend_encoder_options_init.argtypes = [ctypes.POINTER(EncoderOptions)]
        lib.attend_encoder_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(EncoderOptions),
                                            ctypes.POINTER(ctypes.c_void_p)]
        lib.attend_encoder_embedding_dim.argtypes = [ctypes.c_void_p]
        lib.attend_encoder_embedding_dim.restype = ctypes.c_size_t
        lib.attend_encoder_embed_text.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                                  ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        lib.attend_last_error.restype = ctypes.c_char_p
        options = EncoderOptions()
        lib.attend_encoder_options_init(ctypes.byref(options))
        options.compute_type = compute_type.encode()
        options.threads = threads
        self.encoder = ctypes.c_void_p()
        if lib.attend_encoder_load(model.encode(), ctypes.byref(options), ctypes.byref(self.encoder)) != 0:
            sys.exit(f"{path}: {lib.attend_last_error().decode()}")
        self.dim = lib.attend_encoder_embedding_dim(self.encoder)

    def embed(self, texts):
        """Seconds for one pass over `texts` (a ctypes array), and the embeddings."""
        out = (ctypes.c_float * (self.dim * len(texts)))()
        start = time.perf_counter()
        if self.lib.attend_encoder_embed_text(self.encoder, texts, len(texts), -1, out) != 0:
            sys.exit(f"{self.path}: {self.lib.attend_last_error().decode()}")
        return time.perf_counter() - start, bytes(out)


def sentences(args):
    if args.input:
        with open(args.input, encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f]
    else:
        text = subprocess.run([sys.executable, WORKLOAD, args.model, "--sentences", str(args.sentences)], check=True,
                              capture_output=True, text=True).stdout
        lines = text.splitlines()
    return lines[:args.sentences]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--pairs", type=int, default=16)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--sentences", type=int, default=1024)
    p.add_argument("--input", help="sentences, one per line (default: the standard embedding workload)")
    p.add_argument("--compute-type", default="int8")
    args = p.parse_args()
    if os.path.realpath(args.old) == os.path.realpath(args.new):
        sys.exit("OLD and NEW are one file: copy one of them first")
    lines = sentences(args)
    texts = (ctypes.c_char_p * len(lines))(*[line.encode() for line in lines])
    builds = [Build(args.old, args.model, args.compute_type, args.threads),
              Build(args.new, args.model, args.compute_type, args.threads)]
    first = [b.embed(texts)[1] for b in builds]  # warm, and the bits
    seconds, ratios = [[], []], []
    for pair in range(args.pairs):
        took = [0.0, 0.0]
        for i in ((0, 1) if pair % 2 == 0 else (1, 0)):
            took[i] = builds[i].embed(texts)[0]
            seconds[i].append(took[i])
        ratios.append(took[0] / took[1])
        print(f"pair {pair + 1}: old {took[0]:.3f} s, new {took[1]:.3f} s, new's speed-up {ratios[-1]:.3f}", flush=True)
    rate = [len(lines) / statistics.median(s) for s in seconds]
    print(f"{len(lines)} sentences, {args.compute_type}, {args.threads} thread(s): old {rate[0]:.1f}, new {rate[1]:.1f} "
          f"sentences/s (median passes); new's speed-up, median of {args.pairs} pairs: {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}; faster in {sum(r > 1 for r in ratios)}); "
          f"embeddings {'bit-identical' if first[0] == first[1] else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
