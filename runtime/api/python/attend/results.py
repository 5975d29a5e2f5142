"""Result types with CTranslate2's names and fields, so code written for
``ctranslate2.TranslationResult`` and friends reads attend's unchanged."""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass, field
from typing import Any, List, Optional


@dataclass(slots=True)
class TranslationResult:
    """The hypotheses of one source, best first (CTranslate2's ``TranslationResult``).

    ``hypotheses[k]`` is a list of tokens when the source was tokens, a list of ids when
    it was ids, and a string for :meth:`attend.Translator.translate_text`. ``scores`` is
    filled when ``return_scores=True`` (log-probability divided by length^length_penalty,
    as CTranslate2 reports it), ``attention`` when ``return_attention=True``;
    ``logits`` stays empty (attend does not return vocabulary logits).
    ``attention_heads`` (attend's own, ``return_attention="all"``): every layer and head
    of the encoder self-, decoder self- and cross-attention along the best hypothesis,
    an :class:`attend.AttentionHeads`; None otherwise.
    """

    hypotheses: List[Any]
    scores: List[float] = field(default_factory=list)
    attention: List[List[List[float]]] = field(default_factory=list)
    logits: List[Any] = field(default_factory=list)
    attention_heads: Optional[Any] = None

    def __getitem__(self, index: int) -> dict:
        """CTranslate2 1.x's dictionary view: ``result[k]["tokens"]``, ``["score"]``."""
        item = {"tokens": self.hypotheses[index]}
        if self.scores:
            item["score"] = self.scores[index]
        if self.attention:
            item["attention"] = self.attention[index]
        return item

    def __len__(self) -> int:
        """The number of hypotheses."""
        return len(self.hypotheses)

    def __repr__(self) -> str:
        """CTranslate2's repr, to the character (scripts and tests compare it);
        ``attention_heads`` only when set."""
        heads = "" if self.attention_heads is None else f", attention_heads={self.attention_heads!r}"
        return (f"TranslationResult(hypotheses={self.hypotheses!r}, scores={self.scores!r}, "
                f"attention={self.attention!r}, logits={self.logits!r}{heads})")


@dataclass(slots=True)
class ScoringResult:
    """Log-probabilities of a given target (CTranslate2's ``ScoringResult``): one per
    token of ``tokens``, which ends with the end-of-sequence token."""

    tokens: List[Any]
    log_probs: List[float]

    @property
    def cumulated_score(self) -> float:
        """The sum of ``log_probs``."""
        return float(sum(self.log_probs))

    @property
    def normalized_score(self) -> float:
        """``cumulated_score`` divided by the number of scored tokens."""
        return self.cumulated_score / max(1, len(self.log_probs))

    def __repr__(self) -> str:
        """CTranslate2's repr."""
        return f"ScoringResult(tokens={self.tokens!r}, log_probs={self.log_probs!r})"


@dataclass(slots=True)
class GenerationStepResult:
    """One token as decoding chooses it (CTranslate2's ``GenerationStepResult``), given to
    a ``callback`` and yielded by :meth:`attend.Translator.generate_tokens`."""

    step: int
    batch_id: int
    token_id: int
    hypothesis_id: int
    token: Optional[str]
    log_prob: Optional[float]
    is_last: bool
    logits: Optional[Any] = None

    def __repr__(self) -> str:
        """CTranslate2's repr (its fields in its order)."""
        return (f"GenerationStepResult(step={self.step!r}, batch_id={self.batch_id!r}, token_id={self.token_id!r}, "
                f"hypothesis_id={self.hypothesis_id!r}, token={self.token!r}, log_prob={self.log_prob!r}, "
                f"logits={self.logits!r}, is_last={self.is_last!r})")


@dataclass(slots=True)
class ExecutionStats:
    """What :meth:`attend.Translator.translate_file` and ``score_file`` did
    (CTranslate2's ``ExecutionStats``): output tokens (translation: of each example's
    best hypothesis; scoring: scored tokens, end-of-sequence included), examples, and
    the wall time in milliseconds."""

    num_tokens: int = 0
    num_examples: int = 0
    total_time_in_ms: float = 0.0

    def __repr__(self) -> str:
        return (f"ExecutionStats(num_tokens={self.num_tokens!r}, num_examples={self.num_examples!r}, "
                f"total_time_in_ms={self.total_time_in_ms!r})")


class AsyncResult:
    """A result that may not be ready yet (``asynchronous=True``), like CTranslate2's
    ``AsyncTranslationResult`` / ``AsyncScoringResult``."""

    __slots__ = ("_future", "_index")

    def __init__(self, future: concurrent.futures.Future, index: int):
        self._future = future
        self._index = index

    def result(self) -> Any:
        """Waits for the result and returns it (re-raises the call's exception)."""
        return self._future.result()[self._index]

    def done(self) -> bool:
        """Whether the result is ready."""
        return self._future.done()


AsyncTranslationResult = AsyncResult
AsyncScoringResult = AsyncResult
