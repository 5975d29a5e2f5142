#!/usr/bin/env python3
"""Reference decoding with PyTorch for the nn.Transformer tutorial model.

    tools/reference.py decode CHECKPOINT --nhead N [--norm-first] [--activation gelu]
                              [--input IDS] [--beam K] [--n-best N] [--length-penalty A]
                              [--max-length M] [--min-length M] [--logits] [--no-cache]
    tools/reference.py bench  CHECKPOINT --nhead N ... --input IDS [--batch 32]
                              [--tgt-len 48] [--beam 1] [--threads 2]

IDS: one sentence per line, space-separated source token ids. `decode` prints one JSON
object per sentence: {"hypotheses": [{"tokens", "score", "log_prob", "finished"}],
"logits": [[…] per step of the best hypothesis] (with --logits)}.

Decoding follows attend's definitions (runtime/decoding/decoding.hpp, runtime/decoding/beam_search.cpp)
so the two can be compared token for token:
  - greedy: argmax (lowest id on ties) until EOS or --max-length tokens; EOS impossible
    before --min-length tokens; log_prob sums log p of every generated token, EOS included.
  - beam: per step, each live hypothesis proposes its 2K best tokens; the sentence's
    candidates are ranked by total log p (ties: lower row, lower token), the best 2K
    kept; an EOS candidate ranked in the first K ends a hypothesis, the first K others
    continue; the sentence stops once K hypotheses ended. Score = log_prob /
    length^A, length counting EOS. Live hypotheses at max length end unfinished.
  - With --no-cache the decoder is re-run over the whole prefix at every step, exactly
    as the tutorial's greedy_decode; by default a KV cache is used (same numbers).

`bench` runs a batched KV-cache decoder for exactly --tgt-len tokens per sentence
(EOS masked, as attend's benchmark forces min = max length), beam search batched over
sentences (EOS cannot occur, so no hypothesis ends early), and prints generated
tokens per second.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_tutorial_model as tm  # noqa: E402

NEG_INF = float("-inf")


class Decoder:
    """Decoder steps over the tutorial model for a batch of sources (seq-first tensors)."""

    def __init__(self, model, sources, norm_first, nhead, cache=True):
        self.model, self.norm_first, self.H, self.cache = model, norm_first, nhead, cache
        S = max(1, max(len(s) for s in sources))
        src = torch.full((S, len(sources)), tm.PAD_IDX, dtype=torch.long)
        for b, s in enumerate(sources):
            src[: len(s), b] = torch.tensor(s, dtype=torch.long)
        self.src_padding = torch.tensor([[i >= len(s) for i in range(S)] for s in sources])
        with torch.no_grad():
            self.memory = model.encode(src, torch.zeros(S, S, dtype=torch.bool), self.src_padding)  # [S, B, D]
        self.D = self.memory.shape[-1]
        self.dh = self.D // nhead
        if cache:  # every layer's cross-attention keys and values, [B, H, S, dh]
            self.cross = []
            for layer in model.transformer.decoder.layers:
                w, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
                kv = F.linear(self.memory.transpose(0, 1), w[self.D:], b[self.D:])
                k, v = kv.split(self.D, dim=-1)
                self.cross.append((self._heads(k), self._heads(v)))

    def _heads(self, t):  # [N, L, D] -> [N, H, L, dh]
        return t.reshape(t.shape[0], t.shape[1], self.H, self.dh).transpose(1, 2)

    def _attend(self, q, k, v, mask):
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
        if mask is not None:
            s = s.masked_fill(mask[:, None, None, :], NEG_INF)
        return (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(q.shape[0], -1)

    def start(self, rows_sentence):
        """State for live rows; rows_sentence[i] is row i's sentence."""
        n = len(self.model.transformer.decoder.layers)
        return {"sentence": torch.tensor(rows_sentence), "tokens": [[] for _ in rows_sentence],
                "k": [None] * n, "v": [None] * n}

    def reorder(self, state, parents, new_tokens):
        p = torch.tensor(parents, dtype=torch.long)
        out = {"sentence": state["sentence"][p], "tokens": [state["tokens"][i] + [t] for i, t in zip(parents, new_tokens)]}
        out["k"] = [None if k is None else k[p] for k in state["k"]]
        out["v"] = [None if v is None else v[p] for v in state["v"]]
        return out

    def logits(self, state, step):
        """Logits of the next token for every live row: [rows, V]."""
        inputs = [[tm.BOS_IDX] + t for t in state["tokens"]]
        with torch.no_grad():
            if not self.cache:
                ys = torch.tensor(inputs, dtype=torch.long).t()  # [t+1, rows]
                mask = torch.triu(torch.full((step + 1, step + 1), NEG_INF), diagonal=1)
                memory = self.memory[:, state["sentence"]]
                out = self.model.decode(ys, memory, mask, self.src_padding[state["sentence"]])
                return self.model.generator(out[-1])
            last = torch.tensor([i[-1] for i in inputs], dtype=torch.long)
            x = self.model.tgt_tok_emb(last) + self.model.positional_encoding.pos_embedding[step, 0]
            for l, layer in enumerate(self.model.transformer.decoder.layers):
                x = self._layer(layer, l, x, state)
            return self.model.generator(self.model.transformer.decoder.norm(x))

    def _layer(self, layer, l, x, state):
        D, sentence = self.D, state["sentence"]

        def self_block(h):
            q, k, v = F.linear(h, layer.self_attn.in_proj_weight, layer.self_attn.in_proj_bias).split(D, dim=-1)
            k, v = self._heads(k[:, None]), self._heads(v[:, None])
            state["k"][l] = k if state["k"][l] is None else torch.cat([state["k"][l], k], dim=2)
            state["v"][l] = v if state["v"][l] is None else torch.cat([state["v"][l], v], dim=2)
            return layer.self_attn.out_proj(self._attend(self._heads(q[:, None]), state["k"][l], state["v"][l], None))

        def cross_block(h):
            w, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
            q = self._heads(F.linear(h, w[:D], b[:D])[:, None])
            k, v = self.cross[l]
            o = self._attend(q, k[sentence], v[sentence], self.src_padding[sentence])
            return layer.multihead_attn.out_proj(o)

        def ff(h):
            return layer.linear2(layer.activation(layer.linear1(h)))

        if self.norm_first:
            x = x + self_block(layer.norm1(x))
            x = x + cross_block(layer.norm2(x))
            return x + ff(layer.norm3(x))
        x = layer.norm1(x + self_block(x))
        x = layer.norm2(x + cross_block(x))
        return layer.norm3(x + ff(x))


def best_tokens(logp, k):
    """Indices of the k largest entries, ties to the lower index."""
    order = np.lexsort((np.arange(logp.size), -logp))
    return order[:k]


def greedy(dec, max_length, min_length, want_logits):
    state = dec.start([0])
    total, lps, logits_seen = np.float32(0), [], []
    for t in range(max_length):
        logits = dec.logits(state, t)
        if want_logits:
            logits_seen.append(logits[0].tolist())
        logp = torch.log_softmax(logits.float(), dim=-1)[0].numpy()
        if t < min_length:
            logp[tm.EOS_IDX] = NEG_INF
        tok = int(np.argmax(logp))
        total = np.float32(total + logp[tok])
        lps.append(float(logp[tok]))
        if tok == tm.EOS_IDX:
            return {"tokens": state["tokens"][0], "score": float(total), "log_prob": float(total), "finished": True}, logits_seen
        state = dec.reorder(state, [0], [tok])
    return {"tokens": state["tokens"][0], "score": float(total), "log_prob": float(total), "finished": False}, logits_seen


def beam_search(dec, beam, n_best, alpha, max_length, min_length):
    state = dec.start([0])
    live = [np.float32(0)]
    ended = []

    def score(lp, length):
        return float(np.float32(lp) / np.float32(length) ** np.float32(alpha)) if alpha != 0 else float(lp)

    for t in range(max_length):
        logp = torch.log_softmax(dec.logits(state, t).float(), dim=-1).numpy()
        if t < min_length:
            logp[:, tm.EOS_IDX] = NEG_INF
        cands = []
        for r in range(len(live)):
            for tok in best_tokens(logp[r], 2 * beam):
                total = np.float32(live[r] + logp[r, tok])
                if np.isfinite(total):
                    cands.append((total, r, int(tok)))
        cands.sort(key=lambda c: (-c[0], c[1], c[2]))
        cands = cands[: 2 * beam]
        parents, tokens, totals = [], [], []
        for rank, (total, r, tok) in enumerate(cands):
            if len(parents) == beam:
                break
            if tok == tm.EOS_IDX:
                if rank < beam:
                    ended.append({"tokens": state["tokens"][r], "score": score(total, t + 1), "log_prob": float(total),
                                  "finished": True})
                continue
            parents.append(r), tokens.append(tok), totals.append(total)
        if len(ended) >= beam:
            break
        state, live = dec.reorder(state, parents, tokens), totals
        if t + 1 == max_length:
            for r, total in enumerate(live):
                ended.append({"tokens": state["tokens"][r], "score": score(total, t + 1), "log_prob": float(total),
                              "finished": False})
    ended.sort(key=lambda h: -h["score"])
    return ended[:n_best]


def read_ids(path):
    with (open(path) if path != "-" else sys.stdin) as f:
        return [[int(x) for x in line.split()] for line in f]


def cmd_decode(a, model):
    for src in read_ids(a.input):
        dec = Decoder(model, [src], a.norm_first, a.nhead, cache=not a.no_cache)
        if a.beam == 1:
            hyp, logits = greedy(dec, a.max_length, a.min_length, a.logits)
            out = {"hypotheses": [hyp]}
            if a.logits:
                out["logits"] = logits
        else:
            out = {"hypotheses": beam_search(dec, a.beam, a.n_best, a.length_penalty, a.max_length, a.min_length)}
        print(json.dumps(out), flush=True)


def bench_batch(model, batch, a):
    """Exactly a.tgt_len tokens for every sentence of the batch (EOS masked); beam batched."""
    dec = Decoder(model, batch, a.norm_first, a.nhead, cache=True)
    B, K = len(batch), a.beam
    state = dec.start(list(range(B)))
    scores = torch.zeros(B, 1)
    for t in range(a.tgt_len):
        logp = torch.log_softmax(dec.logits(state, t).float(), dim=-1)
        logp[:, tm.EOS_IDX] = NEG_INF
        if K == 1:
            tok = logp.argmax(dim=-1)
            state = dec.reorder(state, list(range(B)), tok.tolist())
            continue
        V = logp.shape[-1]
        total = (scores.reshape(-1, 1) + logp).reshape(B, -1)  # [B, rows per sentence × V]
        best, idx = total.topk(K, dim=-1)
        rows_per = total.shape[1] // V
        parents = (torch.arange(B)[:, None] * rows_per + idx // V).reshape(-1)
        state = dec.reorder(state, parents.tolist(), (idx % V).reshape(-1).tolist())
        scores = best
    return B * a.tgt_len


def cmd_bench(a, model):
    torch.set_num_threads(a.threads)
    sources = read_ids(a.input)
    generated, start = 0, time.perf_counter()
    with torch.no_grad():
        for i in range(0, len(sources), a.batch):
            generated += bench_batch(model, sources[i: i + a.batch], a)
    seconds = time.perf_counter() - start
    print(json.dumps({"engine": "pytorch", "torch": torch.__version__, "threads": a.threads, "beam": a.beam,
                      "sentences": len(sources), "generated_tokens": generated, "seconds": seconds,
                      "generated_tokens_per_second": generated / seconds}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["decode", "bench"])
    p.add_argument("checkpoint")
    p.add_argument("--nhead", type=int, required=True)
    p.add_argument("--norm-first", action="store_true")
    p.add_argument("--activation", choices=["relu", "gelu"], default="relu")
    p.add_argument("--input", default="-")
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--n-best", type=int, default=1)
    p.add_argument("--length-penalty", type=float, default=1.0)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--min-length", type=int, default=0)
    p.add_argument("--logits", action="store_true", help="decode: also print the logits of each greedy step")
    p.add_argument("--no-cache", action="store_true", help="decode: recompute the whole prefix each step (tutorial style)")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--tgt-len", type=int, default=48)
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    a = p.parse_args()
    model = tm.load(a.checkpoint, a.nhead, a.norm_first, a.activation)
    {"decode": cmd_decode, "bench": cmd_bench}[a.command](a, model)


if __name__ == "__main__":
    main()
