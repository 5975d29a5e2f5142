#!/usr/bin/env python3
"""Converts a checkpoint of PyTorch's nn.Transformer tutorial model to attend's format.

    tools/convert_torch.py CHECKPOINT.pt OUTPUT_DIR --nhead 8 [--norm-first] [--activation gelu]

The checkpoint holds the state dict of the tutorial's Seq2SeqTransformer
(tools/torch_tutorial_model.py): src_tok_emb/tgt_tok_emb embeddings (scaled by √d),
positional_encoding.pos_embedding (kept as a stored table, shared by both sides),
transformer.* with packed in_proj weights, generator.weight/bias. The state dict cannot
tell the head count, the LayerNorm placement or the activation: give them as flags.
nn.Transformer keeps a final LayerNorm on both stacks even when post-LN; so does the
converted model. Special ids: UNK 0, PAD 1, BOS 2 (decoder start), EOS 3.
Writes OUTPUT_DIR/config.json and OUTPUT_DIR/model.safetensors.
"""
import argparse
import collections
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import safetensors_writer  # noqa: E402


def convert_state_dict(state, nhead, norm_first, activation):
    """(config dict, ordered {attend name: numpy array}) from a tutorial state dict."""
    import torch_tutorial_model as tm

    sd = {k: v.detach().float().cpu().numpy() for k, v in state.items()}
    hp = tm.hyperparameters(state)
    D = hp["emb_size"]
    if D % nhead:
        raise SystemExit(f"--nhead {nhead} does not divide the model dimension {D}")
    src_emb, tgt_emb = sd["src_tok_emb.embedding.weight"], sd["tgt_tok_emb.embedding.weight"]
    shared = src_emb.shape == tgt_emb.shape and (src_emb == tgt_emb).all()
    pos = sd["positional_encoding.pos_embedding"][:, 0, :]
    out = collections.OrderedDict()
    out["encoder.embed_tokens.weight"] = src_emb
    out["encoder.embed_positions.weight"] = pos

    def linear(dst, src, rows=None):
        w, b = sd[src + "weight"], sd[src + "bias"]
        if rows is not None:
            w, b = w[rows], b[rows]
        out[dst + ".weight"], out[dst + ".bias"] = w, b

    def norm(dst, src):
        out[dst + ".weight"], out[dst + ".bias"] = sd[src + ".weight"], sd[src + ".bias"]

    for i in range(hp["num_encoder_layers"]):
        s, d = f"transformer.encoder.layers.{i}.", f"encoder.layers.{i}."
        linear(d + "self_attn.qkv_proj", s + "self_attn.in_proj_")
        linear(d + "self_attn.out_proj", s + "self_attn.out_proj.")
        norm(d + "self_attn_layer_norm", s + "norm1")
        linear(d + "fc1", s + "linear1.")
        linear(d + "fc2", s + "linear2.")
        norm(d + "final_layer_norm", s + "norm2")
    norm("encoder.layer_norm", "transformer.encoder.norm")
    if not shared:
        out["decoder.embed_tokens.weight"] = tgt_emb
    for i in range(hp["num_decoder_layers"]):
        s, d = f"transformer.decoder.layers.{i}.", f"decoder.layers.{i}."
        linear(d + "self_attn.qkv_proj", s + "self_attn.in_proj_")
        linear(d + "self_attn.out_proj", s + "self_attn.out_proj.")
        norm(d + "self_attn_layer_norm", s + "norm1")
        linear(d + "cross_attn.q_proj", s + "multihead_attn.in_proj_", slice(0, D))
        linear(d + "cross_attn.kv_proj", s + "multihead_attn.in_proj_", slice(D, 3 * D))
        linear(d + "cross_attn.out_proj", s + "multihead_attn.out_proj.")
        norm(d + "cross_attn_layer_norm", s + "norm2")
        linear(d + "fc1", s + "linear1.")
        linear(d + "fc2", s + "linear2.")
        norm(d + "final_layer_norm", s + "norm3")
    norm("decoder.layer_norm", "transformer.decoder.norm")
    out["output_projection.weight"] = sd["generator.weight"]
    out["output_projection.bias"] = sd["generator.bias"]

    config = {
        "format": "attend", "format_version": 1, "architecture": "transformer_encoder_decoder",
        "name": "pytorch-tutorial-seq2seq",
        "d_model": D, "num_heads": nhead, "ffn_dim": hp["dim_feedforward"],
        "encoder_layers": hp["num_encoder_layers"], "decoder_layers": hp["num_decoder_layers"],
        "src_vocab_size": hp["src_vocab_size"], "tgt_vocab_size": hp["tgt_vocab_size"],
        "max_positions": hp["maxlen"], "activation": activation,
        "norm_placement": "pre" if norm_first else "post", "layer_norm_epsilon": 1e-5,
        "encoder_final_norm": True, "decoder_final_norm": True, "layernorm_embedding": False,
        "linear_bias": True, "position_encoding": "learned", "position_offset": 0, "shared_position_table": True,
        "embedding_scale": math.sqrt(D), "shared_embeddings": bool(shared), "tie_output_projection": False,
        "output_bias": True, "unk_id": tm.UNK_IDX, "pad_id": tm.PAD_IDX, "bos_id": tm.BOS_IDX, "eos_id": tm.EOS_IDX,
        "decoder_start_id": tm.BOS_IDX,
    }
    return config, out


def save(config, tensors, output_dir):
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    safetensors_writer.write(os.path.join(output_dir, "model.safetensors"), tensors)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", help="torch.save()d state dict of the tutorial's Seq2SeqTransformer")
    p.add_argument("output_dir")
    p.add_argument("--nhead", type=int, required=True, help="attention heads")
    p.add_argument("--norm-first", action="store_true", help="the model was built with norm_first=True (pre-LN)")
    p.add_argument("--activation", choices=["relu", "gelu"], default="relu")
    a = p.parse_args()
    try:
        import torch
    except ImportError:
        raise SystemExit("convert_torch.py needs PyTorch: Debian's python3-torch, which tools/bootstrap.sh installs")
    state = torch.load(a.checkpoint, map_location="cpu")
    config, tensors = convert_state_dict(state, a.nhead, a.norm_first, a.activation)
    save(config, tensors, a.output_dir)
    params = sum(t.size for t in tensors.values())
    print(f"{a.output_dir}: {len(tensors)} tensors, {params:,} parameters", file=sys.stderr)


if __name__ == "__main__":
    main()
