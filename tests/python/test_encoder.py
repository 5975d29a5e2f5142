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
    sim = attend.SentenceEncoder.similarity(got, got)
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
