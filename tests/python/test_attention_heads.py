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


def roberta_for_the_bpe_fixture(directory):
    """The RoBERTa fixture model grown to the byte-level BPE tokenizer fixture's vocabulary
    (more embedding rows, random), with that tokenizer.json: a RoBERTa that reads text."""
    import json
    import struct
    import sys

    source, tokenizer = ENCODERS / "roberta", ENCODERS.parent / "tokenizers" / "roberta-bpe.json"
    sys.path.insert(0, str(ENCODERS.parents[2] / "tools"))
    import safetensors_writer

    with open(source / "model.safetensors", "rb") as f:
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
        data = f.read()
    tensors = {name: np.frombuffer(data[t["data_offsets"][0]:t["data_offsets"][1]], dtype="<f4").reshape(t["shape"])
               for name, t in header.items() if name != "__metadata__"}
    vocab = json.loads(tokenizer.read_text(encoding="utf-8"))
    size = max(list(vocab["model"]["vocab"].values()) + [t["id"] for t in vocab["added_tokens"]]) + 1
    name = next(n for n in tensors if n.endswith("word_embeddings.weight"))
    grown = np.random.default_rng(3).standard_normal((size, tensors[name].shape[1])).astype(np.float32) * 0.02
    grown[:tensors[name].shape[0]] = tensors[name]
    tensors[name] = grown
    directory.mkdir()
    safetensors_writer.write(directory / "model.safetensors", tensors)
    config = json.loads((source / "config.json").read_text())
    config["vocab_size"] = size
    (directory / "config.json").write_text(json.dumps(config))
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
