#!/usr/bin/env python3
"""Writes the encoder-only test fixtures: small random models of each architecture attend
runs, saved by `transformers` / sentence-transformers exactly as users' directories are,
with the libraries' own outputs beside them (cases.json). CI never runs this (it needs
torch); the fixtures are committed. Run from anywhere with a venv holding torch,
transformers, sentence-transformers and ctranslate2:

    python tests/data/encoders/make_fixtures.py [OUT_DIR]
    python tests/data/encoders/make_fixtures.py --issue29   # only the fixtures issue 29 added

Each fixture directory holds the model as saved, and cases.json:
  {"cases": [{"ids": [...], "types": [...], "text": ... (or "pair": [a, b]),
              "last_hidden_state": [[...]], "pooler_output": [...], "logits": [...],
              "embedding": [...]}, ...]}
(only the outputs that model has). Values are float32 written with 9 significant digits.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np
import torch
import transformers as tf

OUT = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(19)
rng = np.random.default_rng(19)

WORDS = ("the quick brown fox jumps over lazy dog a an and or not is was be to of in on at by for with from "
         "hello world sentence embedding search rank query document model attend token text good bad "
         "un ##able ##ing ##ed ##s café naïve über 東 京 ! ? . , ' - ( )").split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TEXTS = ["Hello world!", "The quick brown fox jumps over the lazy dog.", "", "   ", "unable attending token texts",
         "Café naïve über 東京 search?", "a " * 40]
PAIRS = [("what is a model?", "a model is a good text embedding"), ("hello", "the lazy dog"), ("", "document")]


def vocab_file(path):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(SPECIALS + WORDS) + "\n")


def bert_tokenizer(directory):
    os.makedirs(directory, exist_ok=True)
    vocab = os.path.join(directory, "vocab.txt")
    vocab_file(vocab)
    # tokenizers' own BERT pipeline (BertNormalizer lowercasing, BertPreTokenizer,
    # WordPiece, the [CLS] A [SEP] B [SEP] template), wrapped as transformers saves it.
    from tokenizers.implementations import BertWordPieceTokenizer
    wordpiece = BertWordPieceTokenizer(vocab, lowercase=True)
    return tf.PreTrainedTokenizerFast(tokenizer_object=wordpiece._tokenizer, unk_token="[UNK]", cls_token="[CLS]",
                                      sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]",
                                      model_input_names=["input_ids", "token_type_ids", "attention_mask"])


def floats(a):
    return np.asarray(a, dtype=np.float32).round(9).tolist() if False else [float("%.9g" % x) for x in np.asarray(a, dtype=np.float32).ravel()]


def matrix(a):
    a = np.asarray(a, dtype=np.float32)
    return [floats(row) for row in a]


def random_ids(vocab, n, cls, sep):
    return [cls] + [int(x) for x in rng.integers(5, vocab, n - 2)] + [sep]


def id_cases(model, vocab, cls, sep, types_kinds, lengths=(2, 3, 9, 17, 30)):
    cases = []
    for n in lengths:
        ids = random_ids(vocab, n, cls, sep)
        types = [0] * n if types_kinds <= 1 else [0] * (n // 2) + [1] * (n - n // 2)
        cases.append({"ids": ids, "types": types})
    return cases


@torch.no_grad()
def run_cases(model, cases, has_types):
    model.eval()
    for c in cases:
        ids = torch.tensor([c["ids"]])
        kwargs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        if has_types:
            kwargs["token_type_ids"] = torch.tensor([c["types"]])
        out = model(**kwargs)
        if hasattr(out, "logits"):
            c["logits"] = floats(out.logits[0])
            base = getattr(model, model.base_model_prefix)
            out = base(**kwargs)
        c["last_hidden_state"] = matrix(out.last_hidden_state[0])
        if getattr(out, "pooler_output", None) is not None:
            c["pooler_output"] = floats(out.pooler_output[0])
    return cases


def save(directory, model, cases, tokenizer=None, dtype=None):
    os.makedirs(directory, exist_ok=True)
    m = model if dtype is None else model.to(dtype)
    m.save_pretrained(directory, safe_serialization=True)
    if tokenizer is not None:
        tokenizer.save_pretrained(directory)
    with open(os.path.join(directory, "cases.json"), "w") as f:
        json.dump({"cases": cases}, f)


def small(config_class, **kw):
    return config_class(**kw)


def bert_config(**kw):
    base = dict(vocab_size=len(SPECIALS) + len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=64, type_vocab_size=2, hidden_act="gelu",
                layer_norm_eps=1e-12, pad_token_id=0)
    base.update(kw)
    return tf.BertConfig(**base)


def text_cases(tokenizer, texts=TEXTS, pairs=()):
    cases = []
    for t in texts:
        e = tokenizer(t)
        cases.append({"text": t, "ids": e["input_ids"], "types": e.get("token_type_ids", [0] * len(e["input_ids"]))})
    for a, b in pairs:
        e = tokenizer(a, b)
        cases.append({"pair": [a, b], "ids": e["input_ids"], "types": e["token_type_ids"]})
    return cases


def rename_safetensors(path, rename):
    """Rewrites a safetensors file with renamed tensors (legacy names)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header = {(k if k == "__metadata__" else rename(k)): v for k, v in header.items()}
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(data)


def main():
    if os.path.exists(OUT):
        for name in os.listdir(OUT):
            if os.path.isdir(os.path.join(OUT, name)):
                shutil.rmtree(os.path.join(OUT, name))
    V = len(SPECIALS) + len(WORDS)

    # BertModel (gelu = erf), token types, a pooler; text cases through its WordPiece tokenizer.
    d = os.path.join(OUT, "bert")
    tok = bert_tokenizer(d)
    model = tf.BertModel(bert_config())
    cases = run_cases(model, text_cases(tok, pairs=PAIRS) + id_cases(model, V, 2, 3, 2), True)
    save(d, model, cases, tok)
    # The same weights stored as float16 and bfloat16; outputs of the rounded weights.
    for name, dtype in (("bert-fp16", torch.float16), ("bert-bf16", torch.bfloat16)):
        rounded = tf.BertModel(bert_config())
        rounded.load_state_dict({k: v.to(dtype).float() for k, v in model.state_dict().items()})
        cases = run_cases(rounded, id_cases(rounded, V, 2, 3, 2), True)
        save(os.path.join(OUT, name), rounded, cases, dtype=dtype)
    # Legacy names: a bert. prefix and LayerNorm gamma/beta.
    legacy = os.path.join(OUT, "bert-legacy")
    shutil.copytree(d, legacy)
    rename_safetensors(os.path.join(legacy, "model.safetensors"),
                       lambda k: "bert." + k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"))

    # gelu_new (tanh), a longer FFN.
    model = tf.BertModel(bert_config(hidden_act="gelu_new", intermediate_size=96))
    save(os.path.join(OUT, "bert-gelu-tanh"), model, run_cases(model, id_cases(model, V, 2, 3, 2), True))

    # RoBERTa and XLM-RoBERTa: positions from padding_idx + 1, one token type, no pooler in heads.
    for name, cls in (("roberta", tf.RobertaModel), ("xlm-roberta", tf.XLMRobertaModel)):
        config_class = tf.RobertaConfig if name == "roberta" else tf.XLMRobertaConfig
        config = config_class(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                              max_position_embeddings=66, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2)
        model = cls(config)
        save(os.path.join(OUT, name), model, run_cases(model, id_cases(model, V, 0, 2, 1), True))

    # DistilBERT: its own names, no token types.
    dcfg = tf.DistilBertConfig(vocab_size=V, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64)
    d = os.path.join(OUT, "distilbert")
    tok = bert_tokenizer(d)
    model = tf.DistilBertModel(dcfg)
    cases = [{"ids": c["ids"]} for c in text_cases(tok)] + [{"ids": c["ids"]} for c in id_cases(model, V, 2, 3, 1)]
    save(d, model, run_cases(model, cases, False), tok)

    # Classifiers: BERT (pooler → classifier) with 3 labels; a BERT cross-encoder (one
    # logit) reading pairs with token types; XLM-R (dense, tanh, out_proj); DistilBERT
    # (pre_classifier, ReLU, classifier).
    d = os.path.join(OUT, "bert-classifier")
    tok = bert_tokenizer(d)
    model = tf.BertForSequenceClassification(bert_config(num_labels=3, id2label={0: "negative", 1: "neutral", 2: "positive"},
                                                         label2id={"negative": 0, "neutral": 1, "positive": 2}))
    save(d, model, run_cases(model, text_cases(tok), True), tok)
    d = os.path.join(OUT, "bert-cross-encoder")
    tok = bert_tokenizer(d)
    model = tf.BertForSequenceClassification(bert_config(num_labels=1))
    save(d, model, run_cases(model, text_cases(tok, texts=[], pairs=PAIRS), True), tok)
    config = tf.XLMRobertaConfig(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                                 max_position_embeddings=66, type_vocab_size=1, pad_token_id=1, num_labels=2)
    model = tf.XLMRobertaForSequenceClassification(config)
    save(os.path.join(OUT, "xlm-roberta-classifier"), model, run_cases(model, id_cases(model, V, 0, 2, 1), True))
    d = os.path.join(OUT, "distilbert-classifier")
    tok = bert_tokenizer(d)
    model = tf.DistilBertForSequenceClassification(tf.DistilBertConfig(vocab_size=V, dim=32, n_layers=2, n_heads=4,
                                                                       hidden_dim=64, max_position_embeddings=64, num_labels=2))
    cases = [{"ids": c["ids"]} for c in text_cases(tok)]
    save(d, model, run_cases(model, cases, False), tok)

    # sentence-transformers: BERT + Pooling (every mode at once, concatenated) + Dense
    # (tanh) + Normalize, and one with mean pooling, a max_seq_length, no Dense.
    from sentence_transformers import SentenceTransformer, models
    for name, modes, dense in (("st-all-poolings", dict(pooling_mode_cls_token=True, pooling_mode_max_tokens=True,
                                                        pooling_mode_mean_tokens=True, pooling_mode_mean_sqrt_len_tokens=True,
                                                        pooling_mode_weightedmean_tokens=True, pooling_mode_lasttoken=True), True),
                               ("st-mean", dict(pooling_mode_mean_tokens=True), False)):
        d = os.path.join(OUT, name)
        base_dir = os.path.join(OUT, name + "-base")
        tok = bert_tokenizer(base_dir)
        tf.BertModel(bert_config()).save_pretrained(base_dir, safe_serialization=True)
        tok.save_pretrained(base_dir)
        transformer = models.Transformer(base_dir, max_seq_length=12)
        pooling = models.Pooling(32, **modes)
        modules = [transformer, pooling]
        if dense:
            modules.append(models.Dense(pooling.get_sentence_embedding_dimension(), 16, activation_function=torch.nn.Tanh()))
        modules.append(models.Normalize())
        st = SentenceTransformer(modules=modules, device="cpu")
        st.save(d, safe_serialization=True)
        shutil.rmtree(base_dir)
        st = SentenceTransformer(d, device="cpu")
        embeddings = st.encode(TEXTS, convert_to_numpy=True)
        cases = []
        for t, e in zip(TEXTS, embeddings):
            ids = st.tokenize([t])["input_ids"][0].tolist()
            cases.append({"text": t, "ids": ids, "embedding": floats(e)})
        with open(os.path.join(d, "cases.json"), "w") as f:
            json.dump({"cases": cases}, f)

    # CTranslate2's converted encoder (TransformerEncoderSpec) of the BERT fixture, and
    # its Encoder's own outputs.
    try:
        import ctranslate2
        from ctranslate2.converters import TransformersConverter
        d = os.path.join(OUT, "ct2-bert")
        # CTranslate2 4.8's converter asserts a field transformers 5 no longer has.
        tf.BertConfig.position_embedding_type = "absolute"
        TransformersConverter(os.path.join(OUT, "bert")).convert(d, force=True)
        encoder = ctranslate2.Encoder(d, device="cpu")
        with open(os.path.join(OUT, "bert", "cases.json")) as f:
            bert_cases = json.load(f)["cases"]
        cases = []
        for c in bert_cases:
            out = encoder.forward_batch([c["ids"]], token_type_ids=[c["types"]])
            cases.append({"ids": c["ids"], "types": c["types"], "last_hidden_state": matrix(np.array(out.last_hidden_state)[0]),
                          "pooler_output": floats(np.array(out.pooler_output)[0])})
        with open(os.path.join(d, "cases.json"), "w") as f:
            json.dump({"cases": cases}, f)
    except ImportError:
        print("ctranslate2 not installed: no ct2-bert fixture")


def roberta_tokenizer(directory):
    """A byte-level BPE tokenizer trained here, wrapped as RoBERTa's (<s> A </s>, <pad> = 1)."""
    from tokenizers import ByteLevelBPETokenizer, processors
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([" ".join(WORDS)] * 20 + TEXTS, vocab_size=300, min_frequency=1, special_tokens=specials)
    bpe._tokenizer.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return tf.PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                      cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>",
                                      model_input_names=["input_ids", "attention_mask"])


PAD_TEXTS = ["hello <pad> world", "<pad> hello world", "the dog <pad>", "<pad>", "a <pad> <pad> good text <pad> model",
             "Hello world!", ""]


def issue29_fixtures():
    """RoBERTa with pad tokens inside texts (create_position_ids_from_input_ids) under
    sentence-transformers with prompts and a similarity function; DistilBERT pairs."""
    torch.manual_seed(29)
    from sentence_transformers import SentenceTransformer, models
    d = os.path.join(OUT, "st-roberta-prompts")
    shutil.rmtree(d, ignore_errors=True)
    base_dir = d + "-base"
    tok = roberta_tokenizer(base_dir)
    config = tf.RobertaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=64, max_position_embeddings=66, type_vocab_size=1, pad_token_id=1,
                              bos_token_id=0, eos_token_id=2)
    tf.RobertaModel(config).save_pretrained(base_dir, safe_serialization=True)
    tok.save_pretrained(base_dir)
    transformer = models.Transformer(base_dir, max_seq_length=24)
    st = SentenceTransformer(modules=[transformer, models.Pooling(32, pooling_mode_mean_tokens=True)], device="cpu",
                             prompts={"query": "query: ", "passage": "passage <pad> of: "}, default_prompt_name="query",
                             similarity_fn_name="euclidean")
    st.save(d, safe_serialization=True)
    shutil.rmtree(base_dir)
    st = SentenceTransformer(d, device="cpu")
    assert st.default_prompt_name == "query" and st.similarity_fn_name == "euclidean"
    texts = PAD_TEXTS + ["the quick brown fox jumps over the lazy dog " * 3]
    cases = []
    default = st.encode(texts, convert_to_numpy=True)
    passage = st.encode(texts, prompt_name="passage", convert_to_numpy=True)
    none = st.encode(texts, prompt="", convert_to_numpy=True)
    custom = st.encode(texts, prompt="search <pad>: ", convert_to_numpy=True)
    query = st.encode_query(texts, convert_to_numpy=True)
    document = st.encode_document(texts, convert_to_numpy=True)
    for i, t in enumerate(texts):
        cases.append({"text": t, "ids": st.tokenize(["query: " + t])["input_ids"][0].tolist(),
                      "no_prompt_ids": st.tokenize([t])["input_ids"][0].tolist(), "embedding": floats(default[i]),
                      "embedding_passage": floats(passage[i]), "embedding_no_prompt": floats(none[i]),
                      "embedding_search_pad": floats(custom[i]), "embedding_query": floats(query[i]),
                      "embedding_document": floats(document[i])})
    # Ids with pads inside, through the model alone (its own position ids).
    model = tf.RobertaModel.from_pretrained(d)
    id_cases = []
    for ids in ([0, 10, 1, 11, 2], [0, 1, 1, 12, 13, 1, 2], [1, 0, 14, 2], [0, 1], [0, 15, 16, 17, 2, 1, 1]):
        id_cases.append({"ids": ids})
    run_cases(model, id_cases, False)
    similarity = st.similarity(default, default).numpy()
    empty = st.encode([])
    with open(os.path.join(d, "cases.json"), "w") as f:
        json.dump({"cases": cases + id_cases, "similarity": matrix(similarity), "similarity_fn_name": st.similarity_fn_name,
                   "empty": {"shape": list(empty.shape), "dtype": str(empty.dtype)}}, f)

    # DistilBERT classifies pairs without token types (its tokenizer's types are not used).
    d = os.path.join(OUT, "distilbert-classifier")
    model = tf.DistilBertForSequenceClassification.from_pretrained(d)
    tok = tf.AutoTokenizer.from_pretrained(d)
    with open(os.path.join(d, "cases.json")) as f:
        cases = [c for c in json.load(f)["cases"] if "pair" not in c]
    pairs = []
    for a, b in PAIRS:
        e = tok(a, b)
        pairs.append({"pair": [a, b], "ids": e["input_ids"], "types": e["token_type_ids"]})
    for c in pairs:
        with torch.no_grad():
            ids = torch.tensor([c["ids"]])
            c["logits"] = floats(model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0])
    with open(os.path.join(d, "cases.json"), "w") as f:
        json.dump({"cases": cases + pairs}, f)


if __name__ == "__main__":
    if "--issue29" in sys.argv:  # only the fixtures issue 29 added, leaving the others as they are
        OUT = os.path.dirname(os.path.abspath(__file__))
        issue29_fixtures()
    else:
        main()
        issue29_fixtures()
