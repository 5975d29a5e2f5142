#!/usr/bin/env python3
"""Random-weight CTranslate2 models of every encoder-decoder family, with CTranslate2's
own translations: more fixtures for tests/api/test_ct2_families.cpp, in the layout of
tests/data/ct2-variants (model.bin, config.json, shared_vocabulary.json, cases.jsonl).

Each model is built with ctranslate2.specs in the shape CTranslate2's converters write
for its family (transformers.py: Marian, BART, mBART, M2M100/NLLB, T5; opennmt_py.py:
relative positions), with sizes, layer counts, heads, relative distances and T5 bucket
counts drawn from the seed, and saved by CTranslate2 itself. Needs ctranslate2==4.8.1
and numpy (PyPI), not torch.

    python tests/ct2/make_family_fixture.py OUT_DIR --seed 7 [--families t5,marian]

Then run the family test on it: ATTEND_FAMILY_DIRS=OUT_DIR build/release/tests/test_families
"""
import argparse
import json
import os

import numpy as np
import ctranslate2
from ctranslate2.specs import common_spec, transformer_spec

FAMILIES = ["marian", "marian_native", "bart", "mbart", "nllb", "onmt_relative", "t5", "t5_tied"]
SPECIAL = ["<unk>", "<s>", "</s>", "<pad>"]
LANGUAGES = ["__eng_Latn__", "__fra_Latn__", "__deu_Latn__"]

# The decoding settings of tests/data/ct2-variants and beam search without length
# penalty, plus a forced language token for the multilingual families (NLLB/M2M100 usage).
SETTINGS = [
    {"beam_size": 1},
    {"beam_size": 4},
    {"beam_size": 4, "num_hypotheses": 3, "length_penalty": 0.6},
    {"beam_size": 1, "repetition_penalty": 1.5},
    {"beam_size": 4, "no_repeat_ngram_size": 2},
    {"beam_size": 2, "disable_unk": True, "min_decoding_length": 6},
    {"beam_size": 1, "max_decoding_length": 7},
    {"beam_size": 3, "num_hypotheses": 2, "length_penalty": 0.0},  # CTranslate2's early exit
    {"beam_size": 2, "return_attention": True},
]


def family_spec(family, rng, small):
    """(spec, d_model, decoder start token) for one family with random sizes."""
    heads = int(rng.choice([2, 4]))
    d_model = heads * int(rng.choice([4, 8] if small else [8, 16, 24]))
    layers = (int(rng.integers(1, 3 if small else 4)), int(rng.integers(1, 3 if small else 4)))
    act = common_spec.Activation
    kw = dict(num_heads=heads)
    start = "<s>"
    if family.startswith("marian"):
        kw.update(pre_norm=False, activation=act.GELUSigmoid if family == "marian_native" else act.SWISH)
        start = "</s>"
    elif family == "bart":
        kw.update(pre_norm=False, activation=act.GELU, layernorm_embedding=True)
    elif family == "mbart":
        kw.update(pre_norm=True, activation=act.GELU, layernorm_embedding=True)
    elif family == "nllb":
        kw.update(pre_norm=True, activation=act.RELU)
    elif family == "onmt_relative":
        kw.update(pre_norm=True, activation=act.RELU, with_relative_position=True)
    elif family.startswith("t5"):
        kw.update(pre_norm=True, activation=act.GELUTanh if rng.integers(2) else act.RELU,
                  relative_attention_bias=True, ffn_glu=True, rms_norm=True)
    spec = transformer_spec.TransformerSpec.from_config(layers, **kw)
    return spec, d_model, start


def fill(spec, family, d_model, vocab, rng):
    ffn = d_model * int(rng.choice([2, 3]))
    heads = int(spec.encoder.num_heads)
    head_dim = d_model // heads
    with_bias = not family.startswith("t5")
    relative_k = int(rng.integers(1, 9))
    buckets = int(rng.choice([8, 16, 32]))
    max_distance = int(rng.choice([buckets, 20, 128]))
    positions = 96 + int(rng.integers(0, 64))

    def rand(*shape, scale=None):
        scale = scale if scale is not None else 1.0 / np.sqrt(shape[-1])
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def linear(l, out, inp, bias=with_bias):
        l.weight = rand(out, inp)
        if bias:
            l.bias = rand(out, scale=0.1)

    def norm(n):
        n.gamma = (1 + 0.1 * rng.standard_normal(d_model)).astype(np.float32)
        if hasattr(n, "beta"):
            n.beta = rand(d_model, scale=0.1)

    def attention(a, self_attention):
        norm(a.layer_norm)
        if self_attention:
            linear(a.linear[0], 3 * d_model, d_model)
            linear(a.linear[1], d_model, d_model)
        else:
            linear(a.linear[0], d_model, d_model)
            linear(a.linear[1], 2 * d_model, d_model)
            linear(a.linear[2], d_model, d_model)
        if family.startswith("t5"):
            a.queries_scale = np.float32(1.0)  # T5 folds 1/√d into its weights
        if hasattr(a, "relative_position_keys"):
            a.relative_position_keys = rand(2 * relative_k + 1, head_dim, scale=0.5)
            a.relative_position_values = rand(2 * relative_k + 1, head_dim, scale=0.5)

    def ffn_block(f):
        norm(f.layer_norm)
        linear(f.linear_0, ffn, d_model)
        if hasattr(f, "linear_0_noact"):
            linear(f.linear_0_noact, ffn, d_model)
        linear(f.linear_1, d_model, ffn)

    embeddings = rand(vocab, d_model, scale=1.0 if family.startswith("t5") else 1.0 / np.sqrt(d_model))
    table = None
    if not family.startswith(("t5", "onmt")):
        if family.startswith("marian"):  # Marian stores its sinusoidal table
            pos = np.arange(positions)[:, None] * np.exp(-np.log(10000.0) * np.arange(d_model // 2) / (d_model // 2 - 1))[None]
            table = np.concatenate([np.sin(pos), np.cos(pos)], 1).astype(np.float32)
        else:
            table = rand(positions, d_model, scale=0.3)
    for stack in (spec.encoder, spec.decoder):
        emb = stack.embeddings[0] if isinstance(stack.embeddings, list) else stack.embeddings
        emb.weight = embeddings  # one shared table, as the converters alias it
        if hasattr(stack, "position_encodings"):
            # Separate tables for BART and mBART, one for the others (as their converters).
            stack.position_encodings.encodings = table if family not in ("bart", "mbart") else rand(positions, d_model, scale=0.3)
        if hasattr(stack, "layernorm_embedding"):
            norm(stack.layernorm_embedding)
        if hasattr(stack, "layer_norm"):
            norm(stack.layer_norm)
        stack.scale_embeddings = not (family in ("bart",) or family.startswith("t5"))
        for i, layer in enumerate(stack.layer):
            attention(layer.self_attention, True)
            if hasattr(layer, "attention"):
                attention(layer.attention, False)
            ffn_block(layer.ffn)
            if hasattr(layer.self_attention, "relative_attention_bias"):
                bias = rand(buckets, heads, scale=1.0)
                if i == 0:
                    first = bias
                layer.self_attention.relative_attention_bias = first  # converter: layer 0's everywhere
                layer.self_attention.relative_attention_max_distance = np.dtype("int32").type(max_distance)
    if family.startswith("marian"):
        spec.decoder.start_from_zero_embedding = True
    if family == "t5_tied":  # tied T5 scales the decoder output by d_model^-0.5
        spec.decoder.projection.weight = embeddings
        spec.decoder.scale_outputs = np.float32(d_model ** -0.5)
    else:
        linear(spec.decoder.projection, vocab, d_model, bias=family.startswith(("marian", "bart")))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--sources", type=int, default=12)
    p.add_argument("--small", action="store_true", help="small widths and vocabularies (the committed set)")
    p.add_argument("--quantization", choices=["int8", "float16", "bfloat16", "int8_float16"],
                   help="save the weights quantized or narrowed by CTranslate2 (the cases are then CTranslate2's own "
                   "outputs of that file on the CPU, to test such model.bin files run as they are; CTranslate2 computes "
                   "float16 and bfloat16 files in float32 on CPUs, int8_float16 in int8)")
    args = p.parse_args()
    for family in args.families.split(","):
        rng = np.random.default_rng([args.seed, FAMILIES.index(family)])
        vocab_size = int(rng.integers(40, 80) if args.small else rng.integers(60, 200))
        tokens = SPECIAL + (LANGUAGES if family == "nllb" else []) + ["w%d" % i for i in range(vocab_size)]
        spec, d_model, start = family_spec(family, rng, args.small)
        fill(spec, family, d_model, len(tokens), rng)
        spec.config.decoder_start_token = start
        spec.register_source_vocabulary(tokens)
        spec.register_target_vocabulary(tokens)
        spec.validate()
        spec.optimize(quantization=args.quantization)
        out = os.path.join(args.out, "%s-seed%d%s" % (family, args.seed, "-" + args.quantization if args.quantization else ""))
        os.makedirs(out, exist_ok=True)
        spec.save(out)

        words = tokens[len(SPECIAL) + (len(LANGUAGES) if family == "nllb" else 0):]
        sources = [list(rng.choice(words, int(rng.integers(1, 17)))) for _ in range(args.sources)]
        if family == "nllb":  # NLLB sources end with </s> and their language token
            sources = [s + ["</s>", LANGUAGES[0]] for s in sources]
        translator = ctranslate2.Translator(out, device="cpu", intra_threads=1)
        if args.quantization:
            print(out, "computed by CTranslate2 in", translator.compute_type)
        settings = [dict(s, max_decoding_length=s.get("max_decoding_length", 24)) for s in SETTINGS]
        with open(os.path.join(out, "cases.jsonl"), "w") as f:
            for options in settings:
                prefixes = [[LANGUAGES[1 + i % 2]] for i in range(len(sources))] if family == "nllb" else None
                for with_prefix in ([False, True] if prefixes else [False]):
                    if options.get("return_attention"):
                        # CTranslate2's attention of a batch depends on the batch's padding
                        # (a sentence shorter than the longest gets other weights than
                        # alone), so these are translated one at a time.
                        results = [translator.translate_batch(
                            [s], target_prefix=[prefixes[i]] if with_prefix else None, return_scores=True, **options)[0]
                            for i, s in enumerate(sources)]
                    else:
                        results = translator.translate_batch(
                            sources, target_prefix=prefixes if with_prefix else None, return_scores=True, **options)
                    for i, (source, r) in enumerate(zip(sources, results)):
                        case = {"source": source, "options": options, "hypotheses": r.hypotheses, "scores": r.scores}
                        if options.get("return_attention"):
                            case["attention"] = r.attention
                        if with_prefix:
                            case["target_prefix"] = prefixes[i]
                        f.write(json.dumps(case) + "\n")
        print(out)


if __name__ == "__main__":
    main()
