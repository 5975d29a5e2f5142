# CTranslate2 4.8.1's only Encoder test, test_transformers_encoder
# (python/tests/test_transformers.py at tag v4.8.1; MIT licence, see LICENSE here), with
# what needs the network replaced — and nothing else: upstream downloads bert-base-uncased
# and friends, runs them in transformers for the reference, and converts them with
# CTranslate2's TransformersConverter. Here the model is tests/data/encoders/ct2-bert,
# made by that same converter from the committed tests/data/encoders/bert
# (make_fixtures.py), and the reference is transformers' output for it, stored in its
# cases.json. The checks are upstream's: shapes, then last_hidden_state (masked) and
# pooler_output to 5 decimals. `ctranslate2.Encoder` is attend's (conftest.py); the
# same inputs through CTranslate2's own Encoder must give the same outputs.
import json
import os

import numpy as np
import pytest

import ctranslate2

ENCODERS = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "data", "encoders")


def _cases():
    with open(os.path.join(ENCODERS, "ct2-bert", "cases.json"), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    # Upstream encodes single sentences: token types all 0, as its tokenizer gives them.
    return [c for c in cases if not any(c["types"])]


def _padded(rows):
    longest = max(len(r) for r in rows)
    return np.array([r + [[0.0] * len(r[0])] * (longest - len(r)) for r in rows], dtype=np.float32)


@pytest.mark.parametrize("device", ["cpu"])
def test_transformers_encoder(tmp_dir, device):
    cases = _cases()
    assert len(cases) >= 5
    ids = [c["ids"] for c in cases]
    longest = max(len(i) for i in ids)
    mask = np.array([[[1.0]] * len(i) + [[0.0]] * (longest - len(i)) for i in ids], dtype=np.float32)
    ref_last_hidden_state = _padded([c["last_hidden_state"] for c in cases])
    ref_pooler_output = np.array([c["pooler_output"] for c in cases], dtype=np.float32)

    output_dir = os.path.join(ENCODERS, "ct2-bert")  # upstream: converter.convert(output_dir)

    encoder = ctranslate2.Encoder(output_dir, device=device)

    outputs = encoder.forward_batch(ids)

    last_hidden_state = _to_numpy(outputs.last_hidden_state, device)
    assert last_hidden_state.shape == ref_last_hidden_state.shape

    last_hidden_state *= mask
    ref_last_hidden_state *= mask
    np.testing.assert_array_almost_equal(last_hidden_state, ref_last_hidden_state, decimal=5)

    if ref_pooler_output is not None:
        pooler_output = _to_numpy(outputs.pooler_output, device)
        assert pooler_output.shape == ref_pooler_output.shape
        np.testing.assert_array_almost_equal(pooler_output, ref_pooler_output, decimal=5)

    # attend: CTranslate2's own Encoder on the same inputs, the oracle beside transformers.
    theirs = ctranslate2._ext.Encoder(output_dir, device=device).forward_batch(ids)
    np.testing.assert_allclose(_to_numpy(outputs.last_hidden_state, device) * mask,
                               np.array(theirs.last_hidden_state) * mask, atol=1e-5)
    np.testing.assert_allclose(_to_numpy(outputs.pooler_output, device), np.array(theirs.pooler_output), atol=1e-5)


def _to_numpy(storage, device):
    return np.array(storage)  # upstream: via torch for CUDA; attend is CPU only
