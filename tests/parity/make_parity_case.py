#!/usr/bin/env python3
"""Writes a PyTorch parity case: a random tutorial model converted to attend's format,
random sources, and what tools/reference.py decodes from them.

    make_parity_case.py OUT_DIR [--seed S] [--d-model 32] [--nhead 4] [--ffn 64]
        [--layers 2] [--src-vocab 50] [--tgt-vocab 60] [--shared-vocab] [--norm-first]
        [--activation relu|gelu] [--sentences 6] [--beam 4] [--max-length 24] [--via-checkpoint]

OUT_DIR/model/ holds config.json + model.safetensors; OUT_DIR/expected.json holds the
sources, the greedy hypotheses with their per-step logits, and the beam n-best lists.
The runtime test (tests/runtime/test_parity.cpp) decodes the same sources and compares.
Needs PyTorch.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import convert_torch  # noqa: E402
import reference  # noqa: E402
import torch_tutorial_model as tm  # noqa: E402

MIN_MARGIN = 1e-3  # greedy steps closer than this between the top two logits are regenerated


def random_model(a):
    torch.manual_seed(a.seed)
    model = tm.Seq2SeqTransformer(a.layers, a.layers, a.d_model, a.nhead, a.src_vocab, a.tgt_vocab,
                                  dim_feedforward=a.ffn, dropout=0.0, norm_first=a.norm_first,
                                  activation=a.activation, maxlen=256)
    with torch.no_grad():
        for name, p in model.named_parameters():  # xavier as the tutorial, then spread the rest
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)
            elif "norm" in name and name.endswith("weight"):
                p.uniform_(0.8, 1.2)
            else:
                p.uniform_(-0.1, 0.1)
        if a.shared_vocab:
            model.tgt_tok_emb.embedding.weight = model.src_tok_emb.embedding.weight
    train(model, a)
    return model.eval()


def train(model, a):
    """A few hundred steps on "reverse the sequence": a random model repeats one token
    forever, a briefly trained one gives varied outputs that end with EOS — which is
    what exercises the search (endings, lengths, competing beams)."""
    rng = np.random.default_rng(a.seed + 1000)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    vocab = min(a.src_vocab, a.tgt_vocab)
    model.train()
    for _ in range(a.train_steps):
        batch = [list(rng.integers(4, vocab, size=int(rng.integers(1, 12)))) for _ in range(16)]
        S = max(len(b) for b in batch)
        src = torch.full((S, len(batch)), tm.PAD_IDX, dtype=torch.long)
        tgt = torch.full((S + 2, len(batch)), tm.PAD_IDX, dtype=torch.long)
        for i, b in enumerate(batch):
            src[: len(b), i] = torch.tensor(b)
            tgt[: len(b) + 2, i] = torch.tensor([tm.BOS_IDX] + b[::-1] + [tm.EOS_IDX])
        tgt_in, tgt_out = tgt[:-1], tgt[1:]
        T = tgt_in.shape[0]
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        src_pad, tgt_pad = (src == tm.PAD_IDX).t(), (tgt_in == tm.PAD_IDX).t()
        memory = model.encode(src, torch.zeros(S, S, dtype=torch.bool), src_pad)
        out = model.transformer.decoder(model.positional_encoding(model.tgt_tok_emb(tgt_in)), memory, mask,
                                        tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        logits = model.generator(out)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                                                 ignore_index=tm.PAD_IDX)
        opt.zero_grad()
        loss.backward()
        opt.step()


def clear_greedy(logits):
    for step in logits:
        top = np.sort(np.asarray(step))[-2:]
        if top[1] - top[0] < MIN_MARGIN:
            return False
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--d-model", type=int, default=32)
    p.add_argument("--nhead", type=int, default=4)
    p.add_argument("--ffn", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--src-vocab", type=int, default=50)
    p.add_argument("--tgt-vocab", type=int, default=60)
    p.add_argument("--shared-vocab", action="store_true")
    p.add_argument("--norm-first", action="store_true")
    p.add_argument("--activation", choices=["relu", "gelu"], default="relu")
    p.add_argument("--sentences", type=int, default=6)
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--max-length", type=int, default=24)
    p.add_argument("--train-steps", type=int, default=300)
    p.add_argument("--via-checkpoint", action="store_true",
                   help="convert through tools/convert_torch.py's command line from a torch.save()d state dict")
    a = p.parse_args()
    if a.shared_vocab:
        a.tgt_vocab = a.src_vocab

    torch.set_num_threads(1)
    model = random_model(a)
    rng = np.random.default_rng(a.seed)
    sources, greedy, beam = [], [], []
    while len(sources) < a.sentences:
        n = int(rng.integers(1, 16))
        src = [int(t) for t in rng.integers(4, a.src_vocab, size=n)]  # no special ids inside
        dec = reference.Decoder(model, [src], a.norm_first, a.nhead, cache=True)
        hyp, logits = reference.greedy(dec, a.max_length, 0, True)
        if not clear_greedy(logits):
            continue
        # The tutorial-style decoder (no cache) must give the same tokens.
        plain, _ = reference.greedy(reference.Decoder(model, [src], a.norm_first, a.nhead, cache=False), a.max_length, 0, False)
        assert plain["tokens"] == hyp["tokens"], "KV-cache and full-recompute reference decoders disagree"
        hyp["logits"] = logits
        sources.append(src)
        greedy.append(hyp)
        beam.append(reference.beam_search(dec, a.beam, 2, 1.0, a.max_length, 0))

    if a.via_checkpoint:  # as a user converts: a torch.save()d state dict through the converter's command line
        os.makedirs(a.out_dir, exist_ok=True)
        checkpoint = os.path.join(a.out_dir, "checkpoint.pt")
        torch.save(model.state_dict(), checkpoint)
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "convert_torch.py"), checkpoint,
                        os.path.join(a.out_dir, "model"), "--nhead", str(a.nhead), "--activation", a.activation,
                        *(["--norm-first"] if a.norm_first else [])], check=True)
        os.remove(checkpoint)
        tensors = {}
    else:
        config, tensors = convert_torch.convert_state_dict(model.state_dict(), a.nhead, a.norm_first, a.activation)
        convert_torch.save(config, tensors, os.path.join(a.out_dir, "model"))
    expected = {"description": vars(a), "max_length": a.max_length, "beam": a.beam, "n_best": 2,
                "length_penalty": 1.0, "sources": sources, "greedy": greedy, "beam_results": beam}
    with open(os.path.join(a.out_dir, "expected.json"), "w") as f:
        json.dump(expected, f)
    converted = "tools/convert_torch.py" if a.via_checkpoint else f"{sum(t.size for t in tensors.values()):,} parameters"
    print(f"{a.out_dir}: {len(sources)} sentences, {converted}", file=sys.stderr)


if __name__ == "__main__":
    main()
