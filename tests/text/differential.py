#!/usr/bin/env python3
"""attend's Hugging Face tokenizers against the live `tokenizers` library, on a large
generated corpus (corpus.py): every tokenizer.json fixture of tests/data/tokenizers and
the real all-MiniLM-L6-v2 (if given), each on the same cases — every assigned code point
in runs and alone, generated sentences of every script, pairs, truncation to several
lengths (pairs: longest_first), add_special_tokens off, invalid UTF-8. Identical ids,
type ids and tokens required; prints a line per tokenizer and the first differences.

Usage: differential.py DRIVER FIXTURE_DIR [TOKENIZER_JSON ...] [--sentences N] [--quick]
Exits 77 (ctest: skipped) when `tokenizers` cannot be imported.
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

try:
    from tokenizers import Tokenizer
    import tokenizers
except ImportError:
    print("skipped: the Python package `tokenizers` is not installed (tests/python/setup_venv.sh installs it from PyPI)")
    sys.exit(77)


def build_cases(n_sentences, all_alone=True, long_texts=True):
    lines = corpus.sentences(2024, n_sentences)
    cases = [{"a": s, "kind": "code points"} for s in corpus.code_point_lines(all_alone=all_alone)]
    cases += [{"a": s, "kind": "sentences"} for s in lines]
    half = len(lines) // 2
    cases += [{"a": lines[i], "b": lines[half + i], "kind": "pairs"} for i in range(0, half, 4)]
    lengths = [5, 8, 13, 32, 128]
    cases += [{"a": lines[i], "max_length": lengths[i % 5], "kind": "truncated"} for i in range(0, half, 3)]
    cases += [{"a": lines[i], "b": lines[i + 1], "max_length": lengths[i % 5], "kind": "truncated pairs"}
              for i in range(half, len(lines) - 1, 3)]
    cases += [{"a": lines[i], "add_special_tokens": False, "kind": "no special tokens"} for i in range(0, half, 10)]
    cases += [{"a": lines[i], "b": lines[i + 1], "add_special_tokens": False, "kind": "no special tokens"}
              for i in range(1, half, 20)]
    cases += [{"a_base64": base64.b64encode(b).decode(), "kind": "invalid UTF-8"} for b in corpus.invalid_utf8(7, 300)]
    # Long texts truncated: attend reads them piece by piece (runtime/text/text_pieces.hpp)
    # and must keep exactly the tokens a whole reading keeps — single texts, pairs whose
    # longer side keeps the extra token of an odd limit, runs of spaces and lines at the
    # cuts, an invalid byte past what is kept.
    # (tokenizers makes every overflowing part of a truncated encoding, pairs of parts for a
    # pair: the texts stay at tens of kilobytes and the pairs' limits large.)
    if not long_texts:
        return cases
    long_texts = []
    for k in range(4):
        chunk = " ".join(lines[(k * 37 + j) % len(lines)] for j in range(20 + 10 * k))
        long_texts.append((chunk + "  \n ") * (2 + k))
    for k, t in enumerate(long_texts):
        for limit in (64, 513):
            cases.append({"a": t, "max_length": limit, "kind": "long truncated"})
        cases.append({"a": t, "b": long_texts[(k + 1) % len(long_texts)][: 6000 + 1000 * k], "max_length": 2 * k + 251,
                      "kind": "long truncated pairs"})
        cases.append({"a": lines[k], "b": t, "max_length": 100 + k, "kind": "long truncated pairs"})
    cases.append({"a_base64": base64.b64encode(long_texts[0].encode() + b" \xff tail").decode(), "max_length": 32,
                  "kind": "long truncated"})
    return cases


def text(case, key):
    if key + "_base64" in case:
        return base64.b64decode(case[key + "_base64"]).decode("utf-8", "replace")
    return case.get(key)


def hf_results(path, cases):
    t = Tokenizer.from_file(path)
    t.no_padding()
    results = [None] * len(cases)
    groups = {}
    for i, c in enumerate(cases):
        groups.setdefault((c.get("max_length", 0), c.get("add_special_tokens", True), "b" in c or "b_base64" in c), []).append(i)
    for (max_length, special, pair), indexes in groups.items():
        if max_length:
            t.enable_truncation(max_length)
        else:
            t.no_truncation()
        inputs = [(text(cases[i], "a"), text(cases[i], "b")) if pair else text(cases[i], "a") for i in indexes]
        for i, e in zip(indexes, t.encode_batch(inputs, add_special_tokens=special)):
            results[i] = {"ids": e.ids, "type_ids": e.type_ids, "tokens": e.tokens}
    return results


def attend_results(driver, path, cases):
    """The driver's results; `path` is a tokenizer file, or a list of the driver's arguments."""
    payload = "".join(json.dumps({k: v for k, v in c.items() if k != "kind"}) + "\n" for c in cases)
    arguments = path if isinstance(path, list) else [path]
    run = subprocess.run([driver, *arguments], input=payload.encode(), capture_output=True, check=False)
    if run.returncode != 0:
        raise SystemExit(f"{driver} {path}: exit {run.returncode}: {run.stderr.decode()[-2000:]}")
    out = [json.loads(l) for l in run.stdout.decode().split("\n") if l]  # not splitlines(): U+2028 is in the text
    if len(out) != len(cases):
        raise SystemExit(f"{driver} {path}: {len(out)} results for {len(cases)} cases")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver")
    ap.add_argument("fixtures")
    ap.add_argument("extra", nargs="*")
    ap.add_argument("--sentences", type=int, default=6000)
    ap.add_argument("--quick", action="store_true",
                    help="ctest's size: every 16th character of the uniform blocks (CJK, Hangul, ...), the others in runs, every fourth alone")
    args = ap.parse_args()
    paths = sorted(os.path.join(args.fixtures, f) for f in os.listdir(args.fixtures) if f.endswith(".json"))
    paths += args.extra
    cases = build_cases(args.sentences, all_alone=not args.quick)
    kinds = {}
    for c in cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    print(f"tokenizers {tokenizers.__version__}; {len(cases)} cases: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
    failed = 0
    for path in paths:
        start = time.time()
        expected = hf_results(path, cases)
        got = attend_results(args.driver, path, cases)
        bad = [i for i, (e, g) in enumerate(zip(expected, got))
               if g.get("ids") != e["ids"] or g.get("type_ids") != e["type_ids"] or g.get("tokens") != e["tokens"]]
        name = os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path) if args.extra and path in args.extra else os.path.basename(path)
        print(f"{name}: {len(cases) - len(bad)}/{len(cases)} identical ({time.time() - start:.1f} s)")
        for i in bad[:5]:
            c = cases[i]
            print(f"  {c['kind']}: {json.dumps({k: v for k, v in c.items() if k != 'kind'}, ensure_ascii=True)[:300]}")
            e, g = expected[i], got[i]
            k = next((j for j, (x, y) in enumerate(zip(e["tokens"], g.get("tokens", []))) if x != y), None)
            print(f"    tokenizers: {json.dumps(e['tokens'][max(0, (k or 0) - 3):(k or 0) + 5], ensure_ascii=True)}")
            print(f"    attend:     {json.dumps(g.get('tokens', g)[max(0, (k or 0) - 3):(k or 0) + 5] if 'tokens' in g else g, ensure_ascii=True)}")
        failed += bool(bad)
    print(f"{len(paths) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
