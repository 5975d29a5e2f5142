#!/usr/bin/env python3
"""Tiny random Hugging Face encoder-decoders of every family attend translates with, as
save_pretrained writes them, with transformers' own generate() outputs: the fixtures of
tests/hf_seq2seq/test_hf_seq2seq.cpp (tests/data/hf-seq2seq/, committed so the C++ tests
need no PyPI) and of the live comparison in tests/python/test_hf_seq2seq.py.

Each model is made with transformers' own classes (random weights, seeded), its
tokenizer files trained here on a small corpus with sentencepiece, and a
generation_config.json in the shape of the family's hub models. cases.jsonl holds, per
source sentence and decoding (greedy, beam 4), the ids and the text that
model.generate() and tokenizer.decode(..., skip_special_tokens=True) give.

    python tests/hf_seq2seq/make_hf_seq2seq_fixtures.py OUT_DIR [--families marian,...]

Needs torch, transformers (5.x), sentencepiece, protobuf.
"""
import argparse
import json
import os
import random
import shutil
import tempfile

import sentencepiece as spm
import torch
import transformers
from transformers import GenerationConfig

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A journey of a thousand miles begins with a single step.",
    "She sells sea shells by the sea shore, doesn't she?",
    "Translation engines read Hugging Face directories as they are.",
    "Numbers like 42, 3.14 and 1000 appear in text too!",
    "Le renard brun saute par-dessus le chien paresseux.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Ünïcödé wörds, émojis 🙂 and ‘quotes’ — all of them.",
    "Short.",
    "Hello world",
]
SOURCES = [
    "The quick brown fox.",
    "Hello world",
    "She sells sea shells!",
    "Numbers like 42 appear.",
    "Der Fuchs springt über den Hund.",
    "",
    "Ünïcödé and 🙂 here",
    "A journey begins with a single step, doesn't it?",
]


def train_spm(prefix, vocab_size, **extra):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for _ in range(20):
            for line in CORPUS:
                f.write(line + "\n")
        path = f.name
    spm.SentencePieceTrainer.train(input=path, model_prefix=prefix, vocab_size=vocab_size, character_coverage=1.0,
                                   model_type="unigram", minloglevel=2, hard_vocab_limit=False, **extra)
    os.unlink(path)
    return prefix + ".model"


def randomize(model, gen, zero_rows=()):
    """Weights of some spread (transformers' init, std 0.02, makes every output the same):
    matrices ~ N(0, 1/fan_in), biases and norm offsets small, norm gains near 1, token
    embeddings ~ N(0, 0.7²) with the padding rows zero as a trained model has them."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not p.requires_grad:  # a computed table (Marian's sinusoidal positions)
                continue
            if "embed_positions" in name:
                p.normal_(0.0, 0.3, generator=gen)
            elif p.dim() == 2 and ("embed" in name or "shared" in name):
                p.normal_(0.0, 0.7, generator=gen)
                for r in zero_rows:
                    p[r].zero_()
            elif p.dim() == 2:
                p.normal_(0.0, 1.0 / p.shape[1] ** 0.5, generator=gen)
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
            else:
                p.normal_(0.0, 0.1, generator=gen)


def generate_cases(model, tokenizer, sources, settings, lang_kwargs=None):
    """[{source, settings, ids, text}] from model.generate() under the directory's generation_config."""
    out = []
    for setting in settings:
        for s in sources:
            enc = tokenizer(s, return_tensors="pt")
            with torch.no_grad():
                gen = model.generate(**enc, **setting, **(lang_kwargs or {}))
            ids = gen[0].tolist()
            out.append({"source": s, "source_ids": enc["input_ids"][0].tolist(), "settings": setting, "ids": ids,
                        "text": tokenizer.decode(ids, skip_special_tokens=True)})
    return out


def marian(out_dir, seed, bin_only=False, separate_vocabs=False):
    """MarianMTModel with a Marian tokenizer: source.spm/target.spm, vocab.json ordered unlike the
    pieces (as Marian's own vocabularies), a >>xx<< language code, final_logits_bias non-zero."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    work = tempfile.mkdtemp()
    source_spm = train_spm(os.path.join(work, "source"), 120)
    target_spm = train_spm(os.path.join(work, "target"), 110)
    pieces = set()
    for path in (source_spm, target_spm):
        sp = spm.SentencePieceProcessor(model_file=path)
        pieces.update(sp.id_to_piece(i) for i in range(sp.get_piece_size()))
    pieces -= {"<unk>", "<s>", "</s>"}
    pieces = sorted(pieces)
    rng.shuffle(pieces)
    tokens = ["</s>", "<unk>"] + pieces + [">>fra<<", ">>deu<<", "<pad>"]
    vocab = {t: i for i, t in enumerate(tokens)}
    os.makedirs(out_dir, exist_ok=True)
    shutil.copy(source_spm, os.path.join(out_dir, "source.spm"))
    shutil.copy(target_spm, os.path.join(out_dir, "target.spm"))
    with open(os.path.join(out_dir, "vocab.json"), "w") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "MarianTokenizer", "model_max_length": 512, "separate_vocabs": False,
                   "source_lang": "en", "target_lang": "fr"}, f)
    pad = vocab["<pad>"]
    config = transformers.MarianConfig(
        vocab_size=len(vocab), decoder_vocab_size=len(vocab), d_model=16, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        max_position_embeddings=64, activation_function="swish", scale_embedding=True, pad_token_id=pad,
        eos_token_id=0, decoder_start_token_id=pad, forced_eos_token_id=0, bos_token_id=0)
    model = transformers.MarianMTModel(config).eval()
    with torch.no_grad():
        randomize(model, torch.Generator().manual_seed(seed), zero_rows=[pad])
        bias = torch.randn(1, len(vocab)) * 0.5
        bias[0, 0] += 2.6  # the end token likely enough that some outputs end before the cap
        model.final_logits_bias.copy_(bias)
    assert model.model.shared.weight[pad].abs().sum() == 0, "Marian's pad row is zero"
    model.generation_config = GenerationConfig(bad_words_ids=[[pad]], bos_token_id=0, decoder_start_token_id=pad,
                                               eos_token_id=0, forced_eos_token_id=0, max_length=20, num_beams=4,
                                               pad_token_id=pad)
    model.save_pretrained(out_dir)
    tokenizer = transformers.MarianTokenizer.from_pretrained(out_dir)
    sources = SOURCES + [">>fra<< Hello world", ">>deu<< The quick brown fox."]
    cases = generate_cases(model, tokenizer, sources, [{"num_beams": 1}, {"num_beams": 4}])
    shutil.rmtree(work)
    return model, cases


def weight_variants(model, out_dir):
    """The same weights as the other files save_pretrained and torch.save write: a
    pytorch_model.bin (zip, and the legacy pre-1.6 stream), and sharded safetensors."""
    os.makedirs(out_dir, exist_ok=True)
    state = model.state_dict()
    state = {k: v for k, v in state.items() if "embed_positions" not in k}  # as save_pretrained leaves them out
    torch.save(state, os.path.join(out_dir, "pytorch_model.bin"))
    torch.save(state, os.path.join(out_dir, "legacy_pytorch_model.bin"), _use_new_zipfile_serialization=False)
    shards = tempfile.mkdtemp()
    model.save_pretrained(shards, max_shard_size="24KB")
    os.makedirs(os.path.join(out_dir, "sharded"), exist_ok=True)
    for f in os.listdir(shards):
        if f.startswith("model") and (f.endswith(".safetensors") or f.endswith(".index.json")):
            shutil.copy(os.path.join(shards, f), os.path.join(out_dir, "sharded", f))
    shutil.rmtree(shards)
    # A hostile file: unpickling it with pickle would run a shell command.
    torch.save({"model.shared.weight": Hostile()}, os.path.join(out_dir, "hostile_pytorch_model.bin"))


class Hostile:
    def __reduce__(self):
        return (os.system, ("echo attend must never run this",))


FAMILIES = {"marian": marian}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    for name in args.families.split(","):
        d = os.path.join(args.out, name)
        if os.path.exists(d):
            shutil.rmtree(d)
        model, cases = FAMILIES[name](d, args.seed)
        if name == "marian":
            weight_variants(model, os.path.join(args.out, "marian-weights"))
        with open(os.path.join(d, "cases.jsonl"), "w") as f:
            for c in cases:
                f.write(json.dumps(c, ensure_ascii=False) + "\n")
        print(name, "->", d, len(cases), "cases", "transformers", transformers.__version__)


if __name__ == "__main__":
    main()
