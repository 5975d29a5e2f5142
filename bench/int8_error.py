#!/usr/bin/env python3
"""Where an encoder's int8 error comes from: all-MiniLM-L6-v2 (or any BertModel directory)
run in float64 NumPy with attend's int8 arithmetic simulated GEMM by GEMM — each row of A
quantized to 127 levels with its own scale (nearest even), weights per output row, the
token table per row — and the embeddings' min cosine to exact fp32 over the reference
sentences (tests/data/encoders/minilm-reference.json), with int8 in every GEMM, in one
kind of GEMM or one layer only, in the weights or the activations only, and with the
second int8 term of the outlier rows (runtime/plan/outlier_rows.hpp). The simulation
matches attend to the printed digits (0.9828 with one int8 pass, 0.9954 with the second
term), so it can try ideas before they are written in C++.

    python bench/int8_error.py MODEL_DIR   # needs numpy, scipy, safetensors
"""
import argparse
import json
import os

import numpy as np
from safetensors.numpy import load_file
from scipy.special import erf

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
         "intermediate.dense", "output.dense"]


def quantize_rows(x):
    """Each row to 127 levels of max|row| / 127, nearest even: attend's activations and weights."""
    scale = np.abs(x).max(-1, keepdims=True)
    scale[scale == 0] = 1
    return np.round(x * 127 / scale) * scale / 127


def outlier_rows(a):
    """plan/outlier_rows.hpp: the rows whose mean magnitude gets fewer than 4 of the 127 levels."""
    return 127 * np.abs(a).mean(-1) < 4 * np.abs(a).max(-1)


class Bert:
    def __init__(self, directory):
        config = json.load(open(os.path.join(directory, "config.json")))
        self.layers, self.heads = config["num_hidden_layers"], config["num_attention_heads"]
        self.eps = config.get("layer_norm_eps", 1e-12)
        tensors = load_file(os.path.join(directory, "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float64) for k, v in tensors.items()}

    def norm(self, x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def linear(self, a, name, sim):
        w = self.w[name + ".weight"]
        if not sim["gemm"](name):
            return a @ w.T + self.w[name + ".bias"]
        wq = quantize_rows(w) if sim["weights"] else w
        aq = quantize_rows(a) if sim["activations"] else a
        y = aq @ wq.T
        rows = sim["second_term"](name, a)
        if rows is not None and rows.any():
            y[rows] += quantize_rows(a[rows] - aq[rows]) @ wq.T
        return y + self.w[name + ".bias"]

    def embed(self, ids, sim):
        table = self.w["embeddings.word_embeddings.weight"]
        words = quantize_rows(table[ids]) if sim["table"] else table[ids]
        x = words + self.w["embeddings.position_embeddings.weight"][: len(ids)] + self.w["embeddings.token_type_embeddings.weight"][0]
        x = self.norm(x, "embeddings.LayerNorm")
        n, d = x.shape
        dh = d // self.heads
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            q, k, v = (self.linear(x, p + "attention.self." + t, sim).reshape(n, self.heads, dh).transpose(1, 0, 2)
                       for t in ("query", "key", "value"))
            s = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
            s = np.exp(s - s.max(-1, keepdims=True))
            context = ((s / s.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(n, d)
            x = self.norm(x + self.linear(context, p + "attention.output.dense", sim), p + "attention.output.LayerNorm")
            h = self.linear(x, p + "intermediate.dense", sim)
            h = 0.5 * h * (1 + erf(h / np.sqrt(2)))
            x = self.norm(x + self.linear(h, p + "output.dense", sim), p + "output.LayerNorm")
        e = x.mean(0)
        return e / np.linalg.norm(e)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="a BertModel directory (config.json, model.safetensors)")
    parser.add_argument("--reference", default=os.path.join(HERE, "../tests/data/encoders/minilm-reference.json"))
    args = parser.parse_args()
    model = Bert(args.model)
    cases = json.load(open(args.reference))["cases"]
    exact = {"gemm": lambda name: False, "weights": False, "activations": False, "table": False,
             "second_term": lambda name, a: None}
    reference = [model.embed(c["ids"], exact) for c in cases]

    def run(label, **changes):
        sim = {"gemm": lambda name: True, "weights": True, "activations": True, "table": True,
               "second_term": lambda name, a: None, **changes}
        cosines = [float(model.embed(c["ids"], sim) @ r) for c, r in zip(cases, reference)]
        worst = int(np.argmin(cosines))
        print(f"{label:<58} min cosine {cosines[worst]:.5f} (sentence {worst}: {cases[worst]['text'][:24]!r}), "
              f"mean {np.mean(cosines):.5f}")

    run("int8 everywhere (one pass per row)")
    run("int8 weights only (activations fp32)", activations=False)
    run("int8 activations only (weights fp32)", weights=False, table=False)
    run("int8 token table only", gemm=lambda name: False)
    for kind in KINDS:
        run(f"int8 in {kind} only", gemm=lambda name, kind=kind: name.endswith(kind) and (
            kind != "output.dense" or "attention" not in name), table=False)
    for layer in range(model.layers):
        run(f"int8 in layer {layer} only", gemm=lambda name, layer=layer: f"layer.{layer}." in name, table=False)

    # The second term, for the rows a LayerNorm's output flags (qkv's and fc1's inputs;
    # fc2's rows are fc1's tokens), as attend's plan does it.
    flags = {}

    def second_term(name, a):
        layer = name.split(".")[2]
        if name.endswith("attention.self.query"):
            flags["attention"] = outlier_rows(a)
        if name.endswith("intermediate.dense"):
            flags["feed-forward"] = outlier_rows(a)
        if "attention.self." in name:
            return flags["attention"]
        if name.endswith(("intermediate.dense", f"layer.{layer}.output.dense")):
            return flags["feed-forward"]
        return None

    run("int8 everywhere, outlier rows in two int8 terms", second_term=second_term)


if __name__ == "__main__":
    main()
