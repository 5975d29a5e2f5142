"""attend.Translator: CTranslate2's API, checked against `attend translate` on the real
transliteration model and against the C++ engine's own numbers."""

import itertools
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import attend
from conftest import cli_translate, name_corpus


@pytest.fixture(scope="module")
def translator(translit):
    return attend.Translator(str(translit), device="cpu", intra_threads=1)


@pytest.fixture(scope="module")
def names():
    return [line for line in name_corpus(300) if line]


def test_translate_batch_equals_the_cli_greedy_and_beam(translator, translit, names, tmp_path):
    source = tmp_path / "names.txt"
    source.write_text("\n".join(names) + "\n", encoding="utf-8")
    batch = [n.split() for n in names]
    for beam in (1, 4):
        expected = cli_translate(translit, source, "--input-format", "tokens", "--beam", str(beam), "--min-length", "1")
        results = translator.translate_batch(batch, beam_size=beam, max_batch_size=32)
        assert [" ".join(r.hypotheses[0]) for r in results] == expected


def test_results_have_ctranslate2s_shape_and_scores(translator):
    results = translator.translate_batch([["آ", "ت", "ز", "م", "و", "ن"]], return_scores=True)
    assert isinstance(results[0], attend.TranslationResult)
    assert results[0].hypotheses == [["a", "t", "z", "m", "o", "n"]]
    assert results[0].attention == [] and results[0].logits == []
    # CTranslate2's score: Σ log p / length^length_penalty, end token counted.
    scored = translator.score_batch([["آ", "ت", "ز", "م", "و", "ن"]], [["a", "t", "z", "m", "o", "n"]])[0]
    assert scored.tokens == ["a", "t", "z", "m", "o", "n", "</s>"]
    assert results[0].scores[0] == pytest.approx(sum(scored.log_probs) / 7, abs=1e-4)
    assert translator.translate_batch([["آ", "ت"]])[0].scores == []  # not asked for
    assert results[0][0]["tokens"] == ["a", "t", "z", "m", "o", "n"]


def test_n_best_and_length_penalty(translator):
    r = translator.translate_batch([["آ", "ت", "ز", "م", "و", "ن"]], beam_size=3, num_hypotheses=3,
                                   return_scores=True)[0]
    assert len(r.hypotheses) == 3 and r.scores == sorted(r.scores, reverse=True)
    assert len(set(map(tuple, r.hypotheses))) == 3


def test_ids_lists_and_numpy_arrays_give_the_same_hypotheses(translator, names):
    tokens = [n.split() for n in names[:20]]
    ids = [translator.model.encode_tokens(t) for t in tokens]
    by_tokens = [translator.model.encode_tokens(r.hypotheses[0], "target")
                 for r in translator.translate_batch(tokens, beam_size=1)]
    assert [r.hypotheses[0] for r in translator.translate_batch(ids, beam_size=1)] == by_tokens
    rows64 = [np.asarray(i, dtype=np.int64) for i in ids]
    assert [r.hypotheses[0] for r in translator.translate_batch(rows64, beam_size=1)] == by_tokens
    same_length = [i for i in ids if len(i) == len(ids[0])]
    matrix = np.asarray(same_length, dtype=np.int32)
    expected = [r.hypotheses[0] for r in translator.translate_batch(same_length, beam_size=1)]
    assert [r.hypotheses[0] for r in translator.translate_batch(matrix, beam_size=1)] == expected
    with pytest.raises(TypeError, match="integer"):
        translator.translate_batch(np.zeros((2, 3), dtype=np.float32))


def test_int32_arrays_are_read_in_place_and_every_layout_translates_alike(translator, names):
    ids = [translator.model.encode_tokens(n.split()) for n in names[:60]]
    same = [i for i in ids if len(i) == len(ids[0])]
    rows, width = len(same), len(same[0])
    expected = [r.hypotheses[0] for r in translator.translate_batch(same, beam_size=2)]
    wide = np.full((rows, width + 3), 9, dtype=np.int32)
    wide[:, :width] = same
    interleaved = np.zeros((rows, 2 * width), dtype=np.int32)
    interleaved[:, ::2] = same
    layouts = {  # array → read where it lies?
        "C order": (np.asarray(same, dtype=np.int32), True),
        "rows sliced out of a wider array": (wide[:, :width], True),
        "a list of 1-D arrays": ([np.asarray(i, dtype=np.int32) for i in same], True),
        "every other column": (interleaved[:, ::2], False),
        "Fortran order": (np.asfortranarray(np.asarray(same, dtype=np.int32)), False),
        "int64": (np.asarray(same, dtype=np.int64), False),
        "Python lists": (same, False),
    }
    for name, (batch, in_place) in layouts.items():
        assert attend.reads_in_place(batch) == in_place, name
        assert [r.hypotheses[0] for r in translator.translate_batch(batch, beam_size=2)] == expected, name
    with pytest.raises(ValueError, match=r"source\[0\]\[1\] = 4294967296 is outside the range of token ids"):
        translator.translate_batch(np.asarray([[5, 1 << 32]], dtype=np.int64))
    with pytest.raises(ValueError, match=r"source\[1\]: an id array in a list must have 1 dimension"):
        translator.translate_batch([np.asarray(same[0], dtype=np.int32), np.asarray(same, dtype=np.int32)])


def test_target_prefix_is_forced(translator):
    r = translator.translate_batch([["آ", "ت", "ز"], ["آ", "ت"]], target_prefix=[["b", "b"], None], beam_size=1)
    assert r[0].hypotheses[0][:2] == ["b", "b"]
    assert r[1].hypotheses[0] == translator.translate_batch([["آ", "ت"]], beam_size=1)[0].hypotheses[0]


def test_decoding_lengths_and_sampling(translator):
    src = [["آ", "ت", "ز", "م", "و", "ن"]]
    assert len(translator.translate_batch(src, max_decoding_length=3)[0].hypotheses[0]) == 3
    assert len(translator.translate_batch(src, min_decoding_length=9, max_decoding_length=9)[0].hypotheses[0]) == 9
    attend.set_random_seed(3)
    a = translator.translate_batch(src * 8, beam_size=1, sampling_topk=0, sampling_temperature=2.0)
    attend.set_random_seed(3)
    b = translator.translate_batch(src * 8, beam_size=1, sampling_topk=0, sampling_temperature=2.0)
    assert [r.hypotheses for r in a] == [r.hypotheses for r in b]  # seeded: reproducible
    assert len({tuple(r.hypotheses[0]) for r in a}) > 1  # …and really sampled
    with pytest.raises(ValueError, match="beam_size"):
        translator.translate_batch(src, sampling_topk=5)  # CTranslate2's beam sampling


def test_unsupported_arguments_raise_value_error_naming_them(translit, translator):
    src = [["آ", "ت"]]
    for kwargs, name in [({"return_logits_vocab": True}, "return_logits_vocab"), ({"use_vmap": True}, "use_vmap"),
                         ({"max_decoding_length": 0}, "max_decoding_length"), ({"batch_type": "words"}, "batch_type")]:
        with pytest.raises(ValueError, match=name):
            translator.translate_batch(src, **kwargs)
    for kwargs, name in [({"device": "cuda"}, "device"), ({"tensor_parallel": True}, "tensor_parallel"),
                         ({"device_index": 1}, "device_index")]:
        with pytest.raises(ValueError, match=name):
            attend.Translator(str(translit), **kwargs)
    # Every CTranslate2 decoding option reaches the engine: it works, or it is refused by name.
    for name, value in [("patience", 2.0), ("coverage_penalty", 0.2), ("repetition_penalty", 1.5),
                        ("no_repeat_ngram_size", 2), ("disable_unk", True), ("suppress_sequences", [["a"]]),
                        ("end_token", "n"), ("return_end_token", True), ("prefix_bias_beta", 0.5),
                        ("return_attention", True), ("return_alternatives", True), ("replace_unknowns", True),
                        ("min_alternative_expansion_prob", 0.1)]:
        try:
            translator.translate_batch(src, **{name: value})
        except ValueError as e:
            assert name in str(e)


def test_errors_name_what_and_where(translator):
    with pytest.raises(ValueError, match=r"sentence 1: source token 0 has id 5000"):
        translator.translate_batch([[5, 6], [5000]])
    with pytest.raises(RuntimeError, match="/nonexistent/model"):
        attend.Translator("/nonexistent/model")
    with pytest.raises(TypeError, match="list of token lists"):
        translator.translate_batch(["آ ت"])
    with pytest.raises(TypeError):
        translator.translate_batch([[1.5, 2.5]])


def test_score_batch_gives_the_translations_log_probs(translator, names):
    src = [n.split() for n in names[:30]]
    hyps = [r.hypotheses[0] for r in translator.translate_batch(src, beam_size=1)]
    scores = translator.score_batch(src, hyps)
    # min_decoding_length=0: log p's not renormalised at the first step, as scoring reads them.
    greedy = translator.translate_batch(src, beam_size=1, return_scores=True, min_decoding_length=0)
    for s, h, g in zip(scores, hyps, greedy):
        assert s.tokens == h + ["</s>"]
        assert all(lp <= 0 for lp in s.log_probs)
        assert sum(s.log_probs) / len(s.log_probs) == pytest.approx(g.scores[0], abs=1e-4)
    offset = translator.score_batch(src[:1], hyps[:1], offset=2)[0]
    assert offset.tokens == scores[0].tokens[2:]
    assert offset.log_probs == pytest.approx(scores[0].log_probs[2:], abs=1e-5)  # a batch of 1: other padding
    ids = translator.score_batch([translator.model.encode_tokens(src[0])],
                                 [translator.model.encode_tokens(hyps[0], "target")])[0]
    # A batch of 1 against one of 30: fp32 GEMMs sum a row's K products in an order that
    # follows its row tile (thin tiles split k over accumulators, kernels/gemm_microkernel.hpp),
    # so logits move by ~K·eps relative and log-probs by ≲ 1e-5 — as the offset check above.
    assert ids.log_probs == pytest.approx(scores[0].log_probs, abs=1e-5)
    streamed = list(translator.score_iterable(iter(src), iter(hyps), max_batch_size=4))
    assert [s.tokens for s in streamed] == [s.tokens for s in scores]


def test_generate_tokens_streams_the_greedy_translation(translator):
    src = ["آ", "ت", "ز", "م", "و", "ن"]
    steps = list(translator.generate_tokens(src, return_log_prob=True))
    assert [s.token for s in steps] == ["a", "t", "z", "m", "o", "n", "</s>"]
    assert [s.step for s in steps] == list(range(7))
    assert [s.is_last for s in steps] == [False] * 6 + [True]
    assert all(s.log_prob is not None and s.log_prob <= 0 for s in steps)
    assert next(iter(translator.generate_tokens(src))).log_prob is None
    # Closing the generator stops the decoding; the translator stays usable.
    generator = translator.generate_tokens(src, min_decoding_length=200, max_decoding_length=200)
    assert [s.step for s in itertools.islice(generator, 3)] == [0, 1, 2]
    generator.close()
    assert translator.translate_batch([src])[0].hypotheses[0] == ["a", "t", "z", "m", "o", "n"]


def test_callback_sees_every_token_and_can_stop(translator):
    seen = []
    translator.translate_batch([["آ", "ت", "ز"], ["آ", "ت"]], beam_size=1,
                               callback=lambda s: seen.append((s.batch_id, s.step, s.token, s.is_last)) and False)
    assert {b for b, *_ in seen} == {0, 1}
    assert all(last == (token == "</s>") for _, _, token, last in seen)
    stopped = translator.translate_batch([["آ", "ت", "ز", "م", "و", "ن"]], beam_size=1,
                                         callback=lambda s: s.step == 1)
    assert stopped[0].hypotheses[0] == ["a", "t"]
    with pytest.raises(ZeroDivisionError):
        translator.translate_batch([["آ"]], beam_size=1, callback=lambda s: 1 / 0)


def test_translate_iterable_streams_in_order_with_bounded_reading(translator, names):
    consumed = 0

    def source():
        nonlocal consumed
        for n in itertools.cycle(names):
            consumed += 1
            yield n.split()

    stream = translator.translate_iterable(itertools.islice(source(), 20000), max_batch_size=8, beam_size=1)
    first = [next(stream) for _ in range(len(names))]
    assert consumed <= 8 * 16 * 4 + len(names)  # a few chunks ahead, never the whole stream
    expected = translator.translate_batch([n.split() for n in names], beam_size=1)
    assert [r.hypotheses for r in first] == [r.hypotheses for r in expected]
    stream.close()


def test_asynchronous_results(translator):
    pending = translator.translate_batch([["آ", "ت", "ز"], ["آ", "ت"]], asynchronous=True, beam_size=1)
    assert len(pending) == 2
    assert pending[0].result().hypotheses[0] == translator.translate_batch([["آ", "ت", "ز"]], beam_size=1)[0].hypotheses[0]
    assert pending[1].done()


def test_translate_text_equals_the_cli(text_model, tmp_path, cli):
    lines = (text_model.parent / "corpus.txt").read_text(encoding="utf-8").split("\n")[:40]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = cli_translate(text_model, source, "--max-length", "16", "--beam", "2")
    t = attend.Translator(str(text_model))
    got = t.translate_text(lines, max_decoding_length=16, min_decoding_length=0)
    assert [r.hypotheses[0] for r in got] == expected


def test_preset_info_plan_and_profiling():
    model = attend.Model.preset("tiny", seed=3)
    assert not model.has_text_tokenizer and model.max_positions > 0
    t = attend.Translator(model, intra_threads=1)
    assert "preset tiny" in t.info().directory
    assert "arena" in t.plan()
    t.set_profiling(True)
    t.translate_batch(np.arange(1, 41, dtype=np.int32).reshape(4, 10), beam_size=1, max_decoding_length=8)
    profile = t.profile()
    assert sum(p.seconds for p in profile) > 0 and {"encoder", "decoder", "search"} <= {p.phase for p in profile}
    t.reset_profile()
    assert sum(p.seconds for p in t.profile()) == 0


def test_two_python_threads_translate_at_once(translit):
    """The GIL is released while translating: two threads' calls overlap in time (a
    held GIL would run them one after the other)."""
    model = attend.Model.preset("tiny")
    t = attend.Translator(model, intra_threads=1)
    batch = np.arange(1, 1 + 32 * 20, dtype=np.int32).reshape(32, 20) % (model.source_vocabulary_size - 4) + 4
    t.translate_batch(batch, beam_size=1, min_decoding_length=8, max_decoding_length=8)  # warm: the workspaces
    spans, cpu = [None, None], [0.0, 0.0]
    barrier = threading.Barrier(2)

    def work(i):
        barrier.wait()
        start, c0 = time.perf_counter(), time.thread_time()
        # One call each: with the GIL held through a call, the second thread could not
        # even start its clock before the first call returned.
        t.translate_batch(batch, beam_size=1, min_decoding_length=120, max_decoding_length=120)
        spans[i] = (start, time.perf_counter())
        cpu[i] = time.thread_time() - c0

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    overlap = min(spans[0][1], spans[1][1]) - max(spans[0][0], spans[1][0])
    shortest = min(s[1] - s[0] for s in spans)
    assert overlap > 0.8 * shortest, (spans, cpu)
    # Each thread computed itself (intra_threads=1: on its own thread). How much of two
    # cores they get depends on what else the machine runs, so the speed-up is measured
    # by bench/python_overhead.py under the exclusive CPU lock, not asserted here.
    assert min(cpu) > 0, cpu


def test_stubs_and_docstrings_ship_with_the_package():
    stub = Path(attend.__file__).with_name("_attend.pyi")
    text = stub.read_text()
    assert "class Translator" in text and "def translate_ids" in text and "class Model" in text
    assert (Path(attend.__file__).with_name("py.typed")).exists()
    for name in attend.__all__:
        obj = getattr(attend, name)
        if isinstance(obj, str):
            continue
        assert obj.__doc__, name
        if isinstance(obj, type):
            for member, value in vars(obj).items():
                if not member.startswith("_") and callable(value):
                    assert getattr(obj, member).__doc__, f"{name}.{member}"


def test_translators_free_their_plans(translit):
    t = attend.Translator(str(translit))
    t.translate_batch([["آ"]], beam_size=8)  # a second plan (wider beam)
    t.unload_model()
    assert not t.model_is_loaded
    t.load_model()
    assert t.translate_batch([["آ", "ت"]], beam_size=1)[0].hypotheses


def test_inter_threads_translate_batches_at_once_with_the_same_results(translit, translator, names):
    two = attend.Translator(str(translit), inter_threads=2, intra_threads=1)
    assert two.num_translators == 2
    batch = [n.split() for n in names[:100]]
    expected = translator.translate_batch(batch, max_batch_size=8)
    assert [r.hypotheses for r in two.translate_batch(batch, max_batch_size=8)] == [r.hypotheses for r in expected]
    steps = {}
    two.translate_batch(batch, max_batch_size=8, beam_size=1,
                        callback=lambda s: steps.setdefault(s.batch_id, []).append(s.token) and False)
    greedy = translator.translate_batch(batch, beam_size=1)
    assert [steps[i] for i in range(len(batch))] == [r.hypotheses[0] + ["</s>"] for r in greedy]


def test_compute_type_int8_loads_the_int8_model_and_says_so(translit):
    int8 = translit.with_name("ct2-aren-transliteration-int8")
    if not (int8 / "model.bin").exists():
        pytest.skip(f"{int8} is absent")
    t = attend.Translator(str(int8), compute_type="int8")
    assert t.compute_type == "int8_float32" and t.info().compute_type == "int8"  # CTranslate2's name, attend's
    assert t.info().compute_type_reason
    assert t.translate_batch([["آ", "ت", "ز", "م", "و", "ن"]], beam_size=4)[0].hypotheses[0] == list("atzmon")
    assert attend.Translator(str(int8), compute_type={"cpu": "float32"}).compute_type == "float32"


def test_convert_model_writes_a_quantized_model_that_loads_in_its_type(translit, tmp_path):
    if not (translit / "model.bin").exists():
        pytest.skip(f"{translit} is absent")
    attend.convert_model(str(translit), str(tmp_path / "int8"), compute_type="int8")
    t = attend.Translator(str(tmp_path / "int8"))  # default: the stored type
    assert t.info().compute_type == "int8"
    assert t.translate_batch([["آ", "ت", "ز", "م", "و", "ن"]])[0].hypotheses[0] == list("atzmon")
    with pytest.raises(ValueError, match="compute_type = 'float16'"):  # a bad argument (RuntimeError: a bad model)
        attend.convert_model(str(translit), str(tmp_path / "bad"), compute_type="float16")
