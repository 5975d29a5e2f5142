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

import time
from typing import Any, Callable, Iterable, List, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _attend

# A call into the engine runs without the GIL and cannot see Ctrl-C: Python runs a signal
# handler (KeyboardInterrupt) only between two calls. A long input therefore goes to the
# engine in pieces of about this many seconds each (sized from the pieces before), so
# that Ctrl-C stops it that soon and the encoder stays usable. Results do not depend on
# the pieces: a text's embedding does not depend on the texts beside it.
_PIECE_SECONDS = 0.25
_FIRST_PIECE = 64  # texts


def _in_pieces(items: Sequence[Any], run: Callable[[Sequence[Any]], Any]) -> List[Any]:
    """run(piece) over consecutive pieces of `items`, timed so that each takes about
    _PIECE_SECONDS; their results in order."""
    results, start, size = [], 0, _FIRST_PIECE
    while start < len(items) or not results:
        began = time.monotonic()
        results.append(run(items[start:start + size]))
        start += size
        seconds = time.monotonic() - began
        # Grow at most 4× (a piece of short texts may precede long ones), shrink at once.
        size = max(1, min(size * 4, int(size * _PIECE_SECONDS / max(seconds, 1e-6))))
    return results


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
                 files: Any = None, max_batch_size: int = 32, max_batch_tokens: int = 8192, max_length: int = 0) -> None:
        """``max_length`` (attend's): the longest sequence ``forward_batch`` accepts; 0 (the
        default) is the model's positions, as CTranslate2 (sentence-transformers'
        max_seq_length is about texts, not here)."""
        if device != "cpu":
            raise ValueError(f"device={device!r}: attend runs on the CPU only")
        if tensor_parallel:
            raise ValueError("tensor_parallel: attend runs on one machine's CPU")
        if files is not None:
            raise ValueError("files: attend reads models from a directory")
        self._engine = _attend.Encoder(model_path, compute_type=compute_type, max_batch_size=max_batch_size,
                                       max_batch_tokens=max_batch_tokens, max_length=max_length,
                                       **_threads(inter_threads, intra_threads))
        self.model_path = model_path
        self.device = device
        self.compute_type = self._engine.info().compute_type

    def _row(self, row: Any, i: int) -> list:
        """One sequence: token strings (looked up, an unknown one as the unknown token, as
        CTranslate2 does) or ids (a list or a 1-D array)."""
        if isinstance(row, (str, bytes)):
            raise TypeError(f"inputs[{i}] is a string; give each sequence as a list of tokens or ids")
        if isinstance(row, np.ndarray):
            if row.ndim != 1:
                raise ValueError(f"inputs[{i}] has shape {row.shape}; each sequence must be 1-D")
            return row.tolist()
        row = list(row)
        if any(isinstance(t, str) for t in row):
            if not all(isinstance(t, str) for t in row):
                raise TypeError(f"inputs[{i}] mixes token strings and ids")
            return [self._engine.token_to_id(t) for t in row]
        return row

    def _ids(self, inputs: Any, lengths: Optional[Sequence[int]]) -> list:
        if lengths is not None:  # a [batch, longest] array of ids cut to each length
            rows = np.asarray(inputs)
            lengths = np.asarray(lengths).reshape(-1)
            if rows.ndim != 2:
                raise ValueError(f"inputs has shape {rows.shape}; with lengths it must be [batch, longest]")
            if len(lengths) != len(rows):
                raise ValueError(f"lengths has {len(lengths)} entries for a batch of {len(rows)} sequences")
            if len(lengths) and (lengths.min() < 0 or lengths.max() > rows.shape[1]):
                raise ValueError(f"lengths must be in [0, {rows.shape[1]}] (the array's width)")
            return [rows[i, : int(n)].tolist() for i, n in enumerate(lengths)]
        if isinstance(inputs, np.ndarray) and inputs.ndim == 2:
            return inputs.tolist()
        return [self._row(row, i) for i, row in enumerate(inputs)]

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
        types = None
        if token_type_ids is not None:
            token_type_ids = list(token_type_ids)
            if len(token_type_ids) != len(ids):
                raise ValueError(f"token_type_ids has {len(token_type_ids)} rows for a batch of {len(ids)} sequences")
            types = [np.asarray(t).reshape(-1).tolist()[: len(i)] for t, i in zip(token_type_ids, ids)]
        pieces = _in_pieces(range(len(ids)), lambda r: self._engine.forward_ids(
            ids[r.start:r.stop], None if types is None else types[r.start:r.stop]))
        if len(pieces) == 1:
            return EncoderForwardOutput(*pieces[0])
        # [batch, longest, hidden], zeros past each sequence's length, as one call gives.
        longest = max(last.shape[1] for last, _ in pieces)
        last = np.zeros((len(ids), longest, pieces[0][0].shape[2]), dtype=np.float32)
        at = 0
        for piece, _ in pieces:
            last[at:at + len(piece), :piece.shape[1]] = piece
            at += len(piece)
        pooler = None if pieces[0][1] is None else np.concatenate([p for _, p in pieces])
        return EncoderForwardOutput(last, pooler)

    def info(self) -> "_attend.ModelInfo":
        """What loading found and checked (`attend inspect`)."""
        return self._engine.info()


class SentenceEncoder:
    """``sentence_transformers.SentenceTransformer`` over attend: ``encode`` with its
    arguments and results, its prompts (``prompts``, ``default_prompt_name``) and
    ``similarity`` (``similarity_fn_name``), on the directory sentence-transformers saved."""

    def __init__(self, model_name_or_path: str, device: Optional[str] = None, *, compute_type: str = "default",
                 threads: int = 0, inter_threads: int = 0, intra_threads: int = 0, max_length: int = 0,
                 max_batch_tokens: int = 8192) -> None:
        _check_device(device)
        self._engine = _attend.Encoder(model_name_or_path, compute_type=compute_type, threads=threads,
                                       inter_threads=inter_threads, intra_threads=intra_threads, max_length=max_length,
                                       max_batch_tokens=max_batch_tokens)
        self._info = self._engine.encoder_info
        # As sentence-transformers: "query" and "document" are known for every model (no
        # prompt unless the model defines one), then the model's own.
        self.prompts: dict = {"query": None, "document": None}
        self.prompts.update(dict(self._info.prompts))
        self.default_prompt_name: Optional[str] = self._info.default_prompt_name or None
        self.similarity_fn_name = self._info.similarity

    @property
    def max_seq_length(self) -> int:
        """Tokens a sentence is cut to, special tokens included (sentence-transformers' max_seq_length)."""
        return self._info.max_length

    def get_sentence_embedding_dimension(self) -> int:
        """The embeddings' dimension (the last Dense module's, else the pooled hidden size)."""
        return self._info.embedding_dim

    def _resolve_prompt(self, prompt: Optional[str], prompt_name: Optional[str]) -> str:
        """The text put before every sentence, as sentence-transformers resolves it: ``prompt``
        itself, else ``prompts[prompt_name]``, else the default prompt's."""
        if prompt is None:
            if prompt_name is not None:
                if prompt_name not in self.prompts:
                    raise ValueError(f"Prompt name '{prompt_name}' not found in the configured prompts dictionary "
                                     f"with keys {list(self.prompts.keys())!r}.")
                prompt = self.prompts[prompt_name]
            elif self.default_prompt_name is not None:
                prompt = self.prompts.get(self.default_prompt_name)
        if prompt is not None and not isinstance(prompt, str):
            raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
        return prompt or ""

    def encode(self, sentences: Any = None, prompt_name: Optional[str] = None, prompt: Optional[str] = None,
               batch_size: int = 32, show_progress_bar: Optional[bool] = None,
               output_value: str = "sentence_embedding", precision: str = "float32", convert_to_numpy: bool = True,
               convert_to_tensor: bool = False, device: Optional[str] = None, normalize_embeddings: bool = False,
               truncate_dim: Optional[int] = None, **kwargs: Any) -> Union[np.ndarray, list]:
        """Embeddings of ``sentences`` (sentence-transformers' ``inputs``) as sentence-transformers
        computes them: [n, dim] float32 (one 1-D array for a single string; for no sentences,
        what sentence-transformers returns: an empty array, or [] without convert_to_numpy).
        ``prompt`` is put before every sentence; else the model's prompt ``prompt_name``;
        else its ``default_prompt_name``'s. ``normalize_embeddings`` L2-normalises on top
        of the model's own Normalize module. ``batch_size`` must be ≥ 1; attend batches by
        tokens without padding, so results do not depend on it."""
        if sentences is None and "inputs" in kwargs:  # sentence-transformers 6's name
            sentences = kwargs.pop("inputs")
        _check_device(device)
        if output_value != "sentence_embedding":
            raise ValueError(f"output_value={output_value!r}: attend gives sentence embeddings")
        if precision != "float32":
            raise ValueError(f"precision={precision!r}: attend gives float32 embeddings (compute_type sets the arithmetic)")
        if convert_to_tensor:
            raise ValueError("convert_to_tensor: attend returns NumPy arrays (no torch)")
        if truncate_dim is not None:
            raise ValueError("truncate_dim: attend gives the model's whole embedding")
        if kwargs:
            raise ValueError(f"unsupported argument(s): {', '.join(sorted(kwargs))}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise TypeError(f"batch_size must be an int, got {type(batch_size).__name__}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size}.")
        single = isinstance(sentences, str)
        texts = [sentences] if single else _sentence_list(sentences)
        prefix = self._resolve_prompt(prompt, prompt_name)
        if not texts:
            return np.array([]) if convert_to_numpy else []
        normalize = 1 if normalize_embeddings else -1
        embeddings = np.concatenate(_in_pieces(texts, lambda piece: self._engine.embed(piece, normalize, prompt=prefix)))
        if single:
            return embeddings[0]
        return embeddings if convert_to_numpy else list(embeddings)

    def encode_query(self, sentences: Any = None, prompt_name: Optional[str] = None, prompt: Optional[str] = None,
                     **kwargs: Any) -> Union[np.ndarray, list]:
        """``encode`` with the model's "query" prompt when neither prompt nor prompt_name is given
        (sentence-transformers' encode_query: no prompt, not the default, if it has none)."""
        if prompt_name is None and prompt is None:
            prompt_name = "query"
        return self.encode(sentences, prompt_name, prompt, **kwargs)

    def encode_document(self, sentences: Any = None, prompt_name: Optional[str] = None, prompt: Optional[str] = None,
                        **kwargs: Any) -> Union[np.ndarray, list]:
        """``encode`` with the first of the prompts "document", "passage", "corpus" the model knows
        ("document" always: sentence-transformers' encode_document) when neither prompt nor
        prompt_name is given."""
        if prompt_name is None and prompt is None:
            prompt_name = next(n for n in ("document", "passage", "corpus") if n in self.prompts)
        return self.encode(sentences, prompt_name, prompt, **kwargs)

    def tokenize(self, text: str) -> list:
        """The ids ``encode`` feeds the model for ``text`` without a prompt (special tokens
        included, truncated)."""
        return self._engine.tokenize(text)[0]

    @property
    def similarity_fn_name(self) -> str:
        """How ``similarity`` compares embeddings: "cosine" (the default), "dot", "euclidean"
        or "manhattan" (negated distances) — config_sentence_transformers.json's, or set."""
        return self._similarity_fn_name

    @similarity_fn_name.setter
    def similarity_fn_name(self, value: Any) -> None:
        value = getattr(value, "value", value)  # sentence-transformers' SimilarityFunction
        if value is None:
            value = "cosine"
        if value == "dot_product":
            value = "dot"
        if value not in _SIMILARITIES:
            raise ValueError(f"similarity_fn_name={value!r}: one of {', '.join(_SIMILARITIES)}")
        self._similarity_fn_name = value

    def similarity(self, embeddings1: Any, embeddings2: Any) -> np.ndarray:
        """Every row of ``embeddings1`` against every row of ``embeddings2`` by the model's
        similarity function (sentence-transformers' similarity), [len(a), len(b)] float32."""
        return _SIMILARITIES[self._similarity_fn_name](_rows(embeddings1), _rows(embeddings2))

    def similarity_pairwise(self, embeddings1: Any, embeddings2: Any) -> np.ndarray:
        """Row i of ``embeddings1`` against row i of ``embeddings2`` (sentence-transformers'
        similarity_pairwise), [n] float32."""
        a, b = _rows(embeddings1), _rows(embeddings2)
        if a.shape != b.shape:
            raise ValueError(f"similarity_pairwise needs embeddings of one shape, got {a.shape} and {b.shape}")
        return np.array([_SIMILARITIES[self._similarity_fn_name](a[i:i + 1], b[i:i + 1])[0, 0] for i in range(len(a))],
                        dtype=np.float32)

    def attention_heads(self, sentence: str, pair: Optional[str] = None) -> Any:
        """Every layer and head's self-attention of a sentence (or a pair) as ``encode``
        tokenizes it: :meth:`Encoder.text_attention_heads`."""
        return self._engine.text_attention_heads(sentence, pair)


def _check_device(device: Any) -> None:
    if device not in (None, "cpu"):
        raise ValueError(f"device={device!r}: attend runs on the CPU only")


def _sentence_list(sentences: Any) -> list:
    """sentence-transformers' batches: a list, a tuple or a NumPy array of strings; each
    item a str (TypeError naming the first that is not)."""
    if isinstance(sentences, np.ndarray) and sentences.ndim == 1 and sentences.dtype.kind in ("U", "O"):
        sentences = sentences.tolist()
    if not isinstance(sentences, (list, tuple)):
        raise TypeError(f"sentences must be a str or a list of str, got {type(sentences).__name__}")
    for i, s in enumerate(sentences):
        if not isinstance(s, str):
            raise TypeError(f"sentences[{i}] is a {type(s).__name__}, not a str")
    return list(sentences)


def _rows(x: Any) -> np.ndarray:
    return np.atleast_2d(np.asarray(x, dtype=np.float32))


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T


def _euclidean(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return -np.sqrt(np.maximum(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2), 0)).astype(np.float32)


def _manhattan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return -np.abs(a[:, None, :] - b[None, :, :]).sum(axis=2).astype(np.float32)


_SIMILARITIES = {"cosine": _cosine, "dot": lambda a, b: a @ b.T, "euclidean": _euclidean, "manhattan": _manhattan}
