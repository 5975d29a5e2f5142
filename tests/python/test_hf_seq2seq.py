"""Hugging Face encoder-decoder directories as saved (tests/data/hf-seq2seq/: Marian, and
M2M100, NLLB-200, mBART-50, T5 and BART; made by
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


# The other families, every stored generate() case: the languages as the model card's
# transformers example gives them (source_lang, and target_lang forced as the first token).
FAMILIES = ["m2m100", "nllb", "mbart50", "t5", "t5-relu-untied", "bart"]


def generate_kwargs(model, beams: int) -> dict:
    """generation_config.json's defaults (Model.default_options) as translate_text's keywords."""
    o = model.default_options()
    return dict(beam_size=beams, max_decoding_length=o.max_length, min_decoding_length=o.min_length,
                length_penalty=o.length_penalty, no_repeat_ngram_size=o.no_repeat_ngram_size,
                suppress_sequences=o.suppress_sequences or None, return_scores=True)


@pytest.mark.parametrize("family", FAMILIES)
def test_translator_gives_generate_text_for_each_family(family):
    directory = SOURCE / "tests/data/hf-seq2seq" / family
    translator = attend.Translator(str(directory), intra_threads=1)
    assert translator.model.transformers_rules
    checked = 0
    for line in (directory / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        c = json.loads(line)
        langs = dict(source_lang=c.get("source_lang", ""), target_lang=c.get("target_lang", ""))
        ids = translator.model.encode_source(c["source"], **langs)
        assert ids == c["source_ids"], (family, c["source"])
        if translator.model.is_empty_source(ids):
            continue  # an empty line in, an empty line out
        out = translator.translate_text([c["source"]], **langs, **generate_kwargs(translator.model, c["settings"]["num_beams"]))
        assert out[0].hypotheses[0] == c["text"], (family, c["source"], c["settings"], langs)
        if "score" in c:  # beam search: generate()'s sequences_scores (the forced language counts log p 0)
            assert out[0].scores[0] == pytest.approx(c["score"], abs=2e-4), (family, c["source"])
        checked += 1
    assert checked >= 10, checked


def test_translator_language_errors_name_the_codes():
    translator = attend.Translator(str(SOURCE / "tests/data/hf-seq2seq/nllb"), intra_threads=1)
    with pytest.raises(ValueError, match="'xx_Yyyy' is not a language of this model"):
        translator.translate_text(["Hello"], source_lang="eng_Latn", target_lang="xx_Yyyy")
    with pytest.raises(ValueError, match="'xx_Yyyy' is not a language of this model"):
        translator.translate_text(["Hello"], source_lang="xx_Yyyy", target_lang="fra_Latn")
    t5 = attend.Translator(str(SOURCE / "tests/data/hf-seq2seq/t5"), intra_threads=1)
    with pytest.raises(ValueError, match="has no language codes"):
        t5.translate_text(["Hello"], target_lang="fr")
