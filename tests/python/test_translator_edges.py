"""attend.Translator at the edges of CTranslate2's API (issue 21): each test pins a
behaviour CTranslate2 4.x has and attend once lacked."""

import inspect
import os
import signal
import threading
import time

import pytest

import attend


@pytest.fixture(scope="module")
def translator(translit):
    return attend.Translator(str(translit), device="cpu", intra_threads=1)


NAME = ["آ", "ت", "ز", "م", "و", "ن"]


def test_end_token_none_is_the_models_and_an_empty_list_is_no_end_token(translator):
    default = translator.translate_batch([NAME], max_decoding_length=12)[0].hypotheses[0]
    assert default == ["a", "t", "z", "m", "o", "n"]
    assert translator.translate_batch([NAME], end_token=None, max_decoding_length=12)[0].hypotheses[0] == default
    # No end token: the search runs to max_decoding_length, "</s>" is an ordinary token.
    endless = translator.translate_batch([NAME], end_token=[], max_decoding_length=12)[0].hypotheses[0]
    assert len(endless) == 12 and endless[:6] == default
    # A given end token replaces the model's: the hypothesis stops at "z" (dropped, as </s> is).
    assert translator.translate_batch([NAME], end_token="z")[0].hypotheses[0] == ["a", "t"]
    assert translator.translate_batch([NAME], end_token=["z"], return_end_token=True)[0].hypotheses[0] == ["a", "t", "z"]


# ---- callback: True stops that sentence only (issue 21, item 2) ----

SOURCES = [NAME, NAME[:3], NAME[2:]]


def _run_with_callback(translator, stop, **options):
    steps = []

    def callback(step):
        steps.append(step)
        return stop(step)

    results = translator.translate_batch(SOURCES, beam_size=1, callback=callback, **options)
    return [r.hypotheses for r in results], steps


def test_callback_true_stops_only_its_sentence_and_the_others_end_with_is_last(translator):
    full = [r.hypotheses[0] for r in translator.translate_batch(SOURCES, beam_size=1)]
    # CTranslate2 4.8.1 gives these, step for step: [a t] (stopped), [a t z], [z a m o n].
    for stopped, at in ((0, 1), (1, 0), (2, 3)):
        hypotheses, steps = _run_with_callback(translator, lambda s: s.batch_id == stopped and s.step >= at)
        for b, hyps in enumerate(hypotheses):
            mine = [s for s in steps if s.batch_id == b]
            assert [s.step for s in mine] == list(range(len(mine)))
            if b == stopped:  # keeps the tokens so far (the stopping one too), no is_last step
                assert hyps == [full[b][:at + 1]] and len(mine) == at + 1
                assert not any(s.is_last for s in mine)
            else:  # goes on to its end: one is_last step, the end token's
                assert hyps == [full[b]]
                assert [s.token for s in mine] == full[b] + ["</s>"]
                assert [s.is_last for s in mine] == [False] * len(full[b]) + [True]


def test_callback_true_stops_one_sampled_draw_and_generate_tokens_stops_when_closed(translator):
    # Sampling with two draws: stopping draw 0 of sentence 0 leaves draw 1 and the other
    # sentences running to their end token (CTranslate2: the same).
    attend.set_random_seed(3)
    free, _ = _run_with_callback(translator, lambda s: False, sampling_topk=5, num_hypotheses=2)
    attend.set_random_seed(3)
    hypotheses, steps = _run_with_callback(
        translator, lambda s: s.batch_id == 0 and s.hypothesis_id == 0 and s.step >= 1,
        sampling_topk=5, num_hypotheses=2)
    attend.set_random_seed(0)
    assert hypotheses[0][0] == free[0][0][:2] and hypotheses[1:] == free[1:]
    assert free[0][1] in hypotheses[0]
    draws = {(s.batch_id, s.hypothesis_id) for s in steps}
    assert draws == {(b, h) for b in range(3) for h in range(2)}
    assert sum(s.is_last for s in steps) == 5  # every draw but the stopped one ends
    # generate_tokens: closing the generator stops the decoding; run out, the last step is_last.
    tokens = list(translator.generate_tokens(NAME))
    assert [t.token for t in tokens] == ["a", "t", "z", "m", "o", "n", "</s>"] and tokens[-1].is_last
    generator = translator.generate_tokens(NAME)
    assert next(generator).token == "a"
    generator.close()


# ---- asynchronous=True reads its input when called (item 5) ----

@pytest.fixture()
def busy_worker(translator):
    """Holds the translator's one asynchronous worker until the test sets the event, so
    that a call made meanwhile runs after the caller has changed its input."""
    gate = threading.Event()
    blocker = translator.translate_batch([NAME], beam_size=1, asynchronous=True,
                                         callback=lambda s: not gate.wait(20))
    yield gate
    gate.set()
    blocker[0].result()


def test_asynchronous_calls_copy_their_input_when_called(translator, busy_worker):
    other = ["ب", "ي", "ت"]
    expected = translator.translate_batch([NAME, NAME[:3]], [None, ["a", "t"]])
    source, prefix = [list(NAME), NAME[:3]], [None, ["a", "t"]]
    pending = translator.translate_batch(source, prefix, asynchronous=True)
    ids = [translator.model.encode_tokens(NAME), translator.model.encode_tokens(NAME[:3])]
    expected_ids = translator.translate_batch(ids)
    pending_ids = translator.translate_batch(ids, asynchronous=True)
    expected_scores = translator.score_batch([NAME], [["a", "t"]])
    score_source, score_target = [list(NAME)], [["a", "t"]]
    pending_scores = translator.score_batch(score_source, score_target, asynchronous=True)
    for rows in (source, ids, score_source):
        rows[0][:] = other
        rows.append(other)
    prefix[1][0] = "z"
    score_target[0].append("z")
    busy_worker.set()
    assert [r.result() for r in pending] == expected
    assert [r.result() for r in pending_ids] == expected_ids
    assert [r.result() for r in pending_scores] == expected_scores


def test_translate_iterable_translates_rows_as_they_were_read(translator, busy_worker):
    rows = [list(NAME), NAME[:3], NAME[2:]]
    expected = translator.translate_batch([list(r) for r in rows])

    def read():
        yield rows[0]
        yield rows[1]
        for row in rows[:2]:  # the reader reuses its buffers once they are handed over (max_batch_size=1)
            row[:] = ["<unk>"]
        busy_worker.set()
        yield rows[2]

    assert list(translator.translate_iterable(read(), max_batch_size=1)) == expected


# ---- score_batch at its edges (item 8) ----

def test_score_batch_offsets_cut_tokens_and_log_probs_alike(translator):
    for target in ([], ["a"], ["a", "t"], ["a", "t", "z", "m"]):
        for source in (NAME, []):
            whole = translator.score_batch([source], [target])[0]
            assert whole.tokens == target + ["</s>"] and len(whole.log_probs) == len(target) + 1
            as_ids = ([translator.model.encode_tokens(source)], [translator.model.encode_tokens(target, "target")])
            whole_ids = translator.score_batch(*as_ids)[0]
            for offset in range(len(target) + 4):
                cut = translator.score_batch([source], [target], offset=offset)[0]
                assert cut.tokens == whole.tokens[offset:] and cut.log_probs == whole.log_probs[offset:]
                cut = translator.score_batch(*as_ids, offset=offset)[0]
                assert cut.tokens == whole_ids.tokens[offset:] and cut.log_probs == whole_ids.log_probs[offset:]
                assert len(cut.tokens) == len(cut.log_probs) == max(0, len(target) + 1 - offset)
    # CTranslate2 4.8.1: past the end both are empty; an empty source scores 0 for every token.
    assert translator.score_batch([NAME[:2]], [["a", "t"]], offset=3)[0].tokens == []
    empty = translator.score_batch([[]], [["a"]])[0]
    assert empty.tokens == ["a", "</s>"] and empty.log_probs == [0.0, 0.0]


def test_sources_of_special_tokens_translate_as_in_ctranslate2(translator):
    # CTranslate2 4.8.1: an empty hypothesis with score 0 for each of the first three.
    for source in (["</s>"], ["<s>"], ["</s>", "آ"]):
        result = translator.translate_batch([source], return_scores=True)[0]
        assert result.hypotheses == [[]] and result.scores == [0.0]
    assert translator.translate_batch([["آ", "</s>"]])[0].hypotheses == [["a", "a"]]


# ---- fork (item 9) ----

def test_a_forked_child_translates_asynchronously(translator):
    expected = translator.translate_batch([NAME])[0].hypotheses
    translator.translate_batch([NAME], asynchronous=True)[0].result()  # the parent's worker exists
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave at once, whatever happens
        try:
            got = translator.translate_batch([NAME], asynchronous=True)[0].result().hypotheses
            os.write(write, b"ok" if got == expected else repr(got).encode())
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 20
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child's asynchronous translation hangs")
        time.sleep(0.05)
    with os.fdopen(read, "rb") as r:
        assert r.read() == b"ok"


# ---- wrong arguments: TypeError/ValueError naming them, never nanobind's message (items 10, 11) ----

def _calls(translator, model):
    """Each public method (and the constructor) as a call of its scalar arguments."""
    return {
        "attend.Translator": lambda **k: attend.Translator(str(model), **k),
        "translate_batch": lambda **k: translator.translate_batch([NAME], **k),
        "translate_iterable": lambda **k: list(translator.translate_iterable([NAME], **k)),
        "translate_text": lambda **k: translator.translate_text([], **k),
        "score_batch": lambda **k: translator.score_batch([NAME], [["a"]], **k),
        "score_iterable": lambda **k: list(translator.score_iterable([NAME], [["a"]], **k)),
        "generate_tokens": lambda **k: list(translator.generate_tokens(NAME, **k)),
    }


def _scalar_parameters():
    """(method, parameter, annotation) of every int/float/bool parameter of the public API
    (translate_text and the iterables forward translate_batch's and score_batch's)."""
    T = attend.Translator
    signatures = {"attend.Translator": [T.__init__], "translate_batch": [T.translate_batch],
                  "translate_iterable": [T.translate_iterable, T.translate_batch],
                  "translate_text": [T.translate_batch], "score_batch": [T.score_batch],
                  "score_iterable": [T.score_iterable, T.score_batch], "generate_tokens": [T.generate_tokens]}
    for method, functions in signatures.items():
        kinds = {}
        for function in functions:
            for name, p in inspect.signature(function).parameters.items():
                if p.annotation in ("int", "float", "bool"):
                    kinds.setdefault(name, p.annotation)
        for name, kind in kinds.items():
            yield method, name, kind


BAD = {"int": [(None, TypeError), (2.5, TypeError), ("3", TypeError), (2**63, ValueError), (-2**70, ValueError)],
       "float": [(None, TypeError), ("1", TypeError), (1e300, ValueError), (10**400, ValueError), (float("nan"), ValueError)],
       "bool": [("yes", TypeError), (2.5, TypeError), (b"", TypeError)]}


def test_every_scalar_option_is_declared_with_its_type():
    """A parameter whose default is a number or a bool is annotated int/float/bool, so the
    argument checks (attend/_arguments.py) cover it: a new option cannot slip past."""
    for function in (attend.Translator.__init__, attend.Translator.translate_batch, attend.Translator.score_batch,
                     attend.Translator.generate_tokens, attend.Translator.translate_iterable,
                     attend.Translator.score_iterable, attend.set_random_seed):
        for name, p in inspect.signature(function).parameters.items():
            if isinstance(p.default, (bool, int, float)) and name not in ("device_index", "return_attention"):
                assert p.annotation == type(p.default).__name__ or (p.annotation, type(p.default)) == ("float", int), \
                    (function.__name__, name, p.annotation)


@pytest.mark.parametrize("method,name,kind", list(_scalar_parameters()))
def test_a_wrong_scalar_argument_is_named(translator, translit, method, name, kind):
    call = _calls(translator, translit)[method]
    for value, error in BAD[kind]:
        with pytest.raises(error) as raised:
            call(**{name: value})
        message = str(raised.value)
        assert name in message and method in message and "incompatible" not in message, (value, message)


def test_flags_take_what_ctranslate2_takes(translator):
    # CTranslate2's bindings read a bool from None (False) or a number's truth value.
    plain = translator.translate_batch([NAME], return_scores=True)
    assert translator.translate_batch([NAME], return_scores=1, disable_unk=None, replace_unknowns=0) == plain
    assert translator.translate_batch([NAME], beam_size=True)[0].hypotheses == [["a", "t", "z", "m", "o", "n"]]


@pytest.mark.parametrize("call,error,names", [
    (lambda t: t.translate_batch([["آ", 5]]), TypeError, "source[0][1]"),
    (lambda t: t.translate_batch([[5, "آ"]]), TypeError, "source[0][1]"),
    (lambda t: t.translate_batch([NAME, [5, 6]]), TypeError, "source[1][0]"),
    (lambda t: t.translate_batch([NAME, "آ ت"]), TypeError, "source[1]"),
    (lambda t: t.translate_batch([["آ", "\ud800"]]), ValueError, "source[0][1]"),
    (lambda t: t.translate_batch([NAME], target_prefix=[[5]]), TypeError, "target_prefix[0][0]"),
    (lambda t: t.translate_batch([[5, 6]], target_prefix=[["a"]]), TypeError, "target_prefix[0][0]"),
    (lambda t: t.translate_batch([[5, 2**40]]), ValueError, "source[0][1]"),
    (lambda t: t.score_batch([NAME], [[5]]), TypeError, "target[0][0]"),
    (lambda t: t.score_batch([NAME], [["\udfff"]]), ValueError, "target[0][0]"),
    (lambda t: t.translate_text(["ok", 5]), TypeError, "source[1]"),
    (lambda t: t.translate_batch([NAME], end_token=["</s>", 3]), TypeError, "end_token[1]"),
    (lambda t: t.translate_batch([NAME], end_token="\ud800"), ValueError, "end_token[0]"),
    (lambda t: t.translate_batch([NAME], suppress_sequences=[["a", None]]), TypeError, "suppress_sequences[0][1]"),
    (lambda t: t.translate_batch(None), TypeError, "source"),
    (lambda t: t.score_batch([NAME], None), TypeError, "target"),
    (lambda t: t.attention_heads(NAME, ["a", 1]), TypeError, "tokens[1]"),
])
def test_a_wrong_token_or_id_is_named(translator, call, error, names):
    with pytest.raises(error) as raised:
        call(translator)
    assert names in str(raised.value) and "incompatible" not in str(raised.value), str(raised.value)


@pytest.mark.parametrize("make,names", [
    (lambda path: attend.Translator(path, compute_type="xx"), "compute_type"),
    (lambda path: attend.Translator(path, compute_type="float16"), "compute_type"),
    (lambda path: attend.Translator(path, kv_cache_type="float8"), "kv_cache_type"),
    (lambda path: attend.Translator(path, inter_threads=0), "inter_threads"),
    (lambda path: attend.Translator(path, intra_threads=5000), "threads"),
    (lambda path: attend.Model.load(path, compute_type="xx"), "compute_type"),
    (lambda path: attend.Translator(path).translate_batch([NAME], beam_size=10**6), "beam_size"),
    (lambda path: attend.Translator(path).translate_batch([NAME], beam_size=0), "beam_size"),
    (lambda path: attend.Translator(path).translate_batch([NAME], max_batch_size=2**40, batch_type="tokens"),
     r"max_batch_size=1099511627776 must be in \[0, 16777216\]"),  # the caller's argument, not the engine's field
    (lambda path: attend.Translator(path).translate_batch([NAME], sampling_topk=3, beam_size=2), "beam_size"),
    (lambda path: attend.Translator(path).translate_batch([NAME], min_decoding_length=-1), "min_decoding_length"),
    (lambda path: attend.Translator(path).score_batch([NAME], [["a"]], offset=-1), "offset"),
    (lambda path: attend.set_random_seed(-1), "seed"),
])
def test_a_bad_argument_is_a_value_error_wherever_it_is_found(translit, make, names):
    # One rule (CTranslate2's for compute_type): a bad argument is ValueError, at load
    # time or call time, from the Python layer or the engine's plan limits.
    with pytest.raises(ValueError, match=names):
        make(str(translit))


# ---- a model path that is not a model directory (item 12) ----

@pytest.mark.parametrize("load", [attend.Translator, attend.Model.load, attend.Encoder], ids=["Translator", "Model", "Encoder"])
def test_a_model_path_says_what_it_is_instead_of_a_model_directory(translit, tmp_path, load):
    weights = translit / "model.bin"
    with pytest.raises(RuntimeError, match=f"{weights}: not a directory"):
        load(str(weights))
    with pytest.raises(RuntimeError, match=f"{tmp_path / 'nope'}: model directory does not exist"):
        load(str(tmp_path / "nope"))
    with pytest.raises(RuntimeError, match=f"{tmp_path}.*(config.json|model.bin|modules.json)"):
        load(str(tmp_path))


def test_score_batch_max_input_length_cuts_source_and_target_as_ctranslate2(translator):
    # CTranslate2 4.8.1 on this model: max_input_length=2 → ['a', '</s>'] [-0.059, -7.49],
    # 3 → ['a', 't', '</s>'] [-0.082, -0.038, -7.249], 0 and 1024 → the whole target.
    target = ["a", "t", "z", "m", "o", "n"]
    whole = translator.score_batch([NAME], [target])[0]
    assert translator.score_batch([NAME], [target], max_input_length=0)[0].log_probs == whole.log_probs
    for limit, tokens, expected in ((2, ["a", "</s>"], [-0.059, -7.49]), (3, ["a", "t", "</s>"], [-0.082, -0.038, -7.249])):
        r = translator.score_batch([NAME], [target], max_input_length=limit)[0]
        assert r.tokens == tokens
        assert r.log_probs == pytest.approx(expected, abs=2e-3)
        # ids in: the same cut, the same numbers
        ids = translator.score_batch([translator.model.encode_tokens(NAME)], [translator.model.encode_tokens(target, "target")],
                                     max_input_length=limit)[0]
        assert ids.log_probs == r.log_probs
    with pytest.raises(ValueError, match="max_input_length"):
        translator.score_batch([NAME], [target], max_input_length=-1)
