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
# Sources with <pad> tokens inside: M2M100/NLLB give a pad the position padding_idx and do
# not count it (create_position_ids_from_input_ids), so the tokens after it move back.
PAD_SOURCES = ["Hello <pad> world", "<pad>The quick brown fox.", "She sells <pad><pad> sea shells!"]


def train_spm(prefix, vocab_size, model_type_="unigram", **extra):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for _ in range(20):
            for line in CORPUS:
                f.write(line + "\n")
        path = f.name
    spm.SentencePieceTrainer.train(input=path, model_prefix=prefix, vocab_size=vocab_size, character_coverage=1.0,
                                   model_type=model_type_, minloglevel=2, hard_vocab_limit=False, **extra)
    os.unlink(path)
    return prefix + ".model"

# Text a tokenizer must cut as transformers' does: spaces of every kind, special and
# language tokens written in the text, normalisation (full width, ligatures, combining
# marks), zero-width characters, emoji, scripts outside the corpus.
HOSTILE = [
    "  leading and trailing  ", "multiple   spaces\tand\ttabs", "line\nbreak", "</s> inside</s>", "<unk><pad> <s>",
    "__fr__ written", "eng_Latn written fra_Latn", "<mask> here", "\u00a0no-break\u00a0space", "emoji 😀🙂👍🏽",
    "ｆｕｌｌ ｗｉｄｔｈ", "ﬁ ligature", "combining e\u0301 and é", "zero\u200bwidth", "日本語のテキスト", "Ünïcödé wörds",
    "x" * 60, "!!!???...", "a", " ",
]


def tokenizer_cases(tokenizer, lang_pairs, ids_to_decode):
    """[{source, source_lang, source_ids}] and [{ids, text}]: the tokenizer's own answers."""
    out = []
    for src in lang_pairs:
        if src:
            tokenizer.src_lang = src
        for s in HOSTILE:
            out.append({"source": s, "source_lang": src, "source_ids": tokenizer(s)["input_ids"]})
    for ids in ids_to_decode:
        out.append({"ids": ids, "text": tokenizer.decode(ids, skip_special_tokens=True)})
    return out


def randomize(model, gen, zero_rows=(), embed_std=0.7):
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
                p.normal_(0.0, embed_std, generator=gen)
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
                gen = model.generate(**enc, **setting, **(lang_kwargs or {}), return_dict_in_generate=True,
                                     output_scores=True)
            ids = gen.sequences[0].tolist()
            case = {"source": s, "source_ids": enc["input_ids"][0].tolist(), "settings": setting, "ids": ids,
                    "text": tokenizer.decode(ids, skip_special_tokens=True)}
            if getattr(gen, "sequences_scores", None) is not None:  # beam search: Σ log p / length^length_penalty
                case["score"] = gen.sequences_scores[0].item()
            out.append(case)
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

EMBED_STD = float(os.environ.get("EMBED_STD", "0.1"))
EOS_SCALE = float(os.environ.get("EOS_SCALE", "4"))  # pre-norm, tied: small rows, or every step repeats its input


def m2m100(out_dir, seed):
    """M2M100ForConditionalGeneration with M2M100Tokenizer: sentencepiece.bpe.model, vocab.json in
    fairseq's layout (<s> <pad> </s> <unk>, then the pieces in an order unlike the model's), the
    100 __xx__ language codes and 8 madeupwords after it; sinusoidal positions from padding_idx + 1
    (not stored), pre-norm with final layer norms, scale_embedding; decoding starts </s> and the
    target language is forced (forced_bos_token_id) as the model card's example does."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    work = tempfile.mkdtemp()
    model_file = train_spm(os.path.join(work, "spm"), 140, model_type_="bpe")
    sp = spm.SentencePieceProcessor(model_file=model_file)
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    pieces = [p for p in pieces if p not in ("<unk>", "<s>", "</s>")]
    rng.shuffle(pieces)
    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>"] + pieces)}
    os.makedirs(out_dir, exist_ok=True)
    shutil.copy(model_file, os.path.join(out_dir, "sentencepiece.bpe.model"))
    with open(os.path.join(out_dir, "vocab.json"), "w") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        codes = transformers.models.m2m_100.tokenization_m2m_100.FAIRSEQ_LANGUAGE_CODES["m2m100"]
        json.dump({"tokenizer_class": "M2M100Tokenizer", "model_max_length": 1024, "language_codes": "m2m100",
                   "num_madeup_words": 8, "src_lang": "en", "tgt_lang": "fr",
                   "additional_special_tokens": [f"__{c}__" for c in codes]}, f)  # as the hub's
    tokenizer = transformers.M2M100Tokenizer.from_pretrained(out_dir)
    rows = len(vocab) + 100 + 8  # as the hub's models: the language codes and madeupwords after vocab.json
    config = transformers.M2M100Config(
        vocab_size=rows, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        activation_function="relu", scale_embedding=True, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        decoder_start_token_id=2)
    model = transformers.M2M100ForConditionalGeneration(config).eval()
    with torch.no_grad():
        randomize(model, torch.Generator().manual_seed(seed), zero_rows=[1], embed_std=EMBED_STD)
        model.model.shared.weight[2] *= EOS_SCALE  # (tied) a wide </s> logit: some outputs end early
    model.generation_config = GenerationConfig(bos_token_id=0, decoder_start_token_id=2, early_stopping=True,
                                               eos_token_id=2, max_length=20, num_beams=4, pad_token_id=1)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    tokenizer = transformers.AutoTokenizer.from_pretrained(out_dir)
    cases = []
    for src, tgt in (("en", "fr"), ("de", "en")):
        tokenizer.src_lang = src
        forced = {"forced_bos_token_id": tokenizer.get_lang_id(tgt)}
        for c in generate_cases(model, tokenizer, SOURCES + PAD_SOURCES, [{"num_beams": 1}, {"num_beams": 4}], forced):
            c.update(source_lang=src, target_lang=tgt)
            cases.append(c)
    pad_output(model, tokenizer, out_dir + "-pad-output", seed)
    rng = random.Random(seed)
    decode = [[2, tokenizer.get_lang_id("fr")] + [rng.randrange(rows) for _ in range(12)] + [3, 2, 1] for _ in range(6)]
    write_jsonl(os.path.join(out_dir, "tokenizer_cases.jsonl"), tokenizer_cases(tokenizer, ["en", "de"], decode))
    shutil.rmtree(work)
    return model, cases


PAD_OUTPUT_SCALE = float(os.environ.get("PAD_OUTPUT_SCALE", "1.0"))


def pad_output(model, tokenizer, out_dir, seed, pad=1):
    """The M2M100 model with its own lm_head (tie_word_embeddings false) whose <pad> row is
    wide, so that generate() emits <pad> inside its outputs. With the cache each step is one
    token: create_position_ids_from_input_ids gives a generated pad the position padding_idx
    (the zero row) and the token after it padding_idx + 1 + its step, pads counted. Only
    config.json, generation_config.json, model.safetensors and cases.jsonl are written: the
    test puts the m2m100 tokenizer files beside them."""
    config = transformers.M2M100Config.from_dict({**model.config.to_dict(), "tie_word_embeddings": False})
    untied = transformers.M2M100ForConditionalGeneration(config).eval()
    with torch.no_grad():
        untied.model.load_state_dict(model.model.state_dict())
        head = model.model.shared.weight.clone()
        head[pad] = torch.randn(head.shape[1], generator=torch.Generator().manual_seed(seed)) * PAD_OUTPUT_SCALE
        untied.lm_head.weight.copy_(head)
    assert not torch.equal(untied.lm_head.weight, untied.model.shared.weight)
    untied.generation_config = model.generation_config
    os.makedirs(out_dir, exist_ok=True)
    untied.save_pretrained(out_dir)
    cases = []
    for src, tgt in (("en", "fr"), ("de", "en")):
        tokenizer.src_lang = src
        forced = {"forced_bos_token_id": tokenizer.get_lang_id(tgt)}
        for c in generate_cases(untied, tokenizer, SOURCES + PAD_SOURCES, [{"num_beams": 1}, {"num_beams": 4}], forced):
            c.update(source_lang=src, target_lang=tgt)
            cases.append(c)
    inside = sum(1 for c in cases if pad in c["ids"][1:-1])
    print("m2m100-pad-output:", inside, "of", len(cases), "outputs have <pad> inside")
    write_jsonl(os.path.join(out_dir, "cases.jsonl"), cases)


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def nllb(out_dir, seed, legacy=False):
    """NLLB-200 (M2M100ForConditionalGeneration) with NllbTokenizer: tokenizer.json converted by
    transformers from a BPE sentencepiece.bpe.model (fairseq's offset), the 202 language codes
    and <mask> added after the pieces; source [src_lang] X </s> (legacy_behaviour: X </s>
    [src_lang]); dropout-free, no scale_embedding as NLLB's config has it."""
    torch.manual_seed(seed)
    work = tempfile.mkdtemp()
    model_file = train_spm(os.path.join(work, "spm"), 150, model_type_="bpe")
    os.makedirs(out_dir, exist_ok=True)
    shutil.copy(model_file, os.path.join(out_dir, "sentencepiece.bpe.model"))
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "NllbTokenizer", "model_max_length": 1024, "src_lang": "eng_Latn",
                   "tgt_lang": "fra_Latn", "legacy_behaviour": legacy,
                   "additional_special_tokens": transformers.models.nllb.tokenization_nllb.FAIRSEQ_LANGUAGE_CODES}, f)
    tokenizer = transformers.NllbTokenizer.from_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    tokenizer = transformers.AutoTokenizer.from_pretrained(out_dir)
    rows = len(tokenizer)
    config = transformers.M2M100Config(
        vocab_size=rows, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        activation_function="relu", scale_embedding=True, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        decoder_start_token_id=2, architectures=["M2M100ForConditionalGeneration"])
    model = transformers.M2M100ForConditionalGeneration(config).eval()
    with torch.no_grad():
        randomize(model, torch.Generator().manual_seed(seed + 1), zero_rows=[1], embed_std=EMBED_STD)
        model.model.shared.weight[2] *= EOS_SCALE
    model.generation_config = GenerationConfig(bos_token_id=0, decoder_start_token_id=2, eos_token_id=2,
                                               max_length=20, pad_token_id=1)
    model.save_pretrained(out_dir)
    cases = []
    for src, tgt in (("eng_Latn", "fra_Latn"), ("deu_Latn", "eng_Latn")):
        tokenizer.src_lang = src
        forced = {"forced_bos_token_id": tokenizer.convert_tokens_to_ids(tgt)}
        for c in generate_cases(model, tokenizer, SOURCES + PAD_SOURCES, [{"num_beams": 1}, {"num_beams": 4}], forced):
            c.update(source_lang=src, target_lang=tgt)
            cases.append(c)
    rng = random.Random(seed)
    decode = [[2, tokenizer.convert_tokens_to_ids("fra_Latn")] + [rng.randrange(rows) for _ in range(12)] + [3, 2, 1]
              for _ in range(6)]
    write_jsonl(os.path.join(out_dir, "tokenizer_cases.jsonl"), tokenizer_cases(tokenizer, ["eng_Latn", "deu_Latn"], decode))
    if not legacy:  # the other placement of the source language, tokenizer files only
        legacy_dir = out_dir + "-legacy-tokenizer"
        os.makedirs(legacy_dir, exist_ok=True)
        for f in ("tokenizer.json", "tokenizer_config.json", "config.json"):
            shutil.copy(os.path.join(out_dir, f), legacy_dir)
        with open(os.path.join(legacy_dir, "tokenizer_config.json")) as f:
            tc = json.load(f)
        tc["legacy_behaviour"] = True
        with open(os.path.join(legacy_dir, "tokenizer_config.json"), "w") as f:
            json.dump(tc, f, ensure_ascii=False, indent=1)
        legacy_tok = transformers.AutoTokenizer.from_pretrained(legacy_dir)
        write_jsonl(os.path.join(legacy_dir, "tokenizer_cases.jsonl"), tokenizer_cases(legacy_tok, ["eng_Latn", "deu_Latn"], []))
        for f in ("tokenizer.json", "config.json"):  # the test puts tokenizer_config.json into a copy of nllb/
            os.unlink(os.path.join(legacy_dir, f))
    shutil.rmtree(work)
    return model, cases


def mbart50(out_dir, seed):
    """MBartForConditionalGeneration (mBART-50 many-to-many) with MBart50Tokenizer: tokenizer.json
    converted by transformers from a sentencepiece.bpe.model, the 52 language codes after the
    pieces; source [en_XX] X </s>; learned positions offset by 2, layernorm_embedding, pre-norm
    with final layer norms, final_logits_bias; forced_eos at the cap, the target language forced."""
    torch.manual_seed(seed)
    work = tempfile.mkdtemp()
    model_file = train_spm(os.path.join(work, "spm"), 150, model_type_="bpe")
    os.makedirs(out_dir, exist_ok=True)
    shutil.copy(model_file, os.path.join(out_dir, "sentencepiece.bpe.model"))
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "MBart50Tokenizer", "model_max_length": 1024, "src_lang": "en_XX",
                   "tgt_lang": "fr_XX"}, f)
    tokenizer = transformers.MBart50Tokenizer.from_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    os.unlink(os.path.join(out_dir, "sentencepiece.bpe.model"))  # attend reads tokenizer.json
    tokenizer = transformers.AutoTokenizer.from_pretrained(out_dir)
    rows = len(tokenizer)
    config = transformers.MBartConfig(
        vocab_size=rows, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        activation_function="gelu", scale_embedding=True, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        decoder_start_token_id=2, forced_eos_token_id=2)
    model = transformers.MBartForConditionalGeneration(config).eval()
    with torch.no_grad():
        randomize(model, torch.Generator().manual_seed(seed + 2), zero_rows=[1], embed_std=EMBED_STD)
        model.model.shared.weight[2] *= EOS_SCALE
        model.final_logits_bias.copy_(torch.randn(1, rows) * 0.5)
    model.generation_config = GenerationConfig(bos_token_id=0, decoder_start_token_id=2, early_stopping=True,
                                               eos_token_id=2, forced_eos_token_id=2, max_length=20, num_beams=4,
                                               pad_token_id=1)
    model.save_pretrained(out_dir)
    cases = []
    for src, tgt in (("en_XX", "fr_XX"), ("de_DE", "en_XX")):
        tokenizer.src_lang = src
        forced = {"forced_bos_token_id": tokenizer.convert_tokens_to_ids(tgt)}
        for c in generate_cases(model, tokenizer, SOURCES, [{"num_beams": 1}, {"num_beams": 4}], forced):
            c.update(source_lang=src, target_lang=tgt)
            cases.append(c)
    rng = random.Random(seed)
    decode = [[2, tokenizer.convert_tokens_to_ids("fr_XX")] + [rng.randrange(rows) for _ in range(12)] + [3, 2, 1]
              for _ in range(6)]
    write_jsonl(os.path.join(out_dir, "tokenizer_cases.jsonl"), tokenizer_cases(tokenizer, ["en_XX", "de_DE"], decode))
    shutil.rmtree(work)
    return model, cases


def t5(out_dir, seed, gated=True, tied=True):
    """T5ForConditionalGeneration (flan-t5 shape: gated-gelu, or t5 v1.0: relu) with T5Tokenizer:
    tokenizer.json converted by transformers from a unigram spiece.model, 100 extra_id sentinels;
    relative position buckets (bidirectional in the encoder, causal in the decoder, layer 0's
    shared), RMS norms, no attention scaling, tied output scaled by d_model^-0.5; decoding from pad."""
    torch.manual_seed(seed)
    work = tempfile.mkdtemp()
    model_file = train_spm(os.path.join(work, "spm"), 150, pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    os.makedirs(out_dir, exist_ok=True)
    shutil.copy(model_file, os.path.join(out_dir, "spiece.model"))
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "T5Tokenizer", "model_max_length": 512, "extra_ids": 100}, f)
    tokenizer = transformers.T5Tokenizer.from_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    os.unlink(os.path.join(out_dir, "spiece.model"))  # attend reads tokenizer.json
    tokenizer = transformers.AutoTokenizer.from_pretrained(out_dir)
    rows = len(tokenizer)
    config = transformers.T5Config(
        vocab_size=rows, d_model=16, d_kv=8, d_ff=32, num_layers=2, num_decoder_layers=2, num_heads=2,
        relative_attention_num_buckets=8, relative_attention_max_distance=20,
        feed_forward_proj="gated-gelu" if gated else "relu", tie_word_embeddings=tied, pad_token_id=0,
        eos_token_id=1, decoder_start_token_id=0)
    model = transformers.T5ForConditionalGeneration(config).eval()
    with torch.no_grad():
        randomize(model, torch.Generator().manual_seed(seed + 3), embed_std=1.0)
        for name, p in model.named_parameters():
            if "relative_attention_bias" in name:
                p.normal_(0.0, 1.0)
        model.shared.weight[1] *= 2.5  # a wide </s> row: some outputs end early
    model.generation_config = GenerationConfig(decoder_start_token_id=0, eos_token_id=1, pad_token_id=0,
                                               max_length=20, num_beams=4)
    model.save_pretrained(out_dir)
    if not tied:
        # As t5 v1.1 / flan-t5 / mT5 checkpoints: their own lm_head.weight, tie_word_embeddings
        # false (transformers 5 then keeps the stored head and does not scale the output).
        from safetensors.torch import load_file, save_file
        path = os.path.join(out_dir, "model.safetensors")
        state = load_file(path)
        state["lm_head.weight"] = torch.randn(state["shared.weight"].shape, generator=torch.Generator().manual_seed(seed)) * 0.7
        save_file(state, path, metadata={"format": "pt"})
        with open(os.path.join(out_dir, "config.json")) as f:
            c = json.load(f)
        c["tie_word_embeddings"] = False
        c.pop("scale_decoder_outputs", None)
        with open(os.path.join(out_dir, "config.json"), "w") as f:
            json.dump(c, f, indent=2)
        model = transformers.T5ForConditionalGeneration.from_pretrained(out_dir).eval()
        assert torch.equal(model.lm_head.weight, state["lm_head.weight"]) and not model.config.scale_decoder_outputs
    cases = generate_cases(model, tokenizer, SOURCES + ["translate English to German: The quick brown fox.",
                                                        "Sentinels <extra_id_0> and <extra_id_1> here"],
                           [{"num_beams": 1}, {"num_beams": 4}])
    rng = random.Random(seed)
    decode = [[0] + [rng.randrange(rows) for _ in range(12)] + [2, rows - 1, 1, 0] for _ in range(6)]
    write_jsonl(os.path.join(out_dir, "tokenizer_cases.jsonl"), tokenizer_cases(tokenizer, [""], decode))
    shutil.rmtree(work)
    return model, cases


EOS_ROW = float(os.environ.get("EOS_ROW", "1.5"))


def mt5_inner(out_dir, seed):
    """MT5ForConditionalGeneration whose attention is not d_model wide (as mT5-small's
    d_kv 64 × 6 heads = 384 ≠ 512): d_model 32, 4 heads of d_kv 12 (q, k, v [48, 32], o [32, 48]),
    gated-gelu, its own lm_head, no output scaling. The tokenizer is the t5 fixture's (made
    first): only config.json, generation_config.json, model.safetensors and cases.jsonl are
    written here; the test puts t5's tokenizer files beside them."""
    torch.manual_seed(seed)
    tokenizer = transformers.AutoTokenizer.from_pretrained(os.path.join(os.path.dirname(out_dir), "t5"))
    rows = len(tokenizer)
    config = transformers.MT5Config(
        vocab_size=rows, d_model=32, d_kv=12, d_ff=40, num_layers=2, num_decoder_layers=2, num_heads=4,
        relative_attention_num_buckets=8, relative_attention_max_distance=20, feed_forward_proj="gated-gelu",
        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    config.tie_word_embeddings = False  # as mT5's hub config (MT5Config's constructor forces True)
    model = transformers.MT5ForConditionalGeneration(config).eval()
    assert model.config.d_kv * model.config.num_heads != model.config.d_model
    with torch.no_grad():
        randomize(model, torch.Generator().manual_seed(seed + 5), embed_std=1.0)
        for name, p in model.named_parameters():
            if "relative_attention_bias" in name:
                p.normal_(0.0, 1.0)
        # Untied, transformers 5 gives each stack its own embed_tokens: one table, as mT5 has it.
        model.encoder.embed_tokens.weight.copy_(model.shared.weight)
        model.decoder.embed_tokens.weight.copy_(model.shared.weight)
        model.lm_head.weight[1] *= EOS_ROW  # a wider </s> row: some outputs end early
    assert not torch.equal(model.lm_head.weight, model.shared.weight)
    model.generation_config = GenerationConfig(decoder_start_token_id=0, eos_token_id=1, pad_token_id=0,
                                               max_length=20, num_beams=4)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir)
    # The oracle is the directory as transformers loads it: the stored lm_head, no scaling.
    head = model.lm_head.weight.clone()
    model = transformers.MT5ForConditionalGeneration.from_pretrained(out_dir).eval()
    assert torch.equal(model.lm_head.weight, head) and not torch.equal(model.lm_head.weight, model.shared.weight)
    return model, generate_cases(model, tokenizer, SOURCES + ["translate English to German: The quick brown fox.",
                                                              "Sentinels <extra_id_0> and <extra_id_1> here"],
                                 [{"num_beams": 1}, {"num_beams": 4}])


def marian_ct2(out_dir, seed):
    """The marian fixture (made first) converted by CTranslate2's own TransformersConverter:
    its vocabulary has neither <s> nor <pad> (Marian has no BOS; the decoder starts from a
    zero embedding) while config.json names bos_token "<s>". ct2_cases.jsonl: the tokens
    CTranslate2's Translator gives, greedy and beam 4, for token sources (some only <unk>)."""
    import ctranslate2
    hf_dir = os.path.join(os.path.dirname(out_dir), "marian")
    ctranslate2.converters.TransformersConverter(hf_dir).convert(out_dir, force=True)
    with open(os.path.join(out_dir, "shared_vocabulary.json")) as f:
        vocabulary = json.load(f)
    assert "<s>" not in vocabulary and "<pad>" not in vocabulary
    tokenizer = transformers.MarianTokenizer.from_pretrained(hf_dir)
    sources = [tokenizer.convert_ids_to_tokens(tokenizer(s)["input_ids"]) for s in SOURCES]
    sources += [["<unk>"], ["<unk>", "</s>"], [">>fra<<", "<unk>", "</s>"], ["\u2581Hello", "<unk>", "</s>"]]
    translator = ctranslate2.Translator(out_dir, device="cpu", intra_threads=1)
    cases = []
    for beams in (1, 4):
        results = translator.translate_batch(sources, beam_size=beams, max_decoding_length=24, return_scores=True)
        for source, r in zip(sources, results):
            cases.append({"source": source, "beam_size": beams, "tokens": r.hypotheses[0], "score": r.scores[0],
                          "ctranslate2": ctranslate2.__version__})
    write_jsonl(os.path.join(out_dir, "ct2_cases.jsonl"), cases)
    return None, []


def bart(out_dir, seed):
    """BartForConditionalGeneration (bart-large-cnn shape) with BartTokenizer: a byte-level BPE
    trained here (vocab.json + merges.txt, saved by transformers as tokenizer.json); post-norm,
    layernorm_embedding, learned positions offset by 2, no final norms, final_logits_bias;
    generate() with forced_bos_token_id <s>, forced_eos, no_repeat_ngram_size 3, length_penalty 2."""
    from tokenizers import ByteLevelBPETokenizer
    torch.manual_seed(seed)
    work = tempfile.mkdtemp()
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 20, vocab_size=400, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>"])
    bpe.save_model(work)
    tokenizer = transformers.BartTokenizer(vocab=os.path.join(work, "vocab.json"), merges=os.path.join(work, "merges.txt"))
    os.makedirs(out_dir, exist_ok=True)
    tokenizer.save_pretrained(out_dir)
    tokenizer = transformers.AutoTokenizer.from_pretrained(out_dir)
    rows = len(tokenizer)
    config = transformers.BartConfig(
        vocab_size=rows, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        activation_function="gelu", scale_embedding=False, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        decoder_start_token_id=2, forced_eos_token_id=2, forced_bos_token_id=0)
    model = transformers.BartForConditionalGeneration(config).eval()
    with torch.no_grad():
        randomize(model, torch.Generator().manual_seed(seed + 4), zero_rows=[1], embed_std=0.7)
        model.final_logits_bias.copy_(torch.randn(1, rows) * 0.5)
        model.final_logits_bias[0, 2] += 2.0
    model.generation_config = GenerationConfig(bos_token_id=0, decoder_start_token_id=2, early_stopping=True,
                                               eos_token_id=2, forced_bos_token_id=0, forced_eos_token_id=2,
                                               length_penalty=2.0, max_length=20, min_length=0, no_repeat_ngram_size=3,
                                               num_beams=4, pad_token_id=1)
    model.save_pretrained(out_dir)
    cases = generate_cases(model, tokenizer, SOURCES, [{"num_beams": 1}, {"num_beams": 4}])
    rng = random.Random(seed)
    decode = [[2, 0] + [rng.randrange(rows) for _ in range(12)] + [3, 2, 1] for _ in range(6)]
    write_jsonl(os.path.join(out_dir, "tokenizer_cases.jsonl"), tokenizer_cases(tokenizer, [""], decode))
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


FAMILIES = {"marian": marian, "m2m100": m2m100, "nllb": nllb, "mbart50": mbart50, "t5": t5,
            "bart": bart, "t5-relu-untied": lambda d, seed: t5(d, seed + 1, gated=False, tied=False),
            "mt5-inner-width": mt5_inner, "marian-ct2": marian_ct2}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    for name in args.families.split(","):
        d = os.path.join(args.out, name)
        for old in (d, d + "-legacy-tokenizer", d + "-pad-output"):
            if os.path.exists(old):
                shutil.rmtree(old)
        model, cases = FAMILIES[name](d, args.seed)
        if name == "marian":
            weight_variants(model, os.path.join(args.out, "marian-weights"))
        if not cases:
            print(name, "->", d)
            continue
        with open(os.path.join(d, "cases.jsonl"), "w") as f:
            for c in cases:
                f.write(json.dumps(c, ensure_ascii=False) + "\n")
        print(name, "->", d, len(cases), "cases", "transformers", transformers.__version__)


if __name__ == "__main__":
    main()
