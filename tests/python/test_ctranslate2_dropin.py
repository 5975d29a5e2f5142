"""The CTranslate2 drop-in beyond CTranslate2's own test file (tests/ct2_suite): the file
APIs, vocabulary maps, loading from memory, logging, compute type names and
unload_model, each against CTranslate2 4.8.1 itself where it is installed (the oracle:
the same model, the same inputs, its outputs), else against attend's own translations."""

import io
import logging
import os
import random
import shutil
import subprocess
import sys
import threading
import time

import pytest

import attend
from conftest import arabic_letters, name_corpus

ctranslate2 = pytest.importorskip("ctranslate2", reason="ctranslate2==4.8.1 could not be installed from PyPI")

LATIN = list("abcdefghijklmnopqrstuvwxyz")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """120 made-up names, one character per token, a few empty lines."""
    path = tmp_path_factory.mktemp("dropin") / "names.txt"
    path.write_text("\n".join(name_corpus(120, seed=5)) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def both(translit):
    """attend's and CTranslate2's translators of the same model (float32 both)."""
    return attend.Translator(str(translit)), ctranslate2.Translator(str(translit))


def read_lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def assert_same_scored_lines(ours, theirs):
    """Line for line, word for word: numbers to 1e-4 (CTranslate2 prints six significant
    digits; a sum of float32 log-probabilities may round the other way), the rest equal."""
    assert len(ours) == len(theirs)
    for n, (a, b) in enumerate(zip(ours, theirs)):
        wa, wb = a.split(" "), b.split(" ")
        assert len(wa) == len(wb), (n, a, b)
        for x, y in zip(wa, wb):
            try:
                assert float(x) == pytest.approx(float(y), abs=1e-4), (n, a, b)
            except ValueError:
                assert x == y, (n, a, b)


# ---- translate_file, score_file ----

@pytest.mark.parametrize("options", [
    dict(),
    dict(beam_size=1, max_batch_size=7, read_batch_size=20),
    dict(beam_size=3, num_hypotheses=2, with_scores=True, batch_type="tokens", max_batch_size=40),
    dict(max_decoding_length=4, length_penalty=0.5, with_scores=True, max_batch_size=1),
])
def test_translate_file_writes_ctranslate2s_file_and_statistics(both, corpus, tmp_path, options):
    ours, theirs = both
    a, b = tmp_path / "attend.txt", tmp_path / "ct2.txt"
    stats_a = ours.translate_file(str(corpus), str(a), **options)
    stats_b = theirs.translate_file(str(corpus), str(b), **options)
    if options.get("with_scores"):
        assert_same_scored_lines(read_lines(a), read_lines(b))
    else:
        assert read_lines(a) == read_lines(b)
    assert (stats_a.num_examples, stats_a.num_tokens) == (stats_b.num_examples, stats_b.num_tokens) != (0, 0)
    assert isinstance(stats_a.total_time_in_ms, float) and stats_a.total_time_in_ms > 0


def test_translate_file_with_prefixes_and_tokenize_functions(both, tmp_path):
    ours, theirs = both
    rng = random.Random(3)
    letters = arabic_letters()
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 8))) for _ in range(60)]
    source, prefix = tmp_path / "source.txt", tmp_path / "prefix.txt"
    source.write_text("\n".join(words) + "\n", encoding="utf-8")
    prefix.write_text("\n".join("".join(rng.sample(LATIN, rng.randint(0, 2))) for _ in words) + "\n", encoding="utf-8")
    hooks = dict(source_tokenize_fn=list, target_tokenize_fn=lambda s: list(reversed(s)),
                 target_detokenize_fn=lambda tokens: "".join(tokens).upper())
    outputs = []
    for translator in both:
        out = tmp_path / f"out{len(outputs)}.txt"
        stats = translator.translate_file(str(source), str(out), str(prefix), beam_size=2, **hooks)
        outputs.append((read_lines(out), stats.num_tokens, stats.num_examples))
    assert outputs[0] == outputs[1]
    assert outputs[0][2] == 60


def test_score_file_writes_ctranslate2s_file(both, corpus, tmp_path):
    ours, theirs = both
    target = tmp_path / "target.txt"
    sources = read_lines(corpus)
    target.write_text("\n".join(" ".join(random.Random(i).sample(LATIN, len(h.split()) % 5))
                                for i, h in enumerate(sources)) + "\n", encoding="utf-8")
    for options in [dict(), dict(with_tokens_score=True, offset=1, max_batch_size=5, read_batch_size=9)]:
        a, b = tmp_path / "a.txt", tmp_path / "b.txt"
        stats_a = ours.score_file(str(corpus), str(target), str(a), **options)
        stats_b = theirs.score_file(str(corpus), str(target), str(b), **options)
        ours_lines, theirs_lines = read_lines(a), read_lines(b)
        if options.get("offset"):
            # An empty source is not run; CTranslate2 then forgets the offset (its
            # skip_scoring), attend applies it as to every other example.
            empty = [i for i, line in enumerate(sources) if not line]
            assert empty and all(ours_lines[i] == "0 |||  |||" and theirs_lines[i] == "0 ||| </s> ||| 0" for i in empty)
            ours_lines = [line for i, line in enumerate(ours_lines) if i not in empty]
            theirs_lines = [line for i, line in enumerate(theirs_lines) if i not in empty]
            stats_a.num_tokens += len(empty)
        assert_same_scored_lines(ours_lines, theirs_lines)
        assert (stats_a.num_examples, stats_a.num_tokens) == (stats_b.num_examples, stats_b.num_tokens)


def test_file_errors_name_the_file_and_keep_ctranslate2s_words(both, corpus, tmp_path):
    ours, _ = both
    with pytest.raises(RuntimeError, match=r"source_path.*nowhere\.txt.*Failed to open file"):
        ours.translate_file(str(tmp_path / "nowhere.txt"), str(tmp_path / "out.txt"))
    short = tmp_path / "short.txt"
    short.write_text("a\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    out.write_text("kept\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="target_path has less examples than source_path"):
        ours.translate_file(str(corpus), str(out), str(short))
    assert out.read_text(encoding="utf-8") == "kept\n"  # a failed call leaves the old file whole
    with pytest.raises(RuntimeError, match="source_path has less examples than target_path"):
        ours.score_file(str(short), str(corpus), str(out))
    bad = tmp_path / "bad.txt"
    bad.write_bytes("آ ت\n".encode() + b"\xff\xfe\n")
    with pytest.raises(ValueError, match=r"source_path '.*bad\.txt', line 2: not valid UTF-8"):
        ours.translate_file(str(bad), str(out))
    with pytest.raises(TypeError, match="source_tokenize_fn returned str for line 1"):
        ours.translate_file(str(corpus), str(out), source_tokenize_fn=str.strip, target_detokenize_fn="".join)
    with pytest.raises(ValueError, match="target_tokenize_fn is only used"):
        ours.translate_file(str(corpus), str(out), target_tokenize_fn=list)
    with pytest.raises(ValueError, match="read_batch_size"):
        ours.translate_file(str(corpus), str(out), read_batch_size=-1)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".attend-")]  # no temporary file left behind


def test_translate_file_samples_by_line_whatever_the_batches(translit, corpus, tmp_path):
    t = attend.Translator(str(translit))
    outputs = []
    for batch, read in [(1, 0), (8, 20), (64, 0)]:
        attend.set_random_seed(12)
        out = tmp_path / f"s{batch}.txt"
        t.translate_file(str(corpus), str(out), beam_size=1, sampling_topk=0, sampling_temperature=1.5,
                         max_batch_size=batch, read_batch_size=read)
        outputs.append(read_lines(out))
    assert outputs[0] == outputs[1] == outputs[2]
    assert len(set(outputs[0])) > 20


# ---- vocabulary maps (use_vmap) ----

def model_with_vmap(translit, directory, rules):
    shutil.copytree(translit, directory)
    (directory / "vmap.txt").write_text("".join(f"{key}\t{' '.join(values)}\n" for key, values in rules),
                                        encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def vmap_model(translit, tmp_path_factory):
    """A vocabulary map of unigrams and bigrams over the Arabic letters, each allowing a
    few Latin letters, and a few letters always allowed."""
    rng = random.Random(9)
    letters = arabic_letters()
    rules = [("", rng.sample(LATIN, 3))]
    rules += [(a, rng.sample(LATIN, rng.randint(1, 4))) for a in letters]
    rules += [(f"{rng.choice(letters)} {rng.choice(letters)}", rng.sample(LATIN, 2)) for _ in range(40)]
    return model_with_vmap(translit, tmp_path_factory.mktemp("vmap") / "model", rules)


@pytest.mark.parametrize("options", [dict(beam_size=1), dict(beam_size=4, num_hypotheses=2, return_scores=True),
                                     dict(beam_size=2, repetition_penalty=3, no_repeat_ngram_size=2)])
def test_use_vmap_gives_ctranslate2s_translations(vmap_model, options):
    ours, theirs = attend.Translator(str(vmap_model)), ctranslate2.Translator(str(vmap_model))
    sources = [line.split() for line in name_corpus(40, seed=21) if line]
    # One sentence per call: CTranslate2 gives a batch the union of its sentences'
    # candidates, attend each sentence its own (a result never depends on its batch).
    for source in sources:
        a = ours.translate_batch([source], use_vmap=True, **options)[0]
        b = theirs.translate_batch([source], use_vmap=True, **options)[0]
        assert a.hypotheses == b.hypotheses, source
        assert a.scores == pytest.approx(b.scores, abs=1e-4)
    restricted = ours.translate_batch(sources, use_vmap=True, beam_size=1)
    free = ours.translate_batch(sources, beam_size=1)
    assert restricted != free  # the map really restricts


def test_use_vmap_is_per_sentence_and_reaches_every_face(vmap_model, tmp_path, cli):
    t = attend.Translator(str(vmap_model))
    sources = [line.split() for line in name_corpus(40, seed=4) if line]
    alone = [t.translate_batch([s], use_vmap=True)[0].hypotheses for s in sources]
    together = [r.hypotheses for r in t.translate_batch(sources, use_vmap=True, max_batch_size=8)]
    assert together == alone  # a sentence's candidates are its own
    ids = [t.model.encode_tokens(s) for s in sources]
    assert [t.model.decode_tokens(r.hypotheses[0]) for r in t.translate_batch(ids, use_vmap=True)] == \
        [a[0] for a in alone]
    source = tmp_path / "source.txt"
    source.write_text("\n".join(" ".join(s) for s in sources) + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    t.translate_file(str(source), str(out), use_vmap=True)
    assert read_lines(out) == [" ".join(a[0]) for a in alone]
    cli_out = subprocess.run([str(cli), "translate", "-m", str(vmap_model), "-i", str(source), "-q", "--use-vmap",
                              "--beam", "2", "--input-format", "tokens"], check=True, capture_output=True,
                             text=True).stdout.split("\n")[:-1]
    assert cli_out == [" ".join(a[0]) for a in alone]
    assert t.info().vocabulary_map.startswith("vmap.txt (")


def test_use_vmap_without_a_map_is_refused_by_name(translit):
    t = attend.Translator(str(translit))
    with pytest.raises(ValueError, match="use_vmap.*vmap.txt"):
        t.translate_batch([["آ"]], use_vmap=True)


# ---- loading from memory (files=) ----

def test_files_in_memory_load_what_the_directory_loads(translit, corpus, tmp_path):
    files = {name: (translit / name).read_bytes() for name in os.listdir(translit)}
    from_memory = attend.Translator("no/such/directory", files=files)
    on_disk = attend.Translator(str(translit))
    sources = [line.split() for line in read_lines(corpus)]
    assert [r.hypotheses for r in from_memory.translate_batch(sources, beam_size=2)] == \
        [r.hypotheses for r in on_disk.translate_batch(sources, beam_size=2)]
    assert from_memory.info().directory == "no/such/directory"
    # Loaded again after unload_model from the same bytes, file-like objects read at once.
    handles = {name: io.BytesIO(content) for name, content in files.items()}
    t = attend.Translator("m", files=handles, compute_type="int8")
    for h in handles.values():
        h.close()
    t.unload_model()
    t.load_model()
    assert t.compute_type == "int8_float32"
    with pytest.raises(RuntimeError, match="no/such/directory: missing vocabulary"):
        attend.Translator("no/such/directory", files={k: v for k, v in files.items() if k != "target_vocabulary.txt"})
    with pytest.raises(TypeError, match="dictionary mapping file names"):
        attend.Translator("m", files=[("model.bin", b"")])
    with pytest.raises(TypeError, match="file-like or bytes"):
        attend.Translator("m", files={"model.bin": 3})
    with pytest.raises(RuntimeError, match="hold no model"):
        attend.Translator("m", files={})


# ---- logging, compute types, unload_model, module functions ----

def test_set_log_level_info_logs_each_load(translit):
    script = (
        "import logging, attend\n"
        f"attend.Translator({str(translit)!r})\n"
        "attend.set_log_level(logging.INFO)\n"
        "assert attend.get_log_level() == logging.INFO\n"
        f"attend.Translator({str(translit)!r}, compute_type='int8')\n"
        "attend.set_log_level(logging.WARNING)\n"
        f"attend.Translator({str(translit)!r})\n")
    err = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stderr
    lines = err.splitlines()
    assert lines[0] == f"[attend] [info] Loaded model {translit} on device cpu:0", err
    assert any(line.startswith("[attend] [info]  - Selected compute type: int8") for line in lines), err
    assert err.count("Loaded model") == 1  # warning (the default) logs nothing
    env = dict(os.environ, ATTEND_LOG_LEVEL="info")
    err = subprocess.run([sys.executable, "-c", f"import attend; attend.Translator({str(translit)!r})"], env=env,
                         check=True, capture_output=True, text=True).stderr
    assert "Loaded model" in err
    with pytest.raises(ValueError, match="not a valid logging level"):
        attend.set_log_level(7)
    assert attend.get_log_level() == logging.WARNING


def test_compute_type_names_are_ctranslate2s(translit):
    for asked, expected in [("default", "float32"), ("float32", "float32"), ("int8", "int8_float32"),
                            ("int8_float32", "int8_float32"), ({"cuda": "float16", "cpu": "int8"}, "int8_float32")]:
        assert attend.Translator(str(translit), compute_type=asked).compute_type == expected
        assert ctranslate2.Translator(str(translit), compute_type=asked).compute_type == expected
    for wrong in (["int8"], 8, {"cpu": 8}):
        with pytest.raises(TypeError, match="incompatible constructor arguments"):
            attend.Translator(str(translit), compute_type=wrong)
    with pytest.raises(ValueError, match="unknown compute type"):
        attend.Translator(str(translit), compute_type="float64")
    supported = attend.get_supported_compute_types("cpu")
    assert {"float32", "int8", "int8_float32"} <= supported
    assert supported <= ctranslate2.get_supported_compute_types("cpu") | {"bfloat16", "int8_bfloat16"}
    assert attend.get_cuda_device_count() == 0
    assert attend.contains_model(str(translit)) and not attend.contains_model(str(translit / "model.bin"))


def test_unload_model_keeps_the_model_while_calls_run_and_with_to_cpu(translit):
    t = attend.Translator(str(translit), inter_threads=1)
    source = [["آ", "ت", "ز", "م", "و", "ن"]]
    t.unload_model(to_cpu=True)
    assert t.model_is_loaded and t.translate_batch(source)[0].hypotheses[0] == list("atzmon")
    release = threading.Event()

    def hold(step):  # the first call waits on its first token until released; the others queue behind it
        release.wait()

    pending = [t.translate_batch(source, asynchronous=True, beam_size=1, callback=hold) for _ in range(4)]
    assert t.num_active_batches == 4  # queued or running, as CTranslate2 counts them
    deadline = time.monotonic() + 30
    while t.num_queued_batches != 3 and time.monotonic() < deadline:  # the first one reaches the worker
        time.sleep(0.01)
    assert (t.num_queued_batches, t.num_active_batches) == (3, 4)
    t.unload_model()
    assert t.model_is_loaded  # not while batches are in flight
    release.set()
    assert all(r.result().hypotheses[0] == list("atzmon") for call in pending for r in call)
    assert t.num_active_batches == 0
    t.unload_model()
    assert not t.model_is_loaded
    with pytest.raises(RuntimeError, match="unloaded"):
        t.translate_batch(source)


def test_asynchronous_value_errors_reach_result(translit):
    t = attend.Translator(str(translit))
    for kwargs, match in [(dict(min_decoding_length=10, max_decoding_length=5), "is greater than"),
                          (dict(beam_size=0), "beam_size"), (dict(batch_type="words"), "batch_type")]:
        pending = t.translate_batch([["آ"], ["ت"]], asynchronous=True, **kwargs)
        for r in pending * 2:
            with pytest.raises(ValueError, match=match):
                r.result()
        with pytest.raises(ValueError, match=match):
            t.translate_batch([["آ"]], **kwargs)
    with pytest.raises(TypeError):  # a wrong type still raises at the call, as CTranslate2's bindings do
        t.translate_batch([["آ"]], asynchronous=True, beam_size="2")


def test_reprs_are_ctranslate2s(translit):
    t = attend.Translator(str(translit))
    r = t.translate_batch([["آ", "ت"]], return_scores=True)[0]
    assert repr(r) == f"TranslationResult(hypotheses={r.hypotheses}, scores={r.scores}, attention=[], logits=[])"
    assert "attention_heads=" in repr(t.translate_batch([["آ", "ت"]], return_attention="all")[0])
    s = t.score_batch([["آ"]], [["a"]])[0]
    assert repr(s) == f"ScoringResult(tokens={s.tokens}, log_probs={s.log_probs})"
    assert repr(attend.ExecutionStats(3, 1, 2.5)) == "ExecutionStats(num_tokens=3, num_examples=1, total_time_in_ms=2.5)"
