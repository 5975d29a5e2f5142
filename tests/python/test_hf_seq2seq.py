"""A Hugging Face encoder-decoder directory as saved (tests/data/hf-seq2seq/marian, made by
tests/hf_seq2seq/make_hf_seq2seq_fixtures.py with transformers) through the Python faces:
attend.Translator(HF_DIR) with source_lang/target_lang, attend.Model's generate()
defaults and decoding_rules, and attend.ray.Translate — each against transformers'
generate() texts stored in cases.jsonl, and the Ray one against `attend translate`."""

import json

import pytest

import attend
import attend._attend as _attend
import attend.ray
from conftest import SOURCE, cli_translate

MARIAN = SOURCE / "tests/data/hf-seq2seq/marian"


def case(source: str, beams: int) -> dict:
    for line in (MARIAN / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        c = json.loads(line)
        if c["source"] == source and c["settings"]["num_beams"] == beams:
            return c
    raise KeyError(source)


# generation_config.json's defaults in translate_batch's (CTranslate2's) keywords.
GENERATE = dict(beam_size=4, max_decoding_length=19, min_decoding_length=0, suppress_sequences=[["<pad>"]])


def test_model_gives_generate_defaults_and_rules():
    model = _attend.Model.load(str(MARIAN))
    assert model.transformers_rules
    o = model.default_options()
    assert (o.beam_size, o.max_length, o.min_length) == (4, 19, 0)
    assert o.suppress_sequences == [["<pad>"]]
    assert not _attend.Model.load(str(MARIAN), decoding_rules="ctranslate2").transformers_rules
    with pytest.raises(ValueError, match="auto, transformers or ctranslate2"):
        _attend.Model.load(str(MARIAN), decoding_rules="fairseq")


def test_translator_target_lang_gives_generate_text():
    translator = attend.Translator(str(MARIAN), intra_threads=1)
    for source, code in (("Hello world", "fra"), ("The quick brown fox.", "deu")):
        c = case(f">>{code}<< {source}", 4)
        assert translator.model.encode_source(source, target_lang=code) == c["source_ids"]
        out = translator.translate_text([source], target_lang=code, **GENERATE)
        assert out[0].hypotheses[0] == c["text"]
    greedy = case("Hello world", 1)
    assert translator.translate_text(["Hello world"], **dict(GENERATE, beam_size=1))[0].hypotheses[0] == greedy["text"]


def test_translator_bad_languages_are_value_errors():
    translator = attend.Translator(str(MARIAN), intra_threads=1)
    with pytest.raises(ValueError, match="'xx' is not a target language.*deu, fra"):
        translator.translate_text(["Hello"], target_lang="xx")
    with pytest.raises(ValueError, match="takes no source language"):
        translator.translate_text(["Hello"], source_lang="en")
    with pytest.raises(ValueError, match="source_lang"):
        translator.translate_batch([["▁Hello"]], source_lang="en")
    with pytest.raises(ValueError, match="'xx' is not a target language"):
        translator.translate_batch([[5, 6, 0]], target_lang="xx")


def test_ray_translate_takes_languages_and_generate_defaults(tmp_path):
    lines = ["Hello world", "The quick brown fox."]
    translate = attend.ray.Translate(str(MARIAN), threads=1, options={"target_lang": "fra"})
    out = translate({"text": lines})["translation"]
    assert list(out)[0] == case(">>fra<< Hello world", 4)["text"]  # beam 4 from generation_config.json
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert list(out) == cli_translate(MARIAN, path, "--target-lang", "fra")
    args = attend.ray.parser().parse_args(["translate", "--address", "local", "-m", str(MARIAN), "-i", str(path),
                                           "-o", str(tmp_path), "--target-lang", "deu", "--beam", "1",
                                           "--decoding-rules", "transformers"])
    kwargs = attend.ray.translate_arguments(args)
    assert kwargs["options"]["target_lang"] == "deu" and kwargs["decoding_rules"] == "transformers"
    assert list(attend.ray.Translate(str(MARIAN), **kwargs)({"text": lines})["translation"]) == \
        cli_translate(MARIAN, path, "--target-lang", "deu", "--beam", "1")
    with pytest.raises(ValueError, match="source_lang"):
        attend.ray.Translate(str(MARIAN), options={"source_lang": ""})
