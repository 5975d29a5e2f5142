#!/usr/bin/python3
"""Checks the .npz files of `attend translate --attention-all DIR` with NumPy, as a
notebook reads them, against the same run's `--attention FILE` (JSON lines):

  - shapes: encoder_self [layers, heads, S, S], decoder_self [layers, heads, T, T],
    cross [layers, heads, T, S], with S the source tokens and T the decoding steps
    (the hypothesis' tokens, and its end token when it finished);
  - every row a distribution (≥ 0, sums to 1 within 1e-5: float32 sums of ≤ 64 terms),
    decoder self-attention causal (exactly 0 above the diagonal);
  - the tokens those of --attention, and the cross-attention of the last layer's first
    head (the alignment layer and head) equal to --attention's rows within 1e-5 (the
    alignment step sums its scores in float, the trace in double).

    check_attention_npz.py DIR ATTENTION_JSONL LINE...    (prints "checked N line(s)")
An empty input line must have maps of 0 rows.
"""
import json
import sys

import numpy as np


def fail(line, what):
    sys.exit(f"line {line}: {what}")


def check_line(path, record, line):
    with np.load(path) as z:
        a = {k: z[k] for k in z.files}
    if int(a["line"]) != line:
        fail(line, f"{path} says line {int(a['line'])}")
    enc, dec, cross = a["encoder_self"], a["decoder_self"], a["cross"]
    if not record["source"]:  # an empty line: not run
        if enc.shape[2:] != (0, 0) or dec.shape[2:] != (0, 0) or cross.shape[2:] != (0, 0):
            fail(line, f"an empty line has maps {enc.shape} {dec.shape} {cross.shape}")
        return
    S, T = len(a["source_tokens"]), len(a["target_tokens"])
    if list(a["source_tokens"]) != record["source"]:
        fail(line, f"source tokens {list(a['source_tokens'])} != --attention's {record['source']}")
    if list(a["target_tokens"][:len(record["target"])]) != record["target"] or T - len(record["target"]) not in (0, 1):
        fail(line, f"target tokens {list(a['target_tokens'])} are not --attention's {record['target']} (+ end token)")
    if list(a["decoder_input_tokens"][1:]) != list(a["target_tokens"][:-1]):
        fail(line, "decoder inputs are not the start token then the target but its last")
    layers, heads = dec.shape[:2]
    for name, w, shape in (("encoder_self", enc, (enc.shape[0], heads, S, S)), ("decoder_self", dec, (layers, heads, T, T)),
                           ("cross", cross, (layers, heads, T, S))):
        if w.shape != shape or w.dtype != np.float32:
            fail(line, f"{name} is {w.dtype} {w.shape}, not float32 {shape}")
        if (w < 0).any() or np.abs(w.sum(axis=-1) - 1).max() > 1e-5:
            fail(line, f"{name}: rows are not distributions (sums {w.sum(axis=-1).min()} .. {w.sum(axis=-1).max()})")
    if np.triu(dec, k=1).any():
        fail(line, "decoder self-attention sees later steps")
    alignment = np.array(record["attention"], dtype=np.float64)
    got = cross[-1, 0, :alignment.shape[0], :]
    if alignment.shape != got.shape or np.abs(got - alignment).max() > 1e-5:
        fail(line, f"cross[last layer, head 0] differs from --attention by {np.abs(got - alignment).max()}")


def main():
    directory, jsonl, lines = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
    records = {}
    with open(jsonl, encoding="utf-8") as f:
        for text in f:
            r = json.loads(text)
            records[r["line"]] = r
    for line in lines:
        check_line(f"{directory}/line-{line}.npz", records[line], line)
    print(f"checked {len(lines)} line(s)")


if __name__ == "__main__":
    main()
