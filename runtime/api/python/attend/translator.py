"""attend.Translator: CTranslate2's ``Translator`` API over attend's engine.

A script written for ``ctranslate2.Translator`` runs on attend with the import swapped:
the constructor and every method take CTranslate2's arguments, with its names and
defaults, and return its result types. An argument attend cannot honour raises a
``ValueError`` that names it — it is never ignored. A Hugging Face directory's
generation_config.json replaces CTranslate2's decoding defaults (beam 2, …) with
``generate()``'s, as ``attend translate`` takes them; keywords given still win.

Errors: a model that cannot be loaded raises ``RuntimeError`` (as CTranslate2 does);
a bad argument raises ``ValueError`` whose message names it, or the sentence and token
at fault, whether found at load time or in a call (the engine's limits included); a
wrong argument type raises ``TypeError`` naming it (``_arguments.py`` checks every
scalar argument, ``_attend`` every token and id).

attend compiles a model into a static execution plan for a set of limits (batch size,
beam size, output length). The translator compiles one per set of limits its calls
ask for, on first use, and keeps the last few; the plans share the model's weights.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import inspect
import itertools
import operator
import os
import queue
import threading
import time
import weakref
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _arguments, _attend, _devices, _files, _model_files
from .results import AsyncResult, ExecutionStats, GenerationStepResult, ScoringResult, TranslationResult

_random_seed = 0

# A call's plan is compiled for its own limits (batch, beam, output length), as
# `attend translate` compiles one for its flags, so both run the same plan; the last
# few plans are kept, so calls that repeat their options compile nothing.
_DEFAULT_BATCH = 32
_DEFAULT_BATCH_TOKENS = 4096  # padded source tokens: keeps the arena small on models with long positions
_DEFAULT_BEAM = 2             # CTranslate2's default beam_size
_DEFAULT_TARGET = 256         # …and max_decoding_length
_MAX_CACHED_PLANS = 4
_LIMITS = _attend.limits      # include/attend/limits.h
_MAX_THREADS = _LIMITS["max_threads_each"]


@_arguments.checked()
def set_random_seed(seed: int) -> None:
    """Seeds sampling (CTranslate2's ``set_random_seed``): with a sentence's index in its
    call, the seed fixes every draw, so a call repeated gives the same samples."""
    global _random_seed
    _random_seed = int(seed)


def _refuse(method: str, argument: str, why: str) -> ValueError:
    return ValueError(f"{method}: {argument} {why}")


def _is_id(x: Any) -> bool:
    if isinstance(x, (bool, str, bytes)):
        return False
    try:
        operator.index(x)
        return True
    except TypeError:
        return False


def _tokens(method: str, what: str, tokens: Any) -> List[str]:
    """A list of token strings, or TypeError/ValueError naming `what` and the item."""
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Iterable):
        raise TypeError(f"{method}: {what} must be a list of token strings, not {type(tokens).__name__}")
    out = list(tokens)
    for i, token in enumerate(out):
        if not isinstance(token, str):
            raise TypeError(f"{method}: {what}[{i}] is {type(token).__name__}, not a token string")
        try:
            token.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{method}: {what}[{i}] is not valid Unicode (it holds a lone surrogate)") from None
    return out


def _is_array(x: Any) -> bool:
    return hasattr(x, "__array_interface__") or hasattr(x, "__dlpack__")


def _snapshot(rows: Any) -> Any:
    """A batch as it is now — rows, prefixes, targets — for a call that runs later
    (asynchronous=True): changing the caller's lists or arrays after the call changes
    nothing, as CTranslate2 converts its input when called. Rows are copied, not
    converted: the call's own checks then name what is wrong."""
    if rows is None:
        return None
    if _is_array(rows):
        return _copy_array(rows)
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Iterable):
        return rows  # the call's own check names it
    return [_copy_array(r) if _is_array(r) else list(r) if isinstance(r, (list, tuple)) else r for r in rows]


def _is_sized(x: Any) -> bool:
    try:
        len(x)
        return True
    except TypeError:
        return False


def _failed(error: BaseException, count: int) -> List[AsyncResult]:
    """`count` asynchronous results that raise `error` from result(), every time."""
    future: concurrent.futures.Future = concurrent.futures.Future()
    future.set_exception(error)
    return [AsyncResult(future, i) for i in range(count)]


def _values_reach_result(method: Callable[..., Any]) -> Callable[..., Any]:
    """As CTranslate2: with ``asynchronous=True`` a bad value (a ValueError: an option out
    of range, min above max decoding length) is raised by each result's ``result()``,
    not by the call; a wrong type (TypeError) still raises at the call, as CTranslate2's
    bindings raise it."""

    @functools.wraps(method)
    def wrapper(self: Any, source: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, source, *args, **kwargs)
        except ValueError as e:
            if kwargs.get("asynchronous") and _is_sized(source):
                return _failed(e, len(source))
            raise

    return wrapper


def _generation_keywords(model: "_attend.Model") -> Dict[str, Any]:
    """A Hugging Face directory's generate() defaults (generation_config.json, as
    ``Model.default_options()`` and ``attend translate`` read them) in CTranslate2's
    keywords; nothing for any other model."""
    if not model.has_generation_defaults:
        return {}
    o = model.default_options()
    keywords = dict(beam_size=o.beam_size, num_hypotheses=o.num_hypotheses, length_penalty=o.length_penalty,
                    repetition_penalty=o.repetition_penalty, no_repeat_ngram_size=o.no_repeat_ngram_size,
                    max_input_length=o.max_input_length, max_decoding_length=o.max_length,
                    min_decoding_length=o.min_length, suppress_sequences=o.suppress_sequences or None)
    if o.sampling:  # do_sample: top_k 0 is the whole distribution, as CTranslate2's sampling_topk 0
        keywords.update(sampling_topk=o.sampling_topk, sampling_topp=o.sampling_topp, sampling_temperature=o.temperature)
    return keywords


def _generation_defaults(method: Callable[..., Any]) -> Callable[..., Any]:
    """On a Hugging Face directory, each decoding keyword a call leaves out takes the
    directory's generate() default instead of CTranslate2's (beam_size 2,
    max_decoding_length 256, min_decoding_length 1), so that a script moving from
    ``model.generate()`` gets its text; a keyword given wins. Any other model keeps
    CTranslate2's defaults. A method taking ``**kwargs`` forwards translate_batch's."""
    signature = inspect.signature(method)
    var_keyword = next((n for n, p in signature.parameters.items() if p.kind is p.VAR_KEYWORD), None)

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        defaults = _generation_keywords(self.model)
        if defaults:
            given = signature.bind(self, *args, **kwargs).arguments
            given = set(given) | set(given.get(var_keyword) or {})
            for name, value in defaults.items():
                if name not in given and (var_keyword is not None or name in signature.parameters):
                    kwargs[name] = value
        return method(self, *args, **kwargs)

    return wrapper


def _copy_array(a: Any) -> Any:
    for method in ("copy", "clone"):  # NumPy's, PyTorch's
        if callable(getattr(a, method, None)):
            return getattr(a, method)()
    return a


def _input_kind(rows: Any, what: str) -> Optional[str]:
    """'ids' or 'tokens': what a batch of sources (or targets, prefixes) holds; None when
    no row has an item to tell (empty rows, no rows)."""
    if _is_array(rows):
        return "ids"
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Iterable):
        raise TypeError(f"{what} must be a list of token lists (or id lists, or an integer array), "
                        f"not {type(rows).__name__}")
    for row in rows:
        if row is None:
            continue
        if _is_array(row):
            return "ids"
        if isinstance(row, str):
            raise TypeError(f"{what} must be a list of token lists (or id lists), not a list of strings: "
                            "split each sentence into tokens, or use translate_text for plain text")
        if not isinstance(row, Iterable):
            raise TypeError(f"{what} holds a {type(row).__name__}: expected token lists or id lists")
        for item in row:
            if isinstance(item, str):
                return "tokens"
            if _is_id(item):
                return "ids"
            raise TypeError(f"{what} holds {type(item).__name__} items: expected token strings or integer ids")
    return None


class Translator:
    """Translates with an encoder-decoder model, as ``ctranslate2.Translator`` does.

    Args:
      model_path: A model directory (CTranslate2's or attend's format), or an
        :class:`attend.Model` (e.g. ``attend.Model.preset("base")``).
      device: ``"cpu"`` (or ``"auto"``, which is the CPU): attend runs on x86 CPUs.
      device_index: 0 (the one CPU device).
      compute_type: CTranslate2's name ("default", "auto", "float32", "int8",
        "int8_float32", "bfloat16", "int8_bfloat16"), or a dictionary by device.
      kv_cache_type: The decoder's attention caches (attend's own option): "default"
        (bfloat16 when compute_type is int8 or bfloat16, else float32), "float32"
        (as CTranslate2 keeps them), "bfloat16".
      decoding_rules: "auto" (transformers' ``generate()`` rules for a Hugging Face
        directory, CTranslate2's for the others), "transformers", "ctranslate2".
      inter_threads: Batches translated at once (also the asynchronous workers).
      intra_threads: Compute threads per batch (0: one per core / inter_threads).
      max_queued_batches: Asynchronous calls waiting at most (0: 4 per worker, -1:
        unlimited); a call beyond blocks until one finishes.
      flash_attention: Accepted: attend's attention is always fused with an online
        softmax (the FlashAttention algorithm, on the CPU), whatever the value.
      tensor_parallel: Must be False (one machine, one process).
      files: The model's files in memory, as CTranslate2 takes them: a dictionary of
        file name ("model.bin", "source_vocabulary.txt", "vmap.txt", …) to content
        (bytes, or a file-like object, read here); ``model_path`` then only names the
        model. Nothing is read from disk, now or when :meth:`load_model` loads again.
    """

    @_arguments.checked("attend.Translator")
    def __init__(self, model_path: Union[str, os.PathLike, "_attend.Model"], device: str = "cpu", *,
                 device_index: Union[int, List[int]] = 0, compute_type: Union[str, Dict[str, str]] = "default",
                 inter_threads: int = 1, intra_threads: int = 0, max_queued_batches: int = 0,
                 flash_attention: bool = False, tensor_parallel: bool = False, files: Any = None,
                 kv_cache_type: str = "default", decoding_rules: str = "auto") -> None:
        where = "attend.Translator"
        if device not in ("cpu", "auto"):
            raise _refuse(where, f"device={device!r}", "is not supported: attend runs on the CPU (device='cpu')")
        indexes = device_index if isinstance(device_index, (list, tuple)) else [device_index]
        if list(indexes) != [0]:
            raise _refuse(where, f"device_index={device_index!r}",
                          "is not a valid device index here: attend runs on the CPU, device index 0")
        compute_type = _devices.compute_type_for_cpu(where, compute_type)
        if tensor_parallel:
            raise _refuse(where, "tensor_parallel=True", "is not supported: attend runs in one process")
        self._files = None if files is None else _model_files.read_files(where, files)
        if not 1 <= inter_threads <= _MAX_THREADS:
            raise _refuse(where, f"inter_threads={inter_threads}", f"must be in [1, {_MAX_THREADS}]")
        if not 0 <= intra_threads <= _MAX_THREADS:
            raise _refuse(where, f"intra_threads={intra_threads}", f"must be in [0, {_MAX_THREADS}] (0: one per core)")
        self._model_path = model_path
        self._compute_type = str(compute_type)
        self._kv_cache_type = str(kv_cache_type)
        self._decoding_rules = str(decoding_rules)
        self._inter_threads = int(inter_threads)
        self._intra_threads = int(intra_threads)
        self._max_queued = (None if max_queued_batches < 0 else
                            max_queued_batches if max_queued_batches > 0 else 4 * self._inter_threads)
        self._lock = threading.Lock()
        _translators.add(self)
        self._plans: "collections.OrderedDict[Tuple[int, int, int, int], _attend.Translator]" = collections.OrderedDict()
        self._executor: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._queue_slots = threading.BoundedSemaphore(self._max_queued) if self._max_queued else None
        self._queued = 0   # asynchronous calls waiting for a worker
        self._active = 0   # calls running (synchronous or on a worker)
        self._counts = threading.Lock()
        self._profiling = False
        self._last_plan: Optional[_attend.Translator] = None
        self._model: Optional[_attend.Model] = None
        self.load_model()

    # ---- CTranslate2's properties and model management ----

    @property
    def device(self) -> str:
        """Always ``"cpu"``."""
        return "cpu"

    @property
    def device_index(self) -> List[int]:
        """Always ``[0]``."""
        return [0]

    @property
    def compute_type(self) -> str:
        """The arithmetic the model runs with, CTranslate2's name of it: "float32",
        "int8_float32" (int8 GEMMs, float32 between them: what "int8", "int8_float32",
        "int8_bfloat16" and "auto" run on CPUs), "bfloat16"."""
        return _devices.ctranslate2_compute_type(self.model.info().compute_type)

    @property
    def num_translators(self) -> int:
        """Batches translated at once (``inter_threads``)."""
        return self._inter_threads

    @property
    def num_queued_batches(self) -> int:
        """Asynchronous calls waiting for a worker."""
        return self._queued

    @property
    def num_active_batches(self) -> int:
        """Calls waiting or being translated (CTranslate2's: batches in the queue or on a
        worker)."""
        with self._counts:
            return self._queued + self._active

    @contextlib.contextmanager
    def _running(self, was_queued: bool = False) -> Iterator[None]:
        """Counts a call as active while it runs (and no longer queued, if it was), so
        that num_active_batches never misses it and unload_model waits for none."""
        with self._counts:
            self._active += 1
            if was_queued:
                self._queued -= 1
        try:
            yield
        finally:
            with self._counts:
                self._active -= 1

    @property
    def model_is_loaded(self) -> bool:
        """Whether the model is in memory (see :meth:`unload_model`)."""
        return self._model is not None

    @property
    def model(self) -> "_attend.Model":
        """The :class:`attend.Model` this translator runs."""
        model = self._model
        if model is None:
            raise RuntimeError("the model of this translator was unloaded: call load_model() first")
        return model

    def load_model(self, keep_cache: bool = False) -> None:
        """Loads the model (again, after :meth:`unload_model`): from its directory, or
        from the files given in memory. ``keep_cache`` changes nothing on the CPU."""
        if self._model is not None:
            return
        if isinstance(self._model_path, _attend.Model):
            model = self._model_path
        elif self._files is not None:
            model = _attend.Model.load_from_memory(os.fspath(self._model_path), self._files,
                                                   compute_type=self._compute_type, kv_cache_type=self._kv_cache_type)
        else:
            model = _model_files.load(os.fspath(self._model_path), compute_type=self._compute_type,
                                      kv_cache_type=self._kv_cache_type, decoding_rules=self._decoding_rules)
        with self._lock:
            self._model = model
        self._plan(_DEFAULT_BATCH, _DEFAULT_BATCH_TOKENS, _DEFAULT_BEAM, _DEFAULT_TARGET)  # errors show here

    def unload_model(self, to_cpu: bool = False) -> None:
        """Frees the model and its plans until :meth:`load_model`, as CTranslate2's
        ``unload_model``: not while calls are queued or running (the model stays loaded
        and this does nothing), and nothing with ``to_cpu=True`` — the model is in CPU
        memory already, and stays loaded and usable."""
        if to_cpu:
            return
        with self._counts:
            if self._queued + self._active > 0:
                return
            with self._lock:
                self._plans.clear()
                self._last_plan = None
                self._model = None

    # ---- plans ----

    def _plan(self, batch: int, batch_tokens: int, beam: int, target: int) -> "_attend.Translator":
        key = (batch, batch_tokens, max(beam, 1), max(1, min(target, self.model.max_positions)))
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
                self._last_plan = plan
                return plan
        options = _attend.TranslatorOptions()
        options.inter_threads, options.intra_threads = self._inter_threads, self._intra_threads
        options.max_batch_size, options.max_batch_tokens = key[0], key[1]
        options.max_beam_size, options.max_target_length = key[2], key[3]
        plan = _attend.Translator(self.model, options)
        plan.set_profiling(self._profiling)
        with self._lock:
            self._plans[key] = plan
            while len(self._plans) > _MAX_CACHED_PLANS:
                self._plans.popitem(last=False)
            self._last_plan = plan
        return plan

    def _plan_for(self, max_batch_size: int, batch_type: str, beam: int, target: int, method: str) -> "_attend.Translator":
        if batch_type not in ("examples", "tokens"):
            raise _refuse(method, f"batch_type={batch_type!r}", "must be 'examples' or 'tokens'")
        # The engine field it becomes has its range: named here as the caller's argument.
        highest = _LIMITS["max_batch_tokens" if batch_type == "tokens" else "max_batch_size"]
        if not 0 <= max_batch_size <= highest:
            raise _refuse(method, f"max_batch_size={max_batch_size}",
                          f"must be in [0, {highest}] (0: no limit; batch_type={batch_type!r})")
        if batch_type == "tokens" and max_batch_size > 0:
            return self._plan(_DEFAULT_BATCH, max_batch_size, beam, target)
        # 0 is CTranslate2's "one batch": attend splits into its plan's batches, which
        # changes no result (padding never reaches a real row), only the memory used.
        return self._plan(max_batch_size or _DEFAULT_BATCH, _DEFAULT_BATCH_TOKENS, beam, target)

    # ---- options ----

    def _decoding_options(self, method: str, *, beam_size: int, patience: float, num_hypotheses: int,
                          length_penalty: float, coverage_penalty: float, repetition_penalty: float,
                          no_repeat_ngram_size: int, disable_unk: bool, suppress_sequences: Optional[List[List[str]]],
                          end_token: Optional[Union[str, List[str], List[int]]], return_end_token: bool,
                          prefix_bias_beta: float, max_input_length: int, max_decoding_length: int,
                          min_decoding_length: int, use_vmap: bool, return_logits_vocab: bool,
                          return_attention: Union[bool, str],
                          return_alternatives: bool, min_alternative_expansion_prob: float, sampling_topk: int,
                          sampling_topp: float, sampling_temperature: float, replace_unknowns: bool,
                          source_lang: str = "", target_lang: str = ""
                          ) -> "_attend.TranslationOptions":
        if use_vmap and not self.model.has_vocabulary_map:
            raise _refuse(method, "use_vmap=True", "needs the model's vocabulary map (vmap.txt in its directory), "
                                                   "and it has none")
        if return_logits_vocab:
            raise _refuse(method, "return_logits_vocab=True", "is not supported: attend returns no vocabulary logits")
        if max_decoding_length < 1:
            raise _refuse(method, f"max_decoding_length={max_decoding_length}", "must be ≥ 1")
        if min_decoding_length > max_decoding_length:  # CTranslate2's words kept: scripts match on them
            raise _refuse(method, f"min_decoding_length={min_decoding_length}",
                          f"is greater than max_decoding_length={max_decoding_length} (the minimum decoding length "
                          "must not be greater than the maximum decoding length)")
        if not isinstance(return_attention, bool) and return_attention != "all":
            raise _refuse(method, f"return_attention={return_attention!r}",
                          "must be True, False or 'all' (every layer and head too)")
        o = _attend.TranslationOptions()
        o.beam_size, o.num_hypotheses, o.length_penalty = beam_size, num_hypotheses, length_penalty
        o.patience, o.coverage_penalty, o.repetition_penalty = patience, coverage_penalty, repetition_penalty
        o.no_repeat_ngram_size, o.disable_unk = no_repeat_ngram_size, disable_unk
        o.suppress_sequences = [_tokens(method, f"suppress_sequences[{i}]", s) for i, s in enumerate(suppress_sequences or [])]
        if end_token is None:  # the model's end-of-sequence; [] is no end token at all (CTranslate2)
            o.end_token = None
        elif isinstance(end_token, str):
            o.end_token = _tokens(method, "end_token", [end_token])
        else:
            ends = list(end_token)
            if ends and _is_id(ends[0]):
                o.end_token = self.model.decode_tokens([_arguments.integer(method, f"end_token[{i}]", t)
                                                        for i, t in enumerate(ends)])
            else:
                o.end_token = _tokens(method, "end_token", ends)
        o.return_end_token, o.prefix_bias_beta, o.max_input_length = return_end_token, prefix_bias_beta, max_input_length
        # The model's positions bound any output; past them attend stops where
        # CTranslate2 would go on with positions the model never saw in training.
        o.max_length = min(max_decoding_length, self.model.max_positions)
        o.min_length = min_decoding_length
        # "all" (attend's): CTranslate2's alignment in `attention`, and every layer and
        # head along the best hypothesis in `attention_heads`, recomputed after decoding.
        o.return_attention, o.return_attention_heads = bool(return_attention), return_attention == "all"
        o.return_alternatives = return_alternatives
        o.min_alternative_expansion_prob, o.replace_unknowns = min_alternative_expansion_prob, replace_unknowns
        # CTranslate2 samples unless top-k is 1 (then top-p and temperature do nothing).
        o.sampling = sampling_topk != 1
        o.sampling_topk, o.sampling_topp, o.temperature = max(sampling_topk, 0), sampling_topp, sampling_temperature
        o.seed = _random_seed
        if self.model.has_generation_defaults:  # generate()'s early_stopping, which no CTranslate2 keyword sets
            o.early_stopping = self.model.default_options().early_stopping
        o.source_lang, o.target_lang = str(source_lang), str(target_lang)
        o.use_vmap = use_vmap
        return o

    # ---- asynchronous calls ----

    def _reset_after_fork(self) -> None:
        """In a forked child: the parent's worker threads do not exist here, and a lock
        or a queue slot may have been held by one of them; start afresh (the next
        asynchronous call makes its own workers). The parent's pending calls are not
        the child's."""
        self._lock = threading.Lock()
        self._counts = threading.Lock()
        self._executor = None
        self._queue_slots = threading.BoundedSemaphore(self._max_queued) if self._max_queued else None
        self._queued = self._active = 0

    def _submit(self, work: Callable[[], List[Any]], count: int) -> List[AsyncResult]:
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    executor = concurrent.futures.ThreadPoolExecutor(self._inter_threads, "attend")
                    # A worker waiting before the first call is queued, as CTranslate2's pool
                    # has them: a call then counts as queued until a worker takes it, instead
                    # of the new thread running it while the caller is still in submit().
                    executor.submit(lambda: None).result()
                    self._executor = executor
        if self._queue_slots is not None:
            self._queue_slots.acquire()
        with self._counts:
            self._queued += 1

        def run() -> List[Any]:
            try:
                with self._running(was_queued=True):
                    return work()
            finally:
                if self._queue_slots is not None:
                    self._queue_slots.release()

        future = self._executor.submit(run)
        return [AsyncResult(future, i) for i in range(count)]

    # ---- translation ----

    @_values_reach_result
    @_generation_defaults
    @_arguments.checked()
    def translate_batch(self, source: Any, target_prefix: Optional[List[Optional[List[Any]]]] = None, *,
                        max_batch_size: int = 0, batch_type: str = "examples", asynchronous: bool = False,
                        beam_size: int = 2, patience: float = 1, num_hypotheses: int = 1, length_penalty: float = 1,
                        coverage_penalty: float = 0, repetition_penalty: float = 1, no_repeat_ngram_size: int = 0,
                        disable_unk: bool = False, suppress_sequences: Optional[List[List[str]]] = None,
                        end_token: Optional[Union[str, List[str], List[int]]] = None, return_end_token: bool = False,
                        prefix_bias_beta: float = 0, max_input_length: int = 1024, max_decoding_length: int = 256,
                        min_decoding_length: int = 1, use_vmap: bool = False, return_scores: bool = False,
                        return_logits_vocab: bool = False, return_attention: Union[bool, str] = False,
                        return_alternatives: bool = False, min_alternative_expansion_prob: float = 0,
                        sampling_topk: int = 1, sampling_topp: float = 1, sampling_temperature: float = 1,
                        replace_unknowns: bool = False, source_lang: str = "", target_lang: str = "",
                        callback: Optional[Callable[[GenerationStepResult], bool]] = None
                        ) -> Union[List[TranslationResult], List[AsyncResult]]:
        """Translates a batch of sources, as ``ctranslate2.Translator.translate_batch``.

        ``source`` is a list of token lists (``[["▁Hello", "▁world"]]``), of id lists, or
        integer arrays (a 2-D array is one sentence per row); ``target_prefix`` has one
        (possibly ``None``) forced prefix per source, of the same kind. Every keyword is
        CTranslate2's, with its default — but on a Hugging Face directory, a decoding
        keyword left out (beam_size, max/min_decoding_length, length_penalty,
        no_repeat_ngram_size, suppress_sequences, …) takes the directory's
        generation_config.json default, as ``generate()`` does; results are :class:`TranslationResult` in
        input order (``asynchronous=True``: objects with ``result()`` and ``done()``).
        ``callback(GenerationStepResult) -> bool`` sees each token as it is chosen
        (``beam_size=1``); returning True stops that sentence (``batch_id``; with sampled
        ``num_hypotheses``, that draw) at this token, as CTranslate2's: its hypothesis keeps
        the tokens so far, with no ``is_last`` step, and the other sentences go on to
        their end. ``asynchronous=True`` copies ``source`` and ``target_prefix`` when
        called: changing them afterwards changes nothing. ``return_attention="all"``
        (attend's) fills ``attention`` as ``True`` does and ``attention_heads`` with every
        layer and head along the best hypothesis (:class:`attend.AttentionHeads`).
        ``target_lang`` (attend's, Hugging Face models with language codes: ``"fra_Latn"``,
        ``"fr"``, ``"fr_XX"``) forces the target language's token first, as
        ``generate(forced_bos_token_id=...)``; the tokens or ids given are the source as the
        model reads it, its language token included, so ``source_lang`` is for
        :meth:`translate_text`.
        """
        arguments = dict(locals())
        del arguments["self"]
        return self._translate_batch(0, **arguments)

    def _translate_batch(self, first_index: int, source: Any, target_prefix: Any, max_batch_size: int, batch_type: str,
                         asynchronous: bool, return_scores: bool,
                         callback: Optional[Callable[[GenerationStepResult], bool]], **decoding: Any
                         ) -> Union[List[TranslationResult], List[AsyncResult]]:
        """translate_batch with its sentences numbered from `first_index`: sentence i
        draws its samples (and is named in messages) as sentence first_index + i, so a
        stream cut into chunks draws what one call over it draws."""
        method = "translate_batch"
        if decoding.get("source_lang"):
            raise _refuse(method, f"source_lang={decoding['source_lang']!r}", "applies to text (translate_text): tokens and ids "
                          "given here carry the source's language token themselves")
        options = self._decoding_options(method, **decoding)
        beam_size, num_hypotheses = decoding["beam_size"], decoding["num_hypotheses"]
        # Sampled draws and alternatives each take a row of the plan, as beams do.
        rows = max(beam_size, num_hypotheses) if options.sampling or decoding["return_alternatives"] else beam_size
        plan = self._plan_for(max_batch_size, batch_type, rows, decoding["max_decoding_length"], method)
        # Empty sources tell nothing: their prefixes may (CTranslate2 takes tokens then).
        prefix_kind = None if target_prefix is None else _input_kind(target_prefix, "target_prefix")
        kind = _input_kind(source, "source") or prefix_kind or "tokens"
        if asynchronous:
            source, target_prefix = _snapshot(source), _snapshot(target_prefix)
        count = len(source)
        return_attention = decoding["return_attention"]

        def work() -> List[TranslationResult]:
            return self._translate(plan, kind, source, target_prefix, options, return_scores, return_attention,
                                   callback, first_index)

        if asynchronous:
            return self._submit(work, count)
        with self._running():
            return work()

    def _translate(self, plan: "_attend.Translator", kind: str, source: Any, target_prefix: Any,
                   options: "_attend.TranslationOptions", return_scores: bool, return_attention: Union[bool, str],
                   callback: Optional[Callable[[GenerationStepResult], bool]], first_index: int = 0
                   ) -> List[TranslationResult]:
        if len(source) == 0:
            return []
        on_token = None
        if callback is not None:
            decode = self.model.decode_tokens if self.model.has_vocabulary else None

            def on_token(s: "_attend.TokenStep") -> bool:
                token = decode([s.id])[0] if decode else None
                return bool(callback(GenerationStepResult(s.step, s.index, s.id, s.hypothesis, token,
                                                          s.log_prob if return_scores else None, s.is_last)))
        if kind == "tokens":
            raw = plan.translate_tokens(source, options, target_prefix, on_token, first_index)  # each token checked there
            hypotheses = lambda h: h.tokens  # noqa: E731
        else:
            prefixes = None
            if target_prefix is not None:
                prefixes = [p if p is not None else [] for p in target_prefix]
            raw = plan.translate_ids(source, options, prefixes, on_token, first_index)
            hypotheses = lambda h: h.ids  # noqa: E731
        return [_result(r, hypotheses, return_scores, return_attention) for r in raw]

    @_generation_defaults
    @_arguments.checked(keywords_of=translate_batch)
    def translate_iterable(self, source: Iterable[Any], target_prefix: Optional[Iterable[Any]] = None,
                           max_batch_size: int = 32, batch_type: str = "examples", **kwargs: Any
                           ) -> Iterator[TranslationResult]:
        """Translates a stream of any length, as ``ctranslate2.Translator.translate_iterable``:
        reads ``max_batch_size × 16`` examples at a time, translates them while reading
        on, and yields one :class:`TranslationResult` per example in input order. Memory
        stays bounded by the chunks in flight. ``kwargs``: any ``translate_batch`` option."""
        iterables = [source] if target_prefix is None else [source, target_prefix]

        def translate_chunk(first: int, streams: Tuple[List[Any], ...], options: Dict[str, Any]) -> List[AsyncResult]:
            # Example i of the stream is sentence i, whatever chunk it is read in: its
            # draws are those translate_batch gives it in one call over the stream.
            bound = _TRANSLATE_BATCH.bind(self, *streams, **options)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            del arguments["self"]
            return self._translate_batch(first, **arguments)

        yield from self._process_iterable(translate_chunk, iterables, max_batch_size, batch_type, kwargs)

    def _process_iterable(self, process: Callable[[int, Tuple[List[Any], ...], Dict[str, Any]], List[AsyncResult]],
                          iterables: List[Iterable[Any]], max_batch_size: int, batch_type: str,
                          kwargs: Dict[str, Any]) -> Iterator[Any]:
        """Reads the iterables in chunks and yields `process(first, chunk, options)`'s
        results in order, `first` being the index of the chunk's first example in the
        stream."""
        if max_batch_size < 1:
            raise ValueError("max_batch_size must be ≥ 1")
        kwargs = dict(kwargs, max_batch_size=max_batch_size, batch_type=batch_type, asynchronous=True)
        read_size = max_batch_size * 16 if max_batch_size > 1 else max_batch_size
        pending: collections.deque = collections.deque()
        in_flight = 2 * self._inter_threads  # chunks: one translating per worker, one read ahead
        first = 0
        for streams in _chunks(iterables, read_size, batch_type):
            pending.append(process(first, streams, kwargs))
            first += len(streams[0])
            while pending and (len(pending) > in_flight or all(r.done() for r in pending[0])):
                for r in pending.popleft():
                    yield r.result()
        while pending:
            for r in pending.popleft():
                yield r.result()

    @_generation_defaults
    @_arguments.checked()
    def generate_tokens(self, source: List[Any], target_prefix: Optional[List[Any]] = None, *,
                        max_decoding_length: int = 256, min_decoding_length: int = 1, sampling_topk: int = 1,
                        sampling_topp: float = 1, sampling_temperature: float = 1, return_log_prob: bool = False,
                        repetition_penalty: float = 1, no_repeat_ngram_size: int = 0, disable_unk: bool = False,
                        suppress_sequences: Optional[List[List[str]]] = None,
                        end_token: Optional[Union[str, List[str], List[int]]] = None, max_input_length: int = 1024,
                        use_vmap: bool = False) -> Iterator[GenerationStepResult]:
        """Yields the tokens of one source's translation as they are generated, as
        ``ctranslate2.Translator.generate_tokens`` (greedy or sampling; the last one has
        ``is_last=True``). Closing the generator early stops the decoding."""
        steps: "queue.Queue[Any]" = queue.Queue()
        closed = threading.Event()
        done = object()

        def on_step(step: GenerationStepResult) -> bool:
            steps.put(step)
            return closed.is_set()

        def run() -> None:
            try:
                self.translate_batch(
                    [source], [target_prefix] if target_prefix is not None else None, beam_size=1, num_hypotheses=1,
                    max_decoding_length=max_decoding_length, min_decoding_length=min_decoding_length,
                    sampling_topk=sampling_topk, sampling_topp=sampling_topp, sampling_temperature=sampling_temperature,
                    return_scores=return_log_prob, repetition_penalty=repetition_penalty,
                    no_repeat_ngram_size=no_repeat_ngram_size, disable_unk=disable_unk,
                    suppress_sequences=suppress_sequences, end_token=end_token, max_input_length=max_input_length,
                    use_vmap=use_vmap, callback=on_step)
            except BaseException as e:  # handed to the consumer, which re-raises it
                steps.put(e)
            steps.put(done)

        thread = threading.Thread(target=run, name="attend-generate-tokens", daemon=True)
        thread.start()
        try:
            while True:
                item = steps.get()
                if item is done:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            closed.set()
            thread.join()

    # ---- scoring ----

    @_values_reach_result
    @_arguments.checked()
    def score_batch(self, source: Any, target: Any, *, max_batch_size: int = 0, batch_type: str = "examples",
                    max_input_length: int = 1024, offset: int = 0, asynchronous: bool = False
                    ) -> Union[List[ScoringResult], List[AsyncResult]]:
        """Log-probabilities of given targets, as ``ctranslate2.Translator.score_batch``:
        each :class:`ScoringResult` has the target's tokens then the end-of-sequence
        token, and the log-probability of each given the source and the tokens before.
        ``offset`` leaves the first tokens out of the result (and their log-probabilities:
        past the end, both are empty). ``max_input_length`` (0: none) cuts each source as
        translation does and each target to ``max_input_length - 1`` tokens before its
        end-of-sequence, as CTranslate2 does. ``asynchronous=True`` copies ``source`` and
        ``target`` when called."""
        method = "score_batch"
        source_kind, target_kind = _input_kind(source, "source"), _input_kind(target, "target")
        kind = source_kind or target_kind or "tokens"  # empty sources tell nothing: their targets may
        if asynchronous:
            source, target = _snapshot(source), _snapshot(target)
        if len(source) != len(target):
            raise _refuse(method, "target", f"has {len(target)} examples for {len(source)} sources")
        if offset < 0:
            raise _refuse(method, f"offset={offset}", "must be ≥ 0")
        longest = max((len(t) for t in target), default=0)
        # Targets and their end token, rounded up so that most calls share a plan.
        plan = self._plan_for(max_batch_size, batch_type, 1, max(64, 1 << longest.bit_length()), method)

        def work() -> List[ScoringResult]:
            if len(source) == 0:
                return []
            if kind == "tokens":
                raw = plan.score_tokens(source, target, max_input_length)  # each token checked there
                eos = self.model.decode_tokens([self.model.special_ids.eos])
                return [ScoringResult((r.tokens + eos)[offset:], r.log_probs[offset:]) for r in raw]
            raw = plan.score_ids(source, target, max_input_length)
            eos_id = [self.model.special_ids.eos]
            return [ScoringResult((r.ids + eos_id)[offset:], r.log_probs[offset:]) for r in raw]

        if asynchronous:
            return self._submit(work, len(source))
        with self._running():
            return work()

    @_arguments.checked(keywords_of=score_batch)
    def score_iterable(self, source: Iterable[Any], target: Iterable[Any], max_batch_size: int = 64,
                       batch_type: str = "examples", **kwargs: Any) -> Iterator[ScoringResult]:
        """Scores a stream of any length, as ``ctranslate2.Translator.score_iterable``:
        one :class:`ScoringResult` per example, in input order, memory bounded."""
        # Scoring draws nothing: a chunk is scored as the same examples in one call are.
        yield from self._process_iterable(lambda first, streams, options: self.score_batch(*streams, **options),
                                          [source, target], max_batch_size, batch_type, kwargs)

    # ---- files: CTranslate2's translate_file and score_file (_files.py reads and writes them) ----

    @_generation_defaults
    @_arguments.checked()
    def translate_file(self, source_path: Union[str, os.PathLike], output_path: Union[str, os.PathLike],
                       target_path: Optional[Union[str, os.PathLike]] = None, *, max_batch_size: int = 32,
                       read_batch_size: int = 0, batch_type: str = "examples", beam_size: int = 2,
                       patience: float = 1, num_hypotheses: int = 1, length_penalty: float = 1,
                       coverage_penalty: float = 0, repetition_penalty: float = 1, no_repeat_ngram_size: int = 0,
                       disable_unk: bool = False, suppress_sequences: Optional[List[List[str]]] = None,
                       end_token: Optional[Union[str, List[str], List[int]]] = None, prefix_bias_beta: float = 0,
                       max_input_length: int = 1024, max_decoding_length: int = 256, min_decoding_length: int = 1,
                       use_vmap: bool = False, with_scores: bool = False, sampling_topk: int = 1,
                       sampling_topp: float = 1, sampling_temperature: float = 1, replace_unknowns: bool = False,
                       source_tokenize_fn: Optional[Callable[[str], List[str]]] = None,
                       target_tokenize_fn: Optional[Callable[[str], List[str]]] = None,
                       target_detokenize_fn: Optional[Callable[[List[str]], str]] = None) -> ExecutionStats:
        """Translates a text file, as ``ctranslate2.Translator.translate_file``: one source
        per line of ``source_path`` (tokens separated by spaces, or split by
        ``source_tokenize_fn``), optionally a target prefix per line of ``target_path``
        (an empty line: none; split by ``target_tokenize_fn`` with a source tokenizer),
        written to ``output_path`` one line per hypothesis (``num_hypotheses`` per
        example), tokens joined by spaces or by ``target_detokenize_fn``, each preceded by
        ``score |||`` with ``with_scores``. The file is read ``read_batch_size`` examples
        (or tokens, with ``batch_type="tokens"``; 0: 16 × ``max_batch_size``) at a time,
        translated in batches of ``max_batch_size``; memory stays bounded whatever its
        length. Sampling draws by line number, so outputs do not depend on the batch
        sizes. Returns :class:`ExecutionStats`. The decoding options are
        ``translate_batch``'s."""
        method = "translate_file"
        _files.check_hooks(method, source_tokenize_fn=source_tokenize_fn, target_tokenize_fn=target_tokenize_fn,
                           target_detokenize_fn=target_detokenize_fn, target_file=target_path is not None,
                           scoring=False)
        options = self._decoding_options(
            method, beam_size=beam_size, patience=patience, num_hypotheses=num_hypotheses,
            length_penalty=length_penalty, coverage_penalty=coverage_penalty, repetition_penalty=repetition_penalty,
            no_repeat_ngram_size=no_repeat_ngram_size, disable_unk=disable_unk, suppress_sequences=suppress_sequences,
            end_token=end_token, return_end_token=False, prefix_bias_beta=prefix_bias_beta,
            max_input_length=max_input_length, max_decoding_length=max_decoding_length,
            min_decoding_length=min_decoding_length, use_vmap=use_vmap, return_logits_vocab=False,
            return_attention=False, return_alternatives=False, min_alternative_expansion_prob=0,
            sampling_topk=sampling_topk, sampling_topp=sampling_topp, sampling_temperature=sampling_temperature,
            replace_unknowns=replace_unknowns)
        rows = max(beam_size, num_hypotheses) if options.sampling else beam_size
        plan = self._plan_for(max_batch_size, batch_type, rows, max_decoding_length, method)
        read_size = self._read_size(method, max_batch_size, read_batch_size, batch_type)
        sources = _files.tokenized(method, "source_path", source_path, source_tokenize_fn, "source_tokenize_fn")
        if target_path is None:
            examples: Iterator[tuple] = ((tokens, None) for tokens in sources)
        else:
            prefixes = _files.tokenized(method, "target_path", target_path,
                                        target_tokenize_fn if source_tokenize_fn is not None else None,
                                        "target_tokenize_fn")
            examples = _files.parallel(method, sources, prefixes, "source_path", "target_path")
        stats = ExecutionStats()
        start = time.perf_counter()
        with _files.output(method, output_path) as out:
            for chunk in _files.chunks(examples, read_size, batch_type):
                source = [e[0] for e in chunk]
                prefix = None if target_path is None else [e[1] or None for e in chunk]
                with self._running():
                    results = self._translate(plan, "tokens", source, prefix, options, with_scores, False, None,
                                              first_index=stats.num_examples)
                for result in results:
                    stats.num_examples += 1
                    stats.num_tokens += len(result.hypotheses[0])
                    for k, hypothesis in enumerate(result.hypotheses):
                        text = _files.detokenized(method, target_detokenize_fn, hypothesis)
                        out.write(f"{_files.number(result.scores[k])} ||| {text}\n" if with_scores else text + "\n")
        stats.total_time_in_ms = (time.perf_counter() - start) * 1000.0
        return stats

    @_arguments.checked()
    def score_file(self, source_path: Union[str, os.PathLike], target_path: Union[str, os.PathLike],
                   output_path: Union[str, os.PathLike], *, max_batch_size: int = 32, read_batch_size: int = 0,
                   batch_type: str = "examples", max_input_length: int = 1024, offset: int = 0,
                   with_tokens_score: bool = False, source_tokenize_fn: Optional[Callable[[str], List[str]]] = None,
                   target_tokenize_fn: Optional[Callable[[str], List[str]]] = None,
                   target_detokenize_fn: Optional[Callable[[List[str]], str]] = None) -> ExecutionStats:
        """Scores a parallel text file, as ``ctranslate2.Translator.score_file``: each line
        of ``output_path`` is ``<score> ||| <target>`` — the target's tokens then the
        end-of-sequence token, joined by spaces or by ``target_detokenize_fn``; the score
        is the mean log-probability of those tokens — and, with ``with_tokens_score``,
        ``||| <log p of each token>``. The three tokenize functions go together (all or
        none). Read, batched and bounded as :meth:`translate_file`. Returns
        :class:`ExecutionStats` (tokens: scored tokens, end-of-sequence included)."""
        method = "score_file"
        _files.check_hooks(method, source_tokenize_fn=source_tokenize_fn, target_tokenize_fn=target_tokenize_fn,
                           target_detokenize_fn=target_detokenize_fn, target_file=True, scoring=True)
        read_size = self._read_size(method, max_batch_size, read_batch_size, batch_type)
        sources = _files.tokenized(method, "source_path", source_path, source_tokenize_fn, "source_tokenize_fn")
        targets = _files.tokenized(method, "target_path", target_path, target_tokenize_fn, "target_tokenize_fn")
        stats = ExecutionStats()
        start = time.perf_counter()
        with _files.output(method, output_path) as out:
            examples = _files.parallel(method, sources, targets, "source_path", "target_path")
            for chunk in _files.chunks(examples, read_size, batch_type):
                results = self.score_batch([e[0] for e in chunk], [e[1] for e in chunk], max_batch_size=max_batch_size,
                                           batch_type=batch_type, max_input_length=max_input_length, offset=offset)
                for result in results:
                    stats.num_examples += 1
                    stats.num_tokens += len(result.log_probs)
                    line = f"{_files.number(_files.float32_mean(result.log_probs))} ||| " \
                           f"{_files.detokenized(method, target_detokenize_fn, result.tokens)}"
                    if with_tokens_score:
                        line += " |||" + "".join(" " + _files.number(p) for p in result.log_probs)
                    out.write(line + "\n")
        stats.total_time_in_ms = (time.perf_counter() - start) * 1000.0
        return stats

    @staticmethod
    def _read_size(method: str, max_batch_size: int, read_batch_size: int, batch_type: str) -> int:
        """Examples (or tokens) read at a time: CTranslate2's default, 16 batches (one
        with max_batch_size 1); max_batch_size 0 reads as if it were attend's default."""
        if batch_type not in ("examples", "tokens"):
            raise _refuse(method, f"batch_type={batch_type!r}", "must be 'examples' or 'tokens'")
        if max_batch_size < 0:
            raise _refuse(method, f"max_batch_size={max_batch_size}", "must be ≥ 0 (0: attend's default batches)")
        if read_batch_size < 0:
            raise _refuse(method, f"read_batch_size={read_batch_size}", "must be ≥ 0 (0: 16 × max_batch_size)")
        if read_batch_size > 0:
            return read_batch_size
        batch = max_batch_size or _DEFAULT_BATCH
        return batch if batch == 1 else 16 * batch

    # ---- attend's own ----

    @_generation_defaults
    @_arguments.checked(keywords_of=translate_batch)
    def translate_text(self, source: Sequence[str], target_prefix: Optional[Sequence[Optional[str]]] = None,
                       **kwargs: Any) -> List[TranslationResult]:
        """Translates plain text through the model's tokenizer (attend's own):
        ``translate_text(["Hello world."])[0].hypotheses[0]`` is a string. ``kwargs``:
        any ``translate_batch`` option except ``asynchronous`` and ``callback``;
        ``source_lang``/``target_lang`` (Hugging Face models with language codes, the
        model's own: ``"eng_Latn"``, ``"en"``, ``"en_XX"``, ``">>fra<<"``) place the
        language tokens as the model's transformers tokenizer and ``generate()`` do. On a
        Hugging Face directory the decoding options not given are its generation_config.json's
        (see :meth:`translate_batch`): ``translate_text(lines)`` gives ``generate()``'s text."""
        method = "translate_text"
        if isinstance(source, str):
            raise TypeError("translate_text takes a list of strings (one per sentence)")
        for name in ("asynchronous", "callback"):
            if kwargs.get(name):
                raise _refuse(method, name, "is not supported here: use translate_batch")
        max_batch_size = kwargs.pop("max_batch_size", 0)
        batch_type = kwargs.pop("batch_type", "examples")
        return_scores = kwargs.pop("return_scores", False)
        defaults = dict(beam_size=2, patience=1, num_hypotheses=1, length_penalty=1, coverage_penalty=0,
                        repetition_penalty=1, no_repeat_ngram_size=0, disable_unk=False, suppress_sequences=None,
                        end_token=None, return_end_token=False, prefix_bias_beta=0, max_input_length=1024,
                        max_decoding_length=256, min_decoding_length=1, use_vmap=False, return_logits_vocab=False,
                        return_attention=False, return_alternatives=False, min_alternative_expansion_prob=0,
                        sampling_topk=1, sampling_topp=1, sampling_temperature=1, replace_unknowns=False,
                        source_lang="", target_lang="")
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{method}: unexpected argument(s) {', '.join(sorted(unknown))}")
        args = dict(defaults, **kwargs)
        options = self._decoding_options(method, **args)
        plan = self._plan_for(max_batch_size, batch_type, args["beam_size"], args["max_decoding_length"], method)
        prefixes = [p or "" for p in target_prefix] if target_prefix else []
        with self._running():
            raw = plan.translate_text(list(source), options, prefixes, None)
        return [_result(r, lambda h: h.text, return_scores, args["return_attention"]) for r in raw]

    def attention_heads(self, source: Any, target: Any) -> "_attend.AttentionHeads":
        """Every layer and head's attention along a given output (attend's own): ``source``
        (tokens or ids, one sentence) through the encoder, then the decoder teacher-forced
        over ``target`` — the tokens it is to produce; end with the end token (``"</s>"``)
        to see the step that ends it. A translation's own output gives what
        ``return_attention="all"`` gives; a reference shows what the model attends to
        while producing it. Returns :class:`attend.AttentionHeads` (NumPy arrays
        ``encoder_self``, ``decoder_self``, ``cross`` and the tokens; ``save(path)``
        writes the .npz of ``attend translate --attention-all``)."""
        if _input_kind([source, target], "source and target") != "ids":
            source = self.model.encode_tokens(list(source), "source")
            target = self.model.encode_tokens(list(target), "target")
        plan = self._plan(_DEFAULT_BATCH, _DEFAULT_BATCH_TOKENS, 1, max(_DEFAULT_TARGET, len(target)))
        return plan.attention_heads(source, target)

    def info(self) -> "_attend.ModelInfo":
        """What loading the model found and checked: format, tensors, parameters, kernels."""
        return self.model.info()

    def plan(self) -> str:
        """The static execution plan of the last call (steps, shapes, arena offsets,
        FLOPs and bytes per step), as ``attend plan`` prints it."""
        plan = self._last_plan or self._plan(_DEFAULT_BATCH, _DEFAULT_BATCH_TOKENS, _DEFAULT_BEAM, _DEFAULT_TARGET)
        return plan.plan_description()

    def set_profiling(self, on: bool = True) -> None:
        """Times every plan step of the calls that follow (off by default)."""
        self._profiling = bool(on)
        with self._lock:
            plans = list(self._plans.values())
        for p in plans:
            p.set_profiling(self._profiling)

    def profile(self) -> List["_attend.StepProfile"]:
        """Seconds per plan step (phase, kind, name) and for the search, summed over the
        calls since profiling started or :meth:`reset_profile`, over every plan."""
        with self._lock:
            plans = list(self._plans.values())
        steps: "collections.OrderedDict[Tuple[str, str, str], float]" = collections.OrderedDict()
        for p in plans:
            for s in p.profile():
                key = (s.phase, s.kind, s.name)
                steps[key] = steps.get(key, 0.0) + s.seconds
        return [_StepTotal(*key, seconds) for key, seconds in steps.items()]

    def reset_profile(self) -> None:
        """Zeroes the profile."""
        with self._lock:
            plans = list(self._plans.values())
        for p in plans:
            p.reset_profile()

    def __repr__(self) -> str:
        return f"attend.Translator({self._model_path!r}, inter_threads={self._inter_threads}, " \
               f"intra_threads={self._intra_threads})"


# translate_batch's parameters and defaults, which translate_iterable's chunks take.
_TRANSLATE_BATCH = inspect.signature(Translator.translate_batch)

# Every translator of the process, so that a forked child resets each one's per-process
# state (the C++ thread teams restart themselves after fork).
_translators: "weakref.WeakSet[Translator]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for translator in list(_translators):
        translator._reset_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


class _StepTotal(collections.namedtuple("StepProfile", "phase kind name seconds")):
    """Time in one plan step summed over plans: phase ("encoder", "decoder", "search"),
    kind ("gemm", "self_attention", …), name ("decoder.layers.3.fc1"), seconds."""


def _result(raw: "_attend.TranslationResult", hypothesis: Callable[[Any], Any], return_scores: bool,
            return_attention: Union[bool, str]) -> TranslationResult:
    hyps = raw.hypotheses
    # The engine's score is CTranslate2's: Σ log p of the generated tokens (forced prefix
    # tokens left out) divided by the output's length^length_penalty.
    scores = [h.score for h in hyps] if return_scores else []
    attention = [h.attention for h in hyps] if return_attention else []
    heads = raw.attention_heads if return_attention == "all" else None
    return TranslationResult([hypothesis(h) for h in hyps], scores, attention, attention_heads=heads)


def _chunks(iterables: List[Iterable[Any]], size: int, batch_type: str) -> Iterator[Tuple[List[Any], ...]]:
    """Groups examples (tuples across the iterables) into chunks of `size` examples, or
    of `size` padded tokens with batch_type='tokens'. A chunk of examples goes as soon
    as it is full, before the next example is read: a reader may then reuse its rows."""
    if batch_type not in ("examples", "tokens"):
        raise ValueError(f"batch_type={batch_type!r} must be 'examples' or 'tokens'")
    examples = ((e,) for e in iterables[0]) if len(iterables) == 1 else itertools.zip_longest(*iterables)
    streams: Optional[Tuple[List[Any], ...]] = None
    longest = 0
    for example in examples:
        if streams is not None and batch_type == "tokens":
            longest = max(longest, len(example[0]))
            if (len(streams[0]) + 1) * longest > size:
                yield streams
                streams, longest = None, len(example[0])
        if streams is None:
            streams = tuple([] for _ in example)
            longest = len(example[0]) if example[0] is not None else 0
        for stream, element in zip(streams, example):
            if element is None and len(streams) > 1:
                raise ValueError("the input iterables do not have the same length")
            stream.append(element)
        if batch_type == "examples" and len(streams[0]) == size:
            yield streams
            streams = None
    if streams is not None:
        yield streams
