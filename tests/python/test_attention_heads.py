"""Every layer and head's attention from Python: translate_batch(..., return_attention="all")
and Translator.attention_heads, NumPy arrays equal to what `attend translate
--attention-all` writes, CTranslate2's `attention` unchanged beside them."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import attend

NAME = ["آ", "ت", "ش", "ي", "س", "و", "ن"]


@pytest.fixture(scope="module")
def translator(translit):
    return attend.Translator(str(translit), device="cpu", intra_threads=1)


def test_return_attention_all_gives_every_head_beside_ctranslate2s_attention(translator):
    plain = translator.translate_batch([NAME], beam_size=2, return_attention=True)[0]
    r = translator.translate_batch([NAME], beam_size=2, return_attention="all")[0]
    assert r.hypotheses == plain.hypotheses == [["a", "c", "h", "i", "s", "o", "n"]]
    assert r.attention == plain.attention and plain.attention_heads is None
    h = r.attention_heads
    assert isinstance(h, attend.AttentionHeads)
    assert h.source_tokens == NAME  # this model adds no BOS/EOS to sources
    assert h.target_tokens == ["a", "c", "h", "i", "s", "o", "n", "</s>"]
    assert h.decoder_input_tokens == ["<s>"] + h.target_tokens[:-1]
    assert h.encoder_self.shape == (6, 8, 7, 7) and h.decoder_self.shape == (6, 8, 8, 8) and h.cross.shape == (6, 8, 8, 7)
    assert h.cross.dtype == np.float32 and not h.cross.flags.writeable  # a view of the engine's result
    for w in (h.encoder_self, h.decoder_self, h.cross):
        assert (w >= 0).all() and np.allclose(w.sum(axis=-1), 1, atol=1e-5)
    assert not np.triu(h.decoder_self, k=1).any()
    # CTranslate2's attention is the last layer's first head (rows: the tokens, not the end token).
    np.testing.assert_allclose(h.cross[-1, 0, :7], np.array(r.attention[0]), atol=1e-5)
    assert translator.translate_batch([NAME], return_attention=True)[0].attention_heads is None


def test_attention_heads_along_a_given_target_and_saved_as_the_cli_writes(translator, translit, tmp_path, cli):
    reference = ["a", "t", "c", "h", "i", "s", "o", "n", "</s>"]  # not what the model says
    h = translator.attention_heads(NAME, reference)
    assert h.target_tokens == reference and h.cross.shape == (6, 8, 9, 7)
    ids = translator.attention_heads(translator.model.encode_tokens(NAME),
                                     np.array(translator.model.encode_tokens(reference, "target"), dtype=np.int64))
    np.testing.assert_array_equal(ids.cross, h.cross)

    # The translation's own output through attention_heads is return_attention="all"'s, and
    # the CLI's file for that line holds the same arrays.
    r = translator.translate_batch([NAME], beam_size=1, return_attention="all")[0].attention_heads
    own = translator.attention_heads(NAME, r.target_tokens)
    for kind in ("encoder_self", "decoder_self", "cross"):
        np.testing.assert_array_equal(getattr(own, kind), getattr(r, kind))
    (tmp_path / "in.txt").write_text(" ".join(NAME) + "\n", encoding="utf-8")
    subprocess.run([str(cli), "translate", "-m", str(translit), "-i", str(tmp_path / "in.txt"), "-q", "--input-format",
                    "tokens", "--attention-all", str(tmp_path / "cli.npz"), "--attention-lines", "0"], check=True,
                   capture_output=True)
    own.save(str(tmp_path / "python.npz"), 0)
    with np.load(tmp_path / "cli.npz") as a, np.load(tmp_path / "python.npz") as b:
        # The CLI adds the input line's text, for the page and the pictures to show.
        assert list(a["source_texts"]) == [" ".join(NAME)]
        assert sorted(set(a.files) - {"source_texts"}) == sorted(b.files)
        assert str(b["model"]) == str(translit)
        for name in b.files:
            np.testing.assert_allclose(a[name], b[name], atol=1e-6, err_msg=name) if a[name].dtype == np.float32 \
                else np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_attention_heads_errors_name_what_is_wrong(translator, tmp_path):
    with pytest.raises(ValueError, match="return_attention='some'"):
        translator.translate_batch([NAME], return_attention="some")
    with pytest.raises(ValueError, match="target token 1 has id 99999"):
        translator.attention_heads(translator.model.encode_tokens(NAME), [4, 99999])
    h = translator.attention_heads(NAME, ["a", "</s>"])
    with pytest.raises(OSError, match="cannot write the attention file .*/missing/x.npz"):
        h.save(str(tmp_path / "missing" / "x.npz"))


def test_an_encoder_only_models_self_attention():
    model = Path(__file__).resolve().parents[2] / "tests" / "data" / "encoders" / "st-mean"
    h = attend.Encoder(str(model)).attention_heads([2, 14, 15, 3])
    assert h.source_ids == [2, 14, 15, 3]
    assert h.encoder_self.shape[2:] == (4, 4) and np.allclose(h.encoder_self.sum(axis=-1), 1, atol=1e-5)
    assert h.decoder_self.shape == (0, 0, 0, 0) and h.cross.shape == (0, 0, 0, 0)  # no decoder


ENCODERS = Path(__file__).resolve().parents[2] / "tests" / "data" / "encoders"


def hf_encoding(model_dir, text, pair=None):
    """Hugging Face's own tokenizer on the directory's tokenizer.json: the oracle."""
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json")).encode(text, pair)


def test_encoder_attention_is_labelled_with_the_tokenizers_tokens(tmp_path):
    # Ids in: each labelled as tokenizer.json names it (decimal ids before, issue 30).
    model = ENCODERS / "bert"
    encoder = attend.Encoder(str(model))
    e = hf_encoding(model, "the quick brown fox jumps over the lazy dog")
    h = encoder.attention_heads(e.ids)
    assert h.source_tokens == e.tokens
    assert h.source_type_ids == [] and h.source_sequence_ids == [] and h.source_texts == []
    assert h.model == str(model)
    # Text in: the tokens, which text each came from (HF's sequence_ids, None as -1), the text.
    t = encoder.text_attention_heads("the quick brown fox jumps over the lazy dog")
    assert t.source_ids == e.ids and t.source_tokens == e.tokens
    assert t.source_sequence_ids == [-1 if s is None else s for s in e.sequence_ids]
    assert t.source_texts == ["the quick brown fox jumps over the lazy dog"]
    np.testing.assert_allclose(t.encoder_self, h.encoder_self, atol=1e-6)
    # SentenceEncoder: the same for its sentences.
    s = attend.SentenceEncoder(str(ENCODERS / "st-mean")).attention_heads("hello world")
    assert s.source_tokens == hf_encoding(ENCODERS / "st-mean", "hello world").tokens


def test_a_pairs_sentences_a_and_b_are_marked_and_saved(tmp_path):
    model = ENCODERS / "bert-cross-encoder"
    query, passage = "what is a model?", "a model is a good text embedding"
    e = hf_encoding(model, query, passage)
    h = attend.Encoder(str(model)).text_attention_heads(query, passage)
    assert h.source_ids == e.ids and h.source_tokens == e.tokens and h.source_type_ids == e.type_ids
    assert h.source_sequence_ids == [-1 if s is None else s for s in e.sequence_ids]
    assert 0 in h.source_sequence_ids and 1 in h.source_sequence_ids
    h.save(str(tmp_path / "pair.npz"), 3)
    with np.load(tmp_path / "pair.npz") as z:
        assert list(z["source_sequence_ids"]) == h.source_sequence_ids
        assert list(z["source_type_ids"]) == e.type_ids
        assert list(z["source_texts"]) == [query, passage] and str(z["model"]) == str(model)
        assert list(z["source_tokens"]) == e.tokens and int(z["line"]) == 3


def grown_encoder(source, directory, size):
    """The encoder fixture `source` (config.json, model.safetensors) copied to `directory`
    with its word embeddings grown to `size` rows (the new ones random): a fixture model
    that reads every id of a larger tokenizer's vocabulary."""
    import json
    import struct
    import sys

    sys.path.insert(0, str(ENCODERS.parents[2] / "tools"))
    import safetensors_writer

    with open(source / "model.safetensors", "rb") as f:
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
        data = f.read()
    tensors = {name: np.frombuffer(data[t["data_offsets"][0]:t["data_offsets"][1]], dtype="<f4").reshape(t["shape"])
               for name, t in header.items() if name != "__metadata__"}
    name = next(n for n in tensors if n.endswith("word_embeddings.weight"))
    grown = np.random.default_rng(3).standard_normal((size, tensors[name].shape[1])).astype(np.float32) * 0.02
    grown[:tensors[name].shape[0]] = tensors[name]
    tensors[name] = grown
    directory.mkdir()
    safetensors_writer.write(directory / "model.safetensors", tensors)
    config = json.loads((source / "config.json").read_text())
    config["vocab_size"] = size
    (directory / "config.json").write_text(json.dumps(config))
    return directory


def roberta_for_the_bpe_fixture(directory):
    """The RoBERTa fixture model grown to the byte-level BPE tokenizer fixture's vocabulary,
    with that tokenizer.json: a RoBERTa that reads text."""
    import json

    tokenizer = ENCODERS.parent / "tokenizers" / "roberta-bpe.json"
    vocab = json.loads(tokenizer.read_text(encoding="utf-8"))
    size = max(list(vocab["model"]["vocab"].values()) + [t["id"] for t in vocab["added_tokens"]]) + 1
    grown_encoder(ENCODERS / "roberta", directory, size)
    shutil.copy(tokenizer, directory / "tokenizer.json")
    return directory


def test_sequence_ids_of_a_roberta_pair_whose_type_ids_are_all_zero(tmp_path):
    # RoBERTa's post-processor gives every token type 0: only the sequence ids tell the
    # sentences apart (<s> A </s></s> B </s>).
    model = roberta_for_the_bpe_fixture(tmp_path / "roberta")
    e = hf_encoding(model, "Hello there, world", "a second text")
    assert set(e.type_ids) == {0}
    h = attend.Encoder(str(model)).text_attention_heads("Hello there, world", "a second text")
    assert h.source_ids == e.ids and h.source_tokens == e.tokens
    assert h.source_sequence_ids == [-1 if s is None else s for s in e.sequence_ids]
    assert h.source_sequence_ids.count(-1) == 4 and h.encoder_self.shape[2] == len(e.ids)


# Labels from every kind of tokenizer an encoder directory may carry (issue 30): a
# SentencePiece model (sentencepiece.bpe.model, no tokenizer.json), BERT's vocab.txt alone
# and a CTranslate2 encoder's vocabulary.json — each as its own oracle names the tokens.

def transformers_expected(name):
    """{text: transformers' encoding} of the single texts of the tokenizer fixtures' corpus
    (tests/data/tokenizers/expected, written by transformers from the fixture directory)."""
    import json

    expected = ENCODERS.parent / "tokenizers" / "expected"
    with open(expected / "cases.jsonl", encoding="utf-8") as c, open(expected / f"vocab-files-{name}.jsonl", encoding="utf-8") as e:
        pairs = [(json.loads(a), json.loads(b)) for a, b in zip(c, e)]
    return {case["a"]: encoding for case, encoding in pairs if set(case) == {"a"}}


def test_a_sentencepiece_encoders_attention_is_labelled_with_its_pieces(tmp_path):
    # XLM-R from sentencepiece.bpe.model alone: transformers' XLMRobertaTokenizer's pieces.
    fixture = ENCODERS.parent / "tokenizers" / "vocab-files" / "xlmr-unigram"
    expected = transformers_expected("xlmr-unigram")
    model = grown_encoder(ENCODERS / "xlm-roberta", tmp_path / "xlmr", max(max(e["ids"]) for e in expected.values()) + 1)
    for name in ("sentencepiece.bpe.model", "tokenizer_config.json"):
        shutil.copy(fixture / name, model / name)
    encoder = attend.Encoder(str(model))
    first, second = expected["user@example.org"], expected["İstanbul"]
    h = encoder.text_attention_heads("user@example.org")
    assert h.source_tokens == first["tokens"] and h.source_ids == first["ids"]
    assert h.source_sequence_ids == [-1] + [0] * (len(first["ids"]) - 2) + [-1]
    assert encoder.attention_heads(first["ids"]).source_tokens == first["tokens"]  # ids in: the same names
    # A pair as XLM-R's template joins them: <s> A </s></s> B </s>, sentence B marked by its sequence ids.
    a, b = first["tokens"][1:-1], second["tokens"][1:-1]
    p = encoder.text_attention_heads("user@example.org", "İstanbul")
    assert p.source_tokens == ["<s>", *a, "</s>", "</s>", *b, "</s>"]
    assert p.source_sequence_ids == [-1] + [0] * len(a) + [-1, -1] + [1] * len(b) + [-1]
    assert p.encoder_self.shape[2:] == (len(p.source_tokens),) * 2


def test_a_vocab_txt_encoders_attention_is_labelled_with_its_wordpieces(tmp_path):
    # BERT with vocab.txt only (no tokenizer.json): the tokens tokenizer.json of the same vocabulary gives.
    model = tmp_path / "bert-vocab"
    shutil.copytree(ENCODERS / "bert", model, ignore=shutil.ignore_patterns("tokenizer.json", "tokenizer_config.json"))
    text, pair = "The quick brown fox jumps over the lazy dog", "hello world"
    e = hf_encoding(ENCODERS / "bert", text, pair)
    h = attend.Encoder(str(model)).text_attention_heads(text, pair)
    assert h.source_tokens == e.tokens and h.source_ids == e.ids
    assert h.source_sequence_ids == [-1 if s is None else s for s in e.sequence_ids]
    assert attend.Encoder(str(model)).attention_heads(e.ids).source_tokens == e.tokens


def test_a_ctranslate2_encoders_attention_is_labelled_from_its_vocabulary():
    import json

    model = ENCODERS / "ct2-bert"
    vocabulary = json.loads((model / "vocabulary.json").read_text(encoding="utf-8"))
    ids = [2, 30, 5, 6, 7, 3]
    h = attend.Encoder(str(model)).attention_heads(ids)
    assert h.source_tokens == [vocabulary[i] for i in ids] and h.source_tokens[0] == "[CLS]"
