#!/usr/bin/env python3
"""attend's tokenizers built from vocabulary files (vocab.txt, sentencepiece.bpe.model;
runtime/text/hf/vocab_files.cpp) against the tokenizer transformers builds from the same
directory, on differential.py's generated corpus: every fixture of
tests/data/tokenizers/vocab-files and, when the build tree has it, the real
all-MiniLM-L6-v2 without its tokenizer.json (vocab.txt + tokenizer_config.json).

Usage: vocab_files_differential.py DRIVER FIXTURE_DIR [MODEL_DIR…] [--sentences N]
Exits 77 (ctest: skipped) when transformers, sentencepiece or protobuf cannot be had.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential  # noqa: E402  (exits 77 without tokenizers)

try:
    import transformers
    import sentencepiece  # noqa: F401
    import google.protobuf  # noqa: F401
except ImportError as e:
    print(f"skipped: {e.name} is not installed in the test venv (run_vocab_files_differential.sh installs it from PyPI)")
    sys.exit(77)


def model_type(directory):
    with open(os.path.join(directory, "config.json")) as f:
        return json.load(f)["model_type"]


def vocab_file(directory):
    for name in ("vocab.txt", "sentencepiece.bpe.model"):
        if os.path.exists(os.path.join(directory, name)):
            return os.path.join(directory, name)
    raise SystemExit(f"{directory}: no vocab.txt or sentencepiece.bpe.model")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver")
    ap.add_argument("fixtures")
    ap.add_argument("models", nargs="*")
    ap.add_argument("--sentences", type=int, default=600)
    args = ap.parse_args()
    directories = sorted(os.path.join(args.fixtures, d) for d in os.listdir(args.fixtures)
                         if os.path.isdir(os.path.join(args.fixtures, d)))
    cases = differential.build_cases(args.sentences, all_alone=False, long_texts=False)  # (differential.py reads long ones)
    print(f"transformers {transformers.__version__}; {len(cases)} cases")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, model in enumerate(args.models):  # real models, their tokenizer.json left out
            copy = os.path.join(tmp, f"model-{k}")
            shutil.copytree(model, copy, ignore=shutil.ignore_patterns("tokenizer.json", "*.safetensors", "*.bin"))
            directories.append(copy)
        for directory in directories:
            start = time.time()
            backend = os.path.join(tmp, "backend.json")
            with open(backend, "w", encoding="utf-8") as f:
                f.write(transformers.AutoTokenizer.from_pretrained(directory).backend_tokenizer.to_str())
            expected = differential.hf_results(backend, cases)
            driver = [args.driver, vocab_file(directory), model_type(directory)]
            got = differential.attend_results(driver[0], driver[1:], cases)
            bad = [i for i, (e, g) in enumerate(zip(expected, got))
                   if g.get("ids") != e["ids"] or g.get("type_ids") != e["type_ids"] or g.get("tokens") != e["tokens"]]
            print(f"{os.path.basename(directory)}: {len(cases) - len(bad)}/{len(cases)} identical ({time.time() - start:.1f} s)")
            for i in bad[:5]:
                c = cases[i]
                print(f"  {c['kind']}: {json.dumps({k: v for k, v in c.items() if k != 'kind'}, ensure_ascii=True)[:300]}")
                print(f"    transformers: {json.dumps(expected[i]['tokens'][:12], ensure_ascii=True)}")
                print(f"    attend:       {json.dumps(got[i].get('tokens', got[i]), ensure_ascii=True)[:400]}")
            failed += bool(bad)
    print(f"{len(directories) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
