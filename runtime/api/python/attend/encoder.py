"""Encoder-only models (the BERT family) with the APIs their users already have.

* :class:`Encoder` — CTranslate2's ``ctranslate2.Encoder``: ``forward_batch(tokens or
  ids, lengths=None, token_type_ids=None)`` returns ``last_hidden_state`` and
  ``pooler_output`` (NumPy arrays here).
* :class:`SentenceEncoder` — sentence-transformers' ``SentenceTransformer.encode`` with
  its arguments and results (``np.ndarray [n, dim]`` float32), and ``similarity``.

Both read a Hugging Face / sentence-transformers directory as it is saved (or a
CTranslate2 converted encoder) and run it without padding; every call releases the GIL.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _attend


def _threads(inter_threads: int, intra_threads: int) -> dict:
    return {"inter_threads": inter_threads, "intra_threads": intra_threads}


class EncoderForwardOutput(NamedTuple):
    """``ctranslate2.EncoderForwardOutput``: ``last_hidden_state`` [batch, longest,
    hidden] (zeros past each sequence's length: attend computes no padding) and
    ``pooler_output`` [batch, hidden], or None for a model without a pooler."""

    last_hidden_state: np.ndarray
    pooler_output: Optional[np.ndarray]


class Encoder:
    """A drop-in for ``ctranslate2.Encoder`` over attend.

    ``Encoder(model_path, device="cpu", compute_type="default", inter_threads=1,
    intra_threads=0)``; arguments attend cannot honour (``device="cuda"``) raise
    ValueError naming them.
    """

    def __init__(self, model_path: str, device: str = "cpu", *, device_index: Union[int, Sequence[int]] = 0,
                 compute_type: str = "default", inter_threads: int = 1, intra_threads: int = 0,
                 max_queued_batches: int = 0, flash_attention: bool = False, tensor_parallel: bool = False,
                 files: Any = None, max_batch_size: int = 32, max_batch_tokens: int = 8192) -> None:
        if device != "cpu":
            raise ValueError(f"device={device!r}: attend runs on the CPU only")
        if tensor_parallel:
            raise ValueError("tensor_parallel: attend runs on one machine's CPU")
        if files is not None:
            raise ValueError("files: attend reads models from a directory")
        self._engine = _attend.Encoder(model_path, compute_type=compute_type, max_batch_size=max_batch_size,
                                       max_batch_tokens=max_batch_tokens, **_threads(inter_threads, intra_threads))
        self.model_path = model_path
        self.device = device
        self.compute_type = self._engine.info().compute_type

    def _ids(self, inputs: Any, lengths: Optional[Sequence[int]]) -> list:
        if lengths is not None:  # a [batch, longest] array of ids cut to each length
            return [list(np.asarray(row)[: int(n)]) for row, n in zip(inputs, lengths)]
        rows = list(inputs)
        if rows and rows[0] and isinstance(rows[0][0], str):
            return [[self._engine.token_to_id(t) for t in row] for row in rows]
        return rows

    def attention_heads(self, tokens: Any, token_type_ids: Optional[Sequence[int]] = None) -> Any:
        """Every layer and head's self-attention of one sequence (tokens, looked up in the
        model's vocabulary, or ids; attend's own): an :class:`attend.AttentionHeads` whose
        ``encoder_self`` is [layers, heads, length, length]; ``save(path)`` writes the .npz
        of ``attend embed --attention-all``."""
        return self._engine.attention_heads(self._ids([tokens], None)[0], token_type_ids)

    def text_attention_heads(self, text: str, pair: Optional[str] = None) -> Any:
        """The same for a text, or a sentence pair (a cross-encoder's query and passage),
        through the model's tokenizer.json as ``attend embed`` and ``classify`` tokenize it:
        ``source_texts`` and ``source_sequence_ids`` (0 sentence A, 1 sentence B, -1 a
        special token) name what each token is; ``save(path)`` keeps them for
        tools/attention_view.py and tools/plot_attention.py."""
        return self._engine.text_attention_heads(text, pair)

    def forward_batch(self, inputs: Any, lengths: Optional[Sequence[int]] = None,
                      token_type_ids: Optional[Sequence[Sequence[int]]] = None) -> EncoderForwardOutput:
        """The last hidden state (and pooler output) of each sequence: tokens (looked up in
        the model's vocabulary), ids, or an id array with ``lengths``."""
        ids = self._ids(inputs, lengths)
        types = None if token_type_ids is None else [list(t)[: len(i)] for t, i in zip(token_type_ids, ids)]
        last, pooler = self._engine.forward_ids(ids, types)
        return EncoderForwardOutput(last, pooler)

    def info(self) -> "_attend.ModelInfo":
        """What loading found and checked (`attend inspect`)."""
        return self._engine.info()


class SentenceEncoder:
    """``sentence_transformers.SentenceTransformer`` over attend: ``encode`` with its
    arguments and results, on the directory sentence-transformers saved."""

    def __init__(self, model_name_or_path: str, device: Optional[str] = None, *, compute_type: str = "default",
                 threads: int = 0, inter_threads: int = 0, intra_threads: int = 0, max_length: int = 0,
                 max_batch_tokens: int = 8192) -> None:
        if device not in (None, "cpu"):
            raise ValueError(f"device={device!r}: attend runs on the CPU only")
        self._engine = _attend.Encoder(model_name_or_path, compute_type=compute_type, threads=threads,
                                       inter_threads=inter_threads, intra_threads=intra_threads, max_length=max_length,
                                       max_batch_tokens=max_batch_tokens)
        self._info = self._engine.encoder_info

    @property
    def max_seq_length(self) -> int:
        """Tokens a sentence is cut to, special tokens included (sentence-transformers' max_seq_length)."""
        return self._info.max_length

    def get_sentence_embedding_dimension(self) -> int:
        """The embeddings' dimension (the last Dense module's, else the pooled hidden size)."""
        return self._info.embedding_dim

    def encode(self, sentences: Union[str, Iterable[str]], batch_size: int = 32, show_progress_bar: Optional[bool] = None,
               output_value: str = "sentence_embedding", precision: str = "float32", convert_to_numpy: bool = True,
               convert_to_tensor: bool = False, device: Optional[str] = None, normalize_embeddings: bool = False,
               prompt: Optional[str] = None, **kwargs: Any) -> Union[np.ndarray, list]:
        """Embeddings of ``sentences`` as sentence-transformers computes them: [n, dim]
        float32 (one 1-D array for a single string). ``normalize_embeddings`` L2-normalises
        on top of the model's own Normalize module. ``batch_size`` is accepted; attend
        batches by tokens without padding, so results do not depend on it."""
        if output_value != "sentence_embedding":
            raise ValueError(f"output_value={output_value!r}: attend gives sentence embeddings")
        if precision != "float32":
            raise ValueError(f"precision={precision!r}: attend gives float32 embeddings (compute_type sets the arithmetic)")
        if convert_to_tensor:
            raise ValueError("convert_to_tensor: attend returns NumPy arrays (no torch)")
        if kwargs:
            raise ValueError(f"unsupported argument(s): {', '.join(sorted(kwargs))}")
        single = isinstance(sentences, str)
        texts = [sentences] if single else list(sentences)
        if prompt:
            texts = [prompt + t for t in texts]
        embeddings = self._engine.embed(texts, 1 if normalize_embeddings else -1)
        if single:
            return embeddings[0]
        return embeddings if convert_to_numpy else list(embeddings)

    def tokenize(self, text: str) -> list:
        """The ids ``encode`` feeds the model for ``text`` (special tokens included, truncated)."""
        return self._engine.tokenize(text)[0]

    def attention_heads(self, sentence: str, pair: Optional[str] = None) -> Any:
        """Every layer and head's self-attention of a sentence (or a pair) as ``encode``
        tokenizes it: :meth:`Encoder.text_attention_heads`."""
        return self._engine.text_attention_heads(sentence, pair)

    @staticmethod
    def similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Cosine similarity of every row of ``a`` with every row of ``b`` (sentence-transformers'
        default similarity), [len(a), len(b)]."""
        a = np.atleast_2d(np.asarray(a, dtype=np.float32))
        b = np.atleast_2d(np.asarray(b, dtype=np.float32))
        a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
        b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
        return a @ b.T
