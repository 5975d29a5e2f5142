#!/usr/bin/env python3
"""An independent implementation of a CTranslate2 Transformer (TransformerBase layout,
pre-norm, format versions 1-3) in NumPy, float64 throughout — the yardstick for
attend's per-token log-probabilities on the shared CTranslate2 models.

    numpy_reference.py MODEL_DIR "SOURCE TOKENS" "TARGET TOKENS" [...pairs]

For each (source, target) pair, prints a JSON object: the greedy decoding of the source
(tokens) and the log-probability of every target token followed by </s> under teacher
forcing. It shares no code with attend: its own model.bin reader, its own math.
"""
import json
import struct
import sys

import numpy as np


def read_model(path):
    """{name: float64 array}, int8 / int16 weights dequantized with their scales."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        values = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return values

    def string():
        nonlocal pos
        (n,) = take("H")
        s = data[pos:pos + n].rstrip(b"\0").decode()
        pos += n
        return s

    (version,) = take("I")
    assert 1 <= version <= 3, f"this reference reads format versions 1-3, got {version}"
    if version >= 2:
        string(), take("I")
    (count,) = take("I")
    raw = {}
    for _ in range(count):
        name = string()
        (rank,) = take("B")
        shape = take("I" * rank)
        (item,), (n,) = take("B"), take("I")
        dtype = {4: "<f4", 2: "<i2", 1: "<i1"}[item]
        raw[name] = np.frombuffer(data, dtype=dtype, count=n, offset=pos).reshape(shape).astype(np.float64)
        pos += n * item
    if version >= 3:
        (aliases,) = take("I")
        for _ in range(aliases):
            alias, target = string(), string()
            raw[alias] = raw[target]
    weights = {}
    for name, value in raw.items():
        if name.endswith("_scale"):
            continue
        scale = raw.get(name + "_scale")
        if scale is not None:
            value = value / (scale[:, None] if scale.ndim == 1 else scale)
        weights[name] = value
    return weights


def layer_norm(x, w, prefix):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    # CTranslate2 (3.x and later) uses 1e-5 when config.json gives no layer_norm_epsilon.
    return (x - mean) / np.sqrt(var + 1e-5) * w[prefix + "/gamma"] + w[prefix + "/beta"]


def dense(x, w, prefix):
    return x @ w[prefix + "/weight"].T + w[prefix + "/bias"]


def positions(length, depth):
    """[sin | cos] halves, timescales exp(-i·ln(10000)/(depth/2 − 1)), positions from 1."""
    half = depth // 2
    timescales = np.exp(-np.arange(half) * np.log(10000.0) / (half - 1))
    t = np.arange(1, length + 1)[:, None] * timescales[None, :]
    return np.concatenate([np.sin(t), np.cos(t)], axis=1)


def attention(q, k, v, heads, causal):
    T, D = q.shape
    d = D // heads
    out = np.zeros((T, D))
    for h in range(heads):
        s = q[:, h * d:(h + 1) * d] @ k[:, h * d:(h + 1) * d].T / np.sqrt(d)
        if causal:
            s = s + np.triu(np.full(s.shape, -np.inf), 1)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        out[:, h * d:(h + 1) * d] = p @ v[:, h * d:(h + 1) * d]
    return out


def encode(w, ids, heads=8):
    D = w["encoder/embeddings/weight"].shape[1]
    x = w["encoder/embeddings/weight"][ids] * np.sqrt(D) + positions(len(ids), D)
    layer = 0
    while f"encoder/layer_{layer}/ffn/linear_0/weight" in w:
        p = f"encoder/layer_{layer}"
        h = layer_norm(x, w, p + "/self_attention/layer_norm")
        q, k, v = np.split(dense(h, w, p + "/self_attention/linear_0"), 3, axis=1)
        x = x + dense(attention(q, k, v, heads, False), w, p + "/self_attention/linear_1")
        h = layer_norm(x, w, p + "/ffn/layer_norm")
        x = x + dense(np.maximum(dense(h, w, p + "/ffn/linear_0"), 0), w, p + "/ffn/linear_1")
        layer += 1
    return layer_norm(x, w, "encoder/layer_norm")


def decoder_log_probs(w, memory, inputs, heads=8):
    """Log-probabilities of the next token after each prefix of `inputs` (teacher forcing)."""
    D = w["decoder/embeddings/weight"].shape[1]
    y = w["decoder/embeddings/weight"][inputs] * np.sqrt(D) + positions(len(inputs), D)
    layer = 0
    while f"decoder/layer_{layer}/ffn/linear_0/weight" in w:
        p = f"decoder/layer_{layer}"
        h = layer_norm(y, w, p + "/self_attention/layer_norm")
        q, k, v = np.split(dense(h, w, p + "/self_attention/linear_0"), 3, axis=1)
        y = y + dense(attention(q, k, v, heads, True), w, p + "/self_attention/linear_1")
        h = layer_norm(y, w, p + "/attention/layer_norm")
        q = dense(h, w, p + "/attention/linear_0")
        k, v = np.split(dense(memory, w, p + "/attention/linear_1"), 2, axis=1)
        y = y + dense(attention(q, k, v, heads, False), w, p + "/attention/linear_2")
        h = layer_norm(y, w, p + "/ffn/layer_norm")
        y = y + dense(np.maximum(dense(h, w, p + "/ffn/linear_0"), 0), w, p + "/ffn/linear_1")
        layer += 1
    logits = dense(layer_norm(y, w, "decoder/layer_norm"), w, "decoder/projection")
    m = logits.max(-1, keepdims=True)
    return logits - m - np.log(np.exp(logits - m).sum(-1, keepdims=True))


def vocabulary(path):
    with open(path, encoding="utf-8") as f:
        tokens = [line.rstrip("\n") for line in f]
    if "<unk>" not in tokens:
        tokens.append("<unk>")
    return tokens


def main():
    model_dir, pairs = sys.argv[1], sys.argv[2:]
    w = read_model(model_dir + "/model.bin")
    src_vocab = vocabulary(model_dir + "/source_vocabulary.txt")
    tgt_vocab = vocabulary(model_dir + "/target_vocabulary.txt")
    bos, eos = tgt_vocab.index("<s>"), tgt_vocab.index("</s>")
    for source, target in zip(pairs[0::2], pairs[1::2]):
        memory = encode(w, [src_vocab.index(t) if t in src_vocab else src_vocab.index("<unk>") for t in source.split()])
        target_ids = [tgt_vocab.index(t) for t in target.split()]
        lp = decoder_log_probs(w, memory, [bos] + target_ids)
        forced = [float(lp[i, t]) for i, t in enumerate(target_ids + [eos])]
        greedy = [bos]
        while len(greedy) < 50:
            nxt = int(np.argmax(decoder_log_probs(w, memory, greedy)[-1]))
            if nxt == eos:
                break
            greedy.append(nxt)
        print(json.dumps({"source": source, "target": target, "greedy": " ".join(tgt_vocab[i] for i in greedy[1:]),
                          "target_log_probs": forced}))


if __name__ == "__main__":
    main()
