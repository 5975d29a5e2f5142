"""attend.Encoder (CTranslate2's Encoder API) and attend.SentenceEncoder
(sentence-transformers' encode) on the committed fixtures of tests/data/encoders, whose
outputs transformers and sentence-transformers computed (make_fixtures.py); the tolerance
1e-4 is derived in tests/encoder/test_encoder_fixtures.cpp."""

import json
import threading
from pathlib import Path

import numpy as np
import pytest

import attend

ENCODERS = Path(__file__).resolve().parents[2] / "tests/data/encoders"


def cases(name):
    return json.loads((ENCODERS / name / "cases.json").read_text())["cases"]


def test_forward_batch_matches_ctranslate2_encoder():
    data = cases("ct2-bert")
    encoder = attend.Encoder(str(ENCODERS / "ct2-bert"), intra_threads=2)
    out = encoder.forward_batch([c["ids"] for c in data], token_type_ids=[c["types"] for c in data])
    assert isinstance(out.last_hidden_state, np.ndarray) and out.last_hidden_state.dtype == np.float32
    longest = max(len(c["ids"]) for c in data)
    assert out.last_hidden_state.shape == (len(data), longest, 32)
    for i, c in enumerate(data):
        n = len(c["ids"])
        np.testing.assert_allclose(out.last_hidden_state[i, :n], np.array(c["last_hidden_state"]), atol=1e-4)
        assert not out.last_hidden_state[i, n:].any()  # no padding computed: zeros
        np.testing.assert_allclose(out.pooler_output[i], c["pooler_output"], atol=1e-4)
    # Tokens through the vocabulary, and an id array with lengths, as CTranslate2 takes them.
    tokens = encoder.forward_batch([["[CLS]", "[SEP]"]])
    ids = encoder.forward_batch([[2, 3]])
    np.testing.assert_array_equal(tokens.last_hidden_state, ids.last_hidden_state)
    padded = encoder.forward_batch(np.array([[2, 3, 0, 0]], dtype=np.int32), lengths=[2])
    np.testing.assert_array_equal(padded.last_hidden_state, ids.last_hidden_state)
    with pytest.raises(ValueError, match="device"):
        attend.Encoder(str(ENCODERS / "ct2-bert"), device="cuda")
    with pytest.raises(ValueError, match="outside the vocabulary"):
        encoder.forward_batch([[2, 100000, 3]])


def test_sentence_encoder_gives_sentence_transformers_embeddings():
    data = cases("st-all-poolings")
    model = attend.SentenceEncoder(str(ENCODERS / "st-all-poolings"))
    assert model.get_sentence_embedding_dimension() == 16
    engine = model._engine
    got = engine.embed_ids([c["ids"] for c in data])
    assert got.shape == (len(data), 16) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.array([c["embedding"] for c in data]), atol=1e-4)
    sim = model.similarity(got, got)  # the model's similarity_fn_name: cosine
    np.testing.assert_allclose(np.diag(sim), 1, atol=1e-5)


def test_classifier_scores_and_labels():
    data = cases("bert-classifier")
    engine = attend._attend.Encoder(str(ENCODERS / "bert-classifier"))
    assert engine.encoder_info.labels == ["negative", "neutral", "positive"]
    logits, scores, labels = engine.classify_ids([c["ids"] for c in data], [c["types"] for c in data])
    np.testing.assert_allclose(logits, np.array([c["logits"] for c in data]), atol=1e-4)
    np.testing.assert_allclose(scores.sum(axis=1), 1, atol=1e-5)
    assert list(labels) == [int(np.argmax(c["logits"])) for c in data]


def test_threads_share_an_encoder():
    data = cases("bert")
    engine = attend._attend.Encoder(str(ENCODERS / "bert"), threads=2)
    ids = [c["ids"] for c in data]
    expected = engine.embed_ids(ids)
    results = [None] * 4

    def work(k):
        results[k] = engine.embed_ids(ids)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_allclose(r, expected, atol=1e-5)


def test_sentence_encoder_encodes_text_as_sentence_transformers():
    # Text through the model's tokenizer.json: the ids Hugging Face's tokenizers gave (the
    # fixtures store them), the empty and the blank text included, and their embeddings.
    data = cases("st-all-poolings")
    model = attend.SentenceEncoder(str(ENCODERS / "st-all-poolings"))
    texts = [c["text"] for c in data]
    assert [model.tokenize(t) for t in texts] == [c["ids"] for c in data]
    got = model.encode(texts)
    assert got.shape == (len(data), 16) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.array([c["embedding"] for c in data]), atol=1e-4)
    np.testing.assert_allclose(model.encode(texts[0]), got[0], atol=1e-6)  # alone: the GEMMs block their sums otherwise
    normalized = model.encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(np.linalg.norm(normalized, axis=1), 1, atol=1e-5)
    pairs = cases("bert-cross-encoder")
    engine = attend._attend.Encoder(str(ENCODERS / "bert-cross-encoder"))
    ids, types, tokens, truncated = engine.tokenize(pairs[0]["pair"][0], pairs[0]["pair"][1])
    assert (list(ids), list(types), truncated) == (pairs[0]["ids"], pairs[0]["types"], False)
    assert tokens[0] == "[CLS]" and tokens.count("[SEP]") == 2


def _float_rows(data, field):
    return np.array([c[field] for c in data], dtype=np.float32)


def test_sentence_encoder_prompts_and_similarity_as_sentence_transformers():
    # config_sentence_transformers.json: prompts {"query", "passage", "document"},
    # default_prompt_name "query", similarity_fn_name "euclidean" — the fixture holds
    # sentence-transformers' own embeddings for each way of choosing a prompt.
    path = str(ENCODERS / "st-roberta-prompts")
    full = json.loads((ENCODERS / "st-roberta-prompts" / "cases.json").read_text())
    data = [c for c in full["cases"] if "text" in c]
    texts = [c["text"] for c in data]
    model = attend.SentenceEncoder(path)
    assert model.prompts == {"query": "query: ", "passage": "passage <pad> of: ", "document": ""}
    assert model.default_prompt_name == "query" and model.similarity_fn_name == "euclidean"
    default = model.encode(texts)
    np.testing.assert_allclose(default, _float_rows(data, "embedding"), atol=1e-4)
    np.testing.assert_allclose(model.encode(texts, prompt_name="passage"), _float_rows(data, "embedding_passage"), atol=1e-4)
    np.testing.assert_allclose(model.encode(texts, "passage"), _float_rows(data, "embedding_passage"), atol=1e-4)
    np.testing.assert_allclose(model.encode(texts, prompt=""), _float_rows(data, "embedding_no_prompt"), atol=1e-4)
    np.testing.assert_allclose(model.encode(texts, prompt="search <pad>: ", prompt_name="passage"),
                               _float_rows(data, "embedding_search_pad"), atol=1e-4)
    np.testing.assert_allclose(model.encode_query(texts), _float_rows(data, "embedding_query"), atol=1e-4)
    np.testing.assert_allclose(model.encode_document(texts), _float_rows(data, "embedding_document"), atol=1e-4)
    np.testing.assert_allclose(model.encode(texts[0]), default[0], atol=1e-5)
    with pytest.raises(ValueError, match="Prompt name 'title' not found"):
        model.encode(texts, prompt_name="title")
    # similarity by the model's function (negated euclidean distance), as sentence-transformers.
    np.testing.assert_allclose(model.similarity(default, default), np.array(full["similarity"]), atol=1e-4)
    model.similarity_fn_name = "dot"
    np.testing.assert_allclose(model.similarity(default, default), default @ default.T, rtol=1e-6)
    model.similarity_fn_name = "manhattan"
    np.testing.assert_allclose(model.similarity(default[:2], default[:3])[1, 2], -np.abs(default[1] - default[2]).sum(),
                               rtol=1e-6)
    np.testing.assert_allclose(model.similarity_pairwise(default, default), 0, atol=1e-6)
    with pytest.raises(ValueError, match="similarity_fn_name"):
        model.similarity_fn_name = "jaccard"


def test_sentence_encoder_arguments_as_sentence_transformers():
    model = attend.SentenceEncoder(str(ENCODERS / "st-mean"))
    empty = model.encode([])  # sentence-transformers: np.array([]), float64, shape (0,)
    assert isinstance(empty, np.ndarray) and empty.shape == (0,) and empty.dtype == np.float64
    assert model.encode([], convert_to_numpy=False) == []
    with pytest.raises(TypeError, match="dict"):
        model.encode({"a": "b"})
    with pytest.raises(TypeError, match="int"):
        model.encode(7)
    with pytest.raises(TypeError, match=r"sentences\[1\]"):
        model.encode(["a", 3])
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        model.encode(["a"], batch_size=0)
    with pytest.raises(ValueError, match="device='cuda'"):
        model.encode(["a"], device="cuda")
    assert model.encode(["a"], device="cpu").shape == (1, 32)
    assert model.encode(("a", "b")).shape == (2, 32)
    assert model.encode(np.array(["a", "b"])).shape == (2, 32)
    assert model.encode(inputs=["a"]).shape == (1, 32)  # sentence-transformers 6's name


def test_encoder_forward_batch_as_ctranslate2():
    path = str(ENCODERS / "st-roberta-prompts")  # max_seq_length 24, 64 positions
    encoder = attend.Encoder(path)
    long = [0] + [10] * 58 + [2]
    assert encoder.forward_batch([long]).last_hidden_state.shape == (1, 60, 32)
    with pytest.raises(ValueError, match="more than max_length 40"):
        attend.Encoder(path, max_length=40).forward_batch([long])
    as_arrays = encoder.forward_batch([np.array([0, 10, 2], dtype=np.int64), np.array([0, 11, 12, 2])])
    as_lists = encoder.forward_batch([[0, 10, 2], [0, 11, 12, 2]])
    np.testing.assert_array_equal(as_arrays.last_hidden_state, as_lists.last_hidden_state)
    with pytest.raises(ValueError, match="lengths has 1 entries for a batch of 2"):
        encoder.forward_batch(np.array([[0, 10, 2], [0, 11, 2]]), lengths=[3])
    unknown = encoder.forward_batch([["<s>", "no-such-token", "</s>"]])
    known = encoder.forward_batch([["<s>", "<unk>", "</s>"]])
    np.testing.assert_array_equal(unknown.last_hidden_state, known.last_hidden_state)
    pooled = attend.Encoder(str(ENCODERS / "ct2-bert")).forward_batch([])
    assert pooled.pooler_output is not None and pooled.pooler_output.shape == (0, 32)
    assert attend.Encoder(str(ENCODERS / "distilbert")).forward_batch([]).pooler_output is None  # no pooler
