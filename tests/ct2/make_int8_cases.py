#!/usr/bin/env python3
"""CTranslate2's own int8 accuracy on the real transliteration model, the yardstick of
attend's int8 and bfloat16 tests: tests/data/compute-types/aren-int8.jsonl.

    python3 tests/ct2/make_int8_cases.py tests/data/models tests/data/compute-types

Needs ctranslate2==4.8.1 (PyPI; only to regenerate, never at test time). Sources are
drawn from the source vocabulary (seeded): 300 words of 3–12 letters. Per source:
  "source"        tokens
  "fp32"          CT2 float32 greedy hypothesis of the float32 model
  "int8"          CT2 int8 (quantized at load) greedy hypothesis of the float32 model
  "int8_model"    CT2 greedy hypothesis of the int8 model.bin (computed in int8)
  "int8_log_probs" CT2 int8's log-probability of each token of "int8_model" (and </s>),
                  scored by the int8 model.bin
  "int8_model_fp32"           CT2 float32 greedy hypothesis of the int8 model.bin (its
                              weights dequantized: exact arithmetic on the same weights)
  "int8_model_fp32_log_probs" CT2 float32's log-probabilities of "int8_model"

This model.bin is binary version 2: CTranslate2 truncates (does not round) the
activations it quantizes for files older than version 5 (round_before_cast_in_quantization),
and so when it quantizes the float32 model at load; attend always rounds.
The first line is a summary: CT2's int8-vs-fp32 agreement on this set.

CTranslate2's int8 (and, in the last bits, its float32) results depend on the GEMM
library and the kernels it picks for the CPU. The committed file is CTranslate2's AMD path
(oneDNN, its AVX2 kernels), which any x86-64 CPU with AVX2 reproduces bit for bit:

    CT2_USE_MKL=0 CT2_FORCE_CPU_ISA=AVX2 python3 tests/ct2/make_int8_cases.py tests/data/models OUT

(checked on an Intel Xeon with AVX-512 and AMX: identical file). Its other paths on that
Xeon (MKL, its default on Intel, or oneDNN; CT2_FORCE_CPU_ISA=AVX2 or AVX512; MKL_CBWR=
COMPATIBLE) give this file's "int8_model" hypotheses on only 268-277 of the 300
sentences, and int8 log-probs 0.011-0.012 apart on average (0.11-0.16 at most) where the
hypotheses agree: the spread within which "CTranslate2's int8 results" are defined at all
(tests/api/test_compute_types.cpp). MKL held to its AVX2 code (MKL_CBWR=AVX2, what it runs
on an AVX2-only Intel CPU) gives them on 70, 0.14 apart on average (1.1 at most).
"""
import json
import random
import sys
from pathlib import Path

import ctranslate2

assert ctranslate2.__version__ == "4.8.1", ctranslate2.__version__


def main(models: Path, out_dir: Path):
    fp32_dir, int8_dir = models / "ct2-aren-transliteration", models / "ct2-aren-transliteration-int8"
    vocab = [t.strip() for t in open(fp32_dir / "source_vocabulary.txt", encoding="utf-8")]
    letters = [t for t in vocab if t not in ("<blank>", "<s>", "</s>", "<unk>") and len(t) == 1]
    rng = random.Random(11)
    sources = [[rng.choice(letters) for _ in range(rng.randint(3, 12))] for _ in range(300)]

    def greedy(model_dir, compute_type):
        t = ctranslate2.Translator(str(model_dir), device="cpu", compute_type=compute_type, intra_threads=1)
        return [r.hypotheses[0] for r in t.translate_batch(sources, beam_size=1, max_decoding_length=64)], t

    fp32, _ = greedy(fp32_dir, "float32")
    int8, _ = greedy(fp32_dir, "int8")
    int8_model, scorer = greedy(int8_dir, "int8")
    scores = scorer.score_batch(sources, int8_model)
    int8_model_fp32, exact = greedy(int8_dir, "float32")
    exact_scores = exact.score_batch(sources, int8_model)
    agree = sum(a == b for a, b in zip(fp32, int8))
    agree_int8_model = sum(a == b for a, b in zip(int8_model, int8_model_fp32))
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "aren-int8.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps({"summary": {"sentences": len(sources), "ct2_int8_agrees_with_fp32": agree,
                                        "ct2_int8_model_agrees_with_its_fp32": agree_int8_model,
                                        "ctranslate2": ctranslate2.__version__}}) + "\n")
        for s, a, b, c, sc, d, e in zip(sources, fp32, int8, int8_model, scores, int8_model_fp32, exact_scores):
            f.write(json.dumps({"source": s, "fp32": a, "int8": b, "int8_model": c, "int8_log_probs": sc.log_probs,
                                "int8_model_fp32": d, "int8_model_fp32_log_probs": e.log_probs},
                               ensure_ascii=False) + "\n")
    print(f"CT2 int8 agrees with CT2 fp32 on {agree}/{len(sources)} sentences", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
