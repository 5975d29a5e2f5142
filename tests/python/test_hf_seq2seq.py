"""Hugging Face encoder-decoder directories as saved (tests/data/hf-seq2seq/: Marian, and
M2M100, NLLB-200, mBART-50, T5, mT5 (d_kv × heads ≠ d_model) and BART; made by
tests/hf_seq2seq/make_hf_seq2seq_fixtures.py with transformers) through the Python faces:
attend.Translator(HF_DIR) with source_lang/target_lang, attend.Model's generate()
defaults and decoding_rules, and attend.ray.Translate — each against transformers'
generate() texts stored in cases.jsonl, and the Ray one against `attend translate`."""

import importlib.util
import json
import shutil
from pathlib import Path

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


def family_directory(family: str, tmp_path: Path) -> Path:
    """The fixture's directory; mt5-inner-width (weights and cases only) gets the t5
    fixture's tokenizer files beside it, as the C++ test gives them."""
    data = SOURCE / "tests/data/hf-seq2seq"
    if family != "mt5-inner-width":
        return data / family
    directory = tmp_path / family
    shutil.copytree(data / "t5", directory)
    for f in ("config.json", "generation_config.json", "model.safetensors", "cases.jsonl"):
        shutil.copy(data / family / f, directory / f)
    return directory


# Without any keyword, attend.Translator on a Hugging Face directory decodes as generate()
# under its generation_config.json (num_beams 4 where it says so — CTranslate2's default is
# 2 —, max_length, min_length 0, bad_words_ids, no_repeat_ngram_size, length_penalty), not
# with CTranslate2's keyword defaults; a keyword given wins.
@pytest.mark.parametrize("family", ["marian", "m2m100", "nllb", "mbart50", "t5", "bart", "mt5-inner-width"])
def test_translator_defaults_are_the_directory_generation_config(family, tmp_path):
    directory = family_directory(family, tmp_path)
    translator = attend.Translator(str(directory), intra_threads=1)
    beams = translator.model.default_options().beam_size
    checked = 0
    for line in (directory / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        c = json.loads(line)
        langs = dict(source_lang=c.get("source_lang", ""), target_lang=c.get("target_lang", ""))
        if translator.model.is_empty_source(c["source_ids"]):
            continue
        if c["settings"]["num_beams"] == beams:
            assert translator.translate_text([c["source"]], **langs)[0].hypotheses[0] == c["text"], (family, c["source"])
            # translate_batch and translate_iterable on the ids: generate()'s, less its start token and </s>
            ids = c["ids"][1:-1] if c["ids"][-1] == translator.model.special_ids.eos else c["ids"][1:]
            target = dict(target_lang=langs["target_lang"])
            assert translator.translate_batch([c["source_ids"]], **target)[0].hypotheses[0] == ids, (family, c["source"])
            assert next(translator.translate_iterable([c["source_ids"]], **target)).hypotheses[0] == ids
        else:  # the other decoding of the case, asked for: the keyword wins
            out = translator.translate_text([c["source"]], beam_size=c["settings"]["num_beams"], **langs)
            assert out[0].hypotheses[0] == c["text"], (family, c["source"], c["settings"])
        checked += 1
    assert checked >= 10, checked


def test_generation_config_num_beams_is_not_ctranslate2s_default():
    """The test above would pass by chance if the fixtures' num_beams were CTranslate2's 2."""
    model = attend.Translator(str(MARIAN), intra_threads=1).model
    assert model.has_generation_defaults and model.default_options().beam_size == 4
    bart = attend.Translator(str(SOURCE / "tests/data/hf-seq2seq/bart"), intra_threads=1).model.default_options()
    assert (bart.beam_size, bart.no_repeat_ngram_size, bart.length_penalty, bart.min_length) == (4, 3, 2.0, 0)


MARIAN_CT2 = SOURCE / "tests/data/hf-seq2seq/marian-ct2"


def ct2_cases() -> list:
    return [json.loads(line) for line in (MARIAN_CT2 / "ct2_cases.jsonl").read_text(encoding="utf-8").splitlines()]


def test_ctranslate2_directory_keeps_ctranslate2_defaults():
    """A CTranslate2 directory (the marian fixture converted by CTranslate2 4.8.1, whose
    vocabulary lacks <s>): no generation defaults; translate_batch without keywords is
    translate_batch with CTranslate2's (beam_size 2, max_decoding_length 256,
    min_decoding_length 1), and with CTranslate2 4.8.1's outputs where the cases' options are asked."""
    translator = attend.Translator(str(MARIAN_CT2), intra_threads=1)
    assert not translator.model.has_generation_defaults and not translator.model.transformers_rules
    assert translator.model.special_ids.bos == -1
    sources = [c["source"] for c in ct2_cases() if c["beam_size"] == 1]
    ct2_defaults = dict(beam_size=2, max_decoding_length=256, min_decoding_length=1)
    assert [r.hypotheses for r in translator.translate_batch(sources)] == \
        [r.hypotheses for r in translator.translate_batch(sources, **ct2_defaults)]
    for c in ct2_cases():
        out = translator.translate_batch([c["source"]], beam_size=c["beam_size"], max_decoding_length=24, return_scores=True)
        assert out[0].hypotheses[0] == c["tokens"], c
        assert out[0].scores[0] == pytest.approx(c["score"], abs=1e-4)


@pytest.mark.needs_ctranslate2
@pytest.mark.parametrize("beam", [None, 1, 4])
def test_ctranslate2_converted_marian_gives_ctranslate2s_hypotheses(beam):
    """CTranslate2 itself on the same directory, each with its default beam (None: 2) or a beam
    given; max_decoding_length within the model's 64 positions (CTranslate2 fails past them)."""
    if importlib.util.find_spec("ctranslate2") is None:
        pytest.skip("ctranslate2 could not be installed from PyPI")
    import ctranslate2
    sources = [c["source"] for c in ct2_cases() if c["beam_size"] == 1]
    sources += [["<unk>", "<unk>"], ["\u2581world", "</s>"], [">>deu<<", "\u2581Hello", "\u2581world", "</s>"]]
    options = dict(max_decoding_length=40) if beam is None else dict(beam_size=beam, max_decoding_length=40)
    theirs = ctranslate2.Translator(str(MARIAN_CT2), intra_threads=1).translate_batch(sources, return_scores=True, **options)
    ours = attend.Translator(str(MARIAN_CT2), intra_threads=1).translate_batch(sources, return_scores=True, **options)
    assert [r.hypotheses for r in ours] == [r.hypotheses for r in theirs]
    for a, b in zip(ours, theirs):
        assert a.scores == pytest.approx(b.scores, abs=1e-4)
