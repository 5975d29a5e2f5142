"""Every layer and head's attention from Python: translate_batch(..., return_attention="all")
and Translator.attention_heads, NumPy arrays equal to what `attend translate
--attention-all` writes, CTranslate2's `attention` unchanged beside them."""

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
        assert sorted(a.files) == sorted(b.files)
        for name in a.files:
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
