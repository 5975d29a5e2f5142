#!/usr/bin/env python3
"""The standard workload's model and inputs, in both engines' formats.

    make_base_model.py OUT_DIR [--seed 1] [--sentences 256]

OUT_DIR/tutorial.pt      state dict of the PyTorch tutorial's Seq2SeqTransformer:
                         Transformer-base (d 512, 8 heads, FFN 2048, 6 + 6 layers,
                         pre-LN, ReLU), one 32000-token vocabulary shared by source and
                         target embeddings, random weights (xavier, as the tutorial)
OUT_DIR/model/           the same converted to attend's format (tools/convert_torch.py)
OUT_DIR/sources.ids      256 sources of 10–50 random token ids
Needs PyTorch.
"""
import argparse
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import convert_torch  # noqa: E402
import torch_tutorial_model as tm  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sentences", type=int, default=256)
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    torch.manual_seed(a.seed)
    model = tm.Seq2SeqTransformer(6, 6, 512, 8, 32000, 32000, dim_feedforward=2048, dropout=0.0, norm_first=True,
                                  activation="relu", maxlen=1024)
    with torch.no_grad():
        for p_ in model.parameters():
            if p_.dim() > 1:
                torch.nn.init.xavier_uniform_(p_)
        model.tgt_tok_emb.embedding.weight = model.src_tok_emb.embedding.weight  # shared vocabulary
    state = model.state_dict()
    torch.save(state, os.path.join(a.out_dir, "tutorial.pt"))
    config, tensors = convert_torch.convert_state_dict(state, 8, True, "relu")
    convert_torch.save(config, tensors, os.path.join(a.out_dir, "model"))
    rng = np.random.default_rng(a.seed)
    with open(os.path.join(a.out_dir, "sources.ids"), "w") as f:
        for _ in range(a.sentences):
            f.write(" ".join(str(t) for t in rng.integers(4, 32000, size=int(rng.integers(10, 51)))) + "\n")


if __name__ == "__main__":
    main()
