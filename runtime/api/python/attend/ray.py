"""attend.ray: translating (and embedding) a corpus across the machines of a Ray cluster.

Encoder-only models: ``attend.ray.Embed`` for ``map_batches`` (column ``text`` in,
``embedding`` out), and ``python -m attend.ray embed -m DIR -i FILE… -o OUTDIR`` (one
``OUTDIR/<name>.npy`` per input, float32 [lines, dim], row i = line i; restartable
shards, as for translate).

Two ways in (``pip install .[ray]``):

- Ray Data, the standard pattern — a callable class that loads the model once per
  actor and translates each batch::

      import ray, attend.ray
      ds = ray.data.read_text("s3://bucket/corpus/")
      ds = ds.map_batches(attend.ray.Translate, fn_constructor_args=("/models/ende",),
                          concurrency=8, batch_size=512, num_cpus=2)
      ds.write_parquet("s3://bucket/out/")   # column "translation" beside "text"

- The command line, for files on the machine that runs it::

      python -m attend.ray translate --address HEAD:6379 -m /models/ende \\
          -i corpus-*.txt -o out/ [--input-format tokens] [--beam 4 --n-best 2 …] [--threads 2]

  It takes every decoding flag of ``attend translate`` (made from the same option list,
  include/attend/options.h) and writes ``out/<input file name>`` for each input: exactly
  one output line per input line (N with ``--n-best N``), in order, as ``attend
  translate`` writes them. Each file is cut into shards of
  ``--shard-lines`` lines; a shard is written (atomically) as soon as an actor returns
  it, so a second run after a crash or a stop skips the finished shards. Progress
  (lines done / total, lines/s) goes to stderr. The model directory must exist at the
  same path on every node (or on shared storage); the text travels through Ray.

Actors are Ray actors with restarts and task retries: a worker process that dies
mid-shard is restarted (it loads the model again) and the shard is translated again,
so every line is written exactly once.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import numbers
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from . import _attend

_LIMITS = _attend.limits  # include/attend/limits.h

FORMATS = ("text", "tokens", "ids")
# `attend translate --compute-type`'s names (and `attend embed`'s).
COMPUTE_TYPES = ("default", "auto", "float32", "int8", "int8_float32", "bfloat16", "int8_bfloat16")

# The decoding options given as lists, beside the scalar ones of the description list.
LIST_OPTIONS = {"end_token": "--end-token", "suppress_sequences": "--suppress-sequences"}
# Hugging Face models with language codes: the model's own codes (`attend translate
# --source-lang/--target-lang`).
LANGUAGE_OPTIONS = {"source_lang": "--source-lang", "target_lang": "--target-lang"}
# Given, these imply sampling (as they do for `attend translate`).
_IMPLY_SAMPLING = ("sampling_topk", "sampling_topp", "temperature")


class ModelError(RuntimeError):
    """A model directory that cannot serve: missing, a file, not a model, or without the
    tokenizer a format needs. (`python -m attend.ray`: exit status 1, a bad model.)"""


def _split_tokens(line: str) -> List[str]:
    """Tokens separated by spaces and tabs (as `attend translate --input-format tokens`)."""
    return [t for t in line.replace("\t", " ").split(" ") if t]


BYTE_ORDER_MARK = "\ufeff"


def text_cells(values: Sequence[Any], column: str, rows: Optional[Sequence[int]] = None,
               first_row: int = 0) -> List[str]:
    """`values` (one column of a batch) as text, one str per row. Every cell must be a
    str (NumPy's str_ included): None, a number, NaN (pandas' missing value), bytes or
    anything else raises TypeError naming the column, the row (its id in `rows`, else
    first_row + its index) and the value's type — never translated as the text "None" or
    "nan"."""
    out = []
    for i, value in enumerate(values):
        if not isinstance(value, str):
            row = rows[i] if rows is not None else first_row + i
            raise TypeError(f"column {column!r}, row {row}: {type(value).__name__} {value!r:.40} is not text (every "
                            "cell must be a str; give an empty string for a missing line)")
        out.append(value)
    return out


def _without_mark(text: str) -> str:
    """`text` less a byte-order mark that opens it: Ray Data's read_text keeps the one at
    the start of a file, which `attend translate` drops."""
    return text[1:] if text.startswith(BYTE_ORDER_MARK) else text


def _batch_lines(batch: Any, column: str, rows: Optional[Sequence[int]] = None) -> List[str]:
    """A batch's `column` as lines: text_cells, each less an opening byte-order mark."""
    return [_without_mark(x) for x in text_cells(_column(batch, column), column, rows)]


def _row_ids(values: Sequence[Any], column: str) -> List[int]:
    """The id column's values as sentence ids (integers ≥ 0); TypeError naming the row otherwise."""
    ids = []
    for i, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise TypeError(f"column {column!r}, row {i} of the batch: {type(value).__name__} {value!r:.40} is not "
                            "a sentence id (an integer ≥ 0: the line's number in the corpus)")
        ids.append(int(value))
    return ids


def _runs(ids: Sequence[int]) -> Iterator[Tuple[int, int]]:
    """(start, end) of each run of consecutive ids (ids[k + 1] == ids[k] + 1)."""
    start = 0
    for k in range(1, len(ids) + 1):
        if k == len(ids) or ids[k] != ids[k - 1] + 1:
            yield start, k
            start = k


def _column(batch: Any, column: str) -> List[Any]:
    """The values of `column` in a batch as Ray Data hands it over: a dict of NumPy
    arrays, a pandas DataFrame or an Arrow table (a null is None, pandas' missing NaN)."""
    if isinstance(batch, dict):
        return list(batch[column])
    if hasattr(batch, "to_pandas") and hasattr(batch, "append_column"):  # pyarrow.Table
        return batch.column(column).to_pylist()
    if hasattr(batch, "assign"):  # pandas.DataFrame
        return batch[column].tolist()
    raise TypeError(f"a batch is a dict of arrays, a pandas DataFrame or an Arrow table, not {type(batch)}")


def _with_column(batch: Any, column: str, values: Any) -> Any:
    """`batch` (as _column takes it) with `values` as its column `column`."""
    if isinstance(batch, dict):
        import numpy as np

        batch = dict(batch)
        if isinstance(values, list):
            out = np.empty(len(values), dtype=object)
            out[:] = values
            values = out
        batch[column] = values
        return batch
    if hasattr(batch, "to_pandas") and hasattr(batch, "append_column"):  # pyarrow.Table
        return batch.append_column(column, _pyarrow().array(list(values)))
    return batch.assign(**{column: list(values)})


def _one_line(text: str) -> str:
    """`text` on one output line, as `attend translate` writes it (tools/cli/utf8.cpp's
    one_line): LF, CR, the other C0 controls, DEL and the Unicode line breaks escaped."""
    if text.isprintable() and "\n" not in text:
        return text
    out = []
    for ch in text:
        cp = ord(ch)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif (cp < 0x20 and ch != "\t") or cp == 0x7F:
            out.append(f"\\x{cp:02X}")
        elif cp in (0x85, 0x2028, 0x2029):
            out.append(f"\\u{cp:04X}")
        else:
            out.append(ch)
    return "".join(out)


def decoding_options(options: Optional[Dict[str, Any]] = None,
                     base: Optional["_attend.TranslationOptions"] = None) -> "_attend.TranslationOptions":
    """A TranslationOptions from field names (those of include/attend/options.h, e.g.
    ``{"beam_size": 4, "num_hypotheses": 2}``, plus ``end_token`` and
    ``suppress_sequences``, ``source_lang`` and ``target_lang``), over ``base`` (a
    Hugging Face model's generation_config.json defaults, ``Model.default_options()``)
    or `attend translate`'s defaults for the rest. Giving
    ``sampling_topk``, ``sampling_topp`` or ``temperature`` implies ``sampling``.
    ValueError names an unknown option or a value out of its range."""
    o = base if base is not None else _attend.TranslationOptions()
    specs = {s.name: s for s in _attend.translation_option_specs()}
    for name, value in (options or {}).items():
        if name in LANGUAGE_OPTIONS:
            if not isinstance(value, str) or not value:
                raise ValueError(f"{name} = {value!r}: must be one of the model's language codes")
            setattr(o, name, value)
            continue
        if name in LIST_OPTIONS:
            if name == "end_token":
                o.end_token = [value] if isinstance(value, str) else list(value)
            else:
                o.suppress_sequences = [_split_tokens(s) if isinstance(s, str) else list(s) for s in value]
            continue
        spec = specs.get(name)
        if spec is None:
            known = ", ".join(list(specs) + list(LIST_OPTIONS) + list(LANGUAGE_OPTIONS))
            raise ValueError(f"no decoding option is called {name!r} (the options: {known})")
        if spec.kind != "flag" and not spec.accepts(float(value)):
            raise ValueError(f"{name} = {value}: must be {spec.range}")
        setattr(o, name, value)
        if name in _IMPLY_SAMPLING:
            o.sampling = True
    return o


def checked_options(options: Optional[Dict[str, Any]], output_format: str) -> "_attend.TranslationOptions":
    """decoding_options, and the combinations `attend translate` refuses before it loads
    the model (ValueError)."""
    o = decoding_options(options)
    if o.sampling and o.beam_size > 1:
        raise ValueError("sampling (--sampling, --sample-topk, --sample-topp, --temperature) and --beam > 1 "
                         "exclude each other")
    if o.replace_unknowns and output_format == "ids":
        raise ValueError("--replace-unknowns writes source tokens: use --output-format text or tokens")
    return o


class Translate:
    """Translates batches of lines with one model loaded per instance (per Ray actor):
    the class to give ``ray.data.Dataset.map_batches``. Each line is translated as
    ``attend translate`` translates a line of its input, and its output line is the one
    ``attend translate`` writes for it.

    Args:
      model_dir: The model directory (the same path on every node).
      input_format: "text" (SentencePiece), "tokens" (vocabulary tokens separated by
        spaces) or "ids" (integers given to the encoder as they are).
      output_format: "text", "tokens" or "ids" (default: the input format).
      column: The batch column to read (``read_text`` makes "text"). Every cell must be
        a str: a None, number, NaN or bytes cell raises TypeError naming the column,
        the row and its type.
      output_column: The column to write the translations to.
      id_column: A column holding each row's sentence id — its 0-based line number in
        the corpus. Sampling draws by it (with ``seed``) and ``num_hypotheses`` N > 1
        numbers the lines by it, so a row's output is ``attend translate``'s for that
        line whatever batch it comes in. Without it, each batch's rows are numbered from
        0 (a sampled output then depends on the batching).
      threads: Compute threads of this actor (0: one per core of the node; give
        ``num_cpus`` the same number).
      scores: Prefix each output with its score ("SCORE ||| TEXT").
      target_prefix: Forces every output to start with this (in the input format).
      max_batch_size, max_batch_tokens: The batches, as ``attend translate``'s flags.
      isa: Forces a kernel set (avx512, avx2, sse2; default: the best the node runs).
      compute_type: The GEMM weights' type, CTranslate2's names (default, auto, float32,
        int8, bfloat16, …), as ``attend translate --compute-type``.
      decoding_rules: auto (transformers' generate() for a Hugging Face directory,
        CTranslate2's for the others), transformers, ctranslate2: ``--decoding-rules``.
      kv_cache_type: The decoder's attention caches (default, float32, bfloat16), as
        ``attend translate --kv-cache-type``.
      options: Decoding options by TranslationOptions field name — every option of
        ``attend translate`` (see :func:`decoding_options`), e.g.
        ``{"beam_size": 4, "num_hypotheses": 2, "length_penalty": 0.6}``.
        ``num_hypotheses`` N > 1 writes N lines "INDEX ||| TEXT ||| SCORE" per input
        line (in one output item), as ``attend translate --n-best N``.

    An empty (or blank) line gives an empty line; a line longer than the model's limit
    is truncated; invalid ids are read as <unk> — as ``attend translate`` does.
    ModelError (a RuntimeError) names a model directory that cannot be loaded or lacks
    the tokenizer a format needs; ValueError a bad option.
    """

    def __init__(self, model_dir: str, *, input_format: str = "text", output_format: Optional[str] = None,
                 column: str = "text", output_column: str = "translation", id_column: Optional[str] = None,
                 threads: int = 0, scores: bool = False,
                 target_prefix: Optional[str] = None, max_batch_size: int = 32, max_batch_tokens: int = 4096,
                 isa: str = "", compute_type: str = "default", kv_cache_type: str = "default", seed: int = 1,
                 options: Optional[Dict[str, Any]] = None, decoding_rules: str = "auto") -> None:
        if input_format not in FORMATS:
            raise ValueError(f"input_format={input_format!r}: expected one of {', '.join(FORMATS)}")
        output_format = output_format or input_format
        if output_format not in FORMATS:
            raise ValueError(f"output_format={output_format!r}: expected one of {', '.join(FORMATS)}")
        o = checked_options(options, output_format)
        o.seed = seed  # `attend translate --seed`: with each line's index, fixes every draw
        try:
            self.model = _attend.Model.load(model_dir, isa=isa, compute_type=compute_type, kv_cache_type=kv_cache_type,
                                            decoding_rules=decoding_rules)
        except RuntimeError as e:
            raise ModelError(str(e)) from None
        # A Hugging Face directory's generation_config.json gives the defaults; options given win.
        o = decoding_options(options, base=self.model.default_options())
        o.seed = seed
        for fmt, what in ((input_format, "read"), (output_format, "write")):
            if fmt == "text" and not self.model.has_text_tokenizer:
                raise ModelError(f"{model_dir} has no SentencePiece model to {what} text: use 'tokens' or 'ids'")
            if fmt == "tokens" and not self.model.has_vocabulary:
                raise ModelError(f"{model_dir} has no vocabulary files to {what} tokens: use 'ids'")
        positions = self.model.max_positions
        if o.max_length > positions:
            raise ValueError(f"max_length = {o.max_length}: must be in [0, {positions}] (the model has {positions} "
                             f"positions; 0: {min(256, positions)})")
        # Sized as `attend translate` sizes its translator for the same options.
        t = _attend.TranslatorOptions()
        t.threads, t.max_batch_size, t.max_batch_tokens = threads, max_batch_size, max_batch_tokens
        t.max_target_length = min(o.max_length, positions) if o.max_length > 0 else 256
        t.max_beam_size = max(o.beam_size, o.num_hypotheses if o.sampling or o.return_alternatives else 1)
        self.translator = _attend.Translator(self.model, t)
        self.translator.validate(o)
        self.options = o
        self.input_format, self.output_format = input_format, output_format
        self.column, self.output_column, self.id_column, self.scores = column, output_column, id_column, scores
        # The limit sources are cut to, as attend translate applies it: max_input_length
        # where it is the lower (0: none), else the model's.
        model_limit = self.translator.max_source_length
        self.max_source_length = min(o.max_input_length, model_limit) if o.max_input_length > 0 else model_limit
        self.max_length = min(t.max_target_length, positions)
        self.common_prefix = self._encode_prefix(target_prefix or "", 0)
        self.truncated = 0

    def _ids(self, line: str, side: str) -> List[int]:
        vocab = self.model.source_vocabulary_size if side == "source" else self.model.target_vocabulary_size
        unk = min(self.model.special_ids.unk, vocab - 1)
        ids = []
        for token in _split_tokens(line):
            try:
                value = int(token)
            except ValueError:
                value = -1
            ids.append(value if 0 <= value < vocab else unk)  # as attend translate reads a bad id: <unk>
        return ids

    def _blank(self, line: str) -> bool:
        # Tokens are the vocabulary's own: a line of them is blank only without any.
        return not _split_tokens(line) if self.input_format == "tokens" else _attend.is_blank_text(line)

    def _encode(self, line: str) -> Optional[List[int]]:
        if self._blank(line):
            return None
        if self.input_format == "text":  # only what the limit keeps is tokenized, as attend translate does
            ids, _, _, cut = self.model.encode_source_text(line, self.max_source_length, source_lang=self.options.source_lang,
                                                            target_lang=self.options.target_lang)
            self.truncated += cut
            return None if self.model.is_empty_source(ids) else ids
        if self.input_format == "tokens":
            ids = self.model.encode_tokens(_split_tokens(line))
        else:
            ids = self._ids(line, "source")
        if self.model.is_empty_source(ids):
            return None
        if len(ids) > self.max_source_length:
            ids = self.model.truncate_source(ids, self.max_source_length)
            self.truncated += 1
        return ids

    def _encode_prefix(self, line: str, number: int) -> List[int]:
        if self._blank(line):
            return []
        if self.input_format == "text":
            ids = self.model.encode_text(line, "target")
        elif self.input_format == "tokens":
            ids = self.model.encode_tokens(_split_tokens(line), "target")
        else:
            ids = self._ids(line, "target")
        if self.options.prefix_bias_beta == 0 and len(ids) > self.max_length:
            where = f"line {number}: " if number else ""
            raise ValueError(f"{where}the target prefix has {len(ids)} tokens, more than the {self.max_length} "
                             "a translation may have (max_length)")
        return ids

    def _text(self, h: Any) -> str:
        # With replace_unknowns the engine has put the replaced tokens in h.tokens.
        replaced = self.options.replace_unknowns and len(h.tokens) > 0
        if self.output_format == "text":
            return self.model.decode_pieces(h.tokens) if replaced else self.model.decode_text(h.ids)
        if self.output_format == "tokens":
            return " ".join(h.tokens if replaced else self.model.decode_tokens(h.ids))
        return " ".join(map(str, h.ids))

    def _format(self, line: int, result: Any) -> str:
        """The output of input line `line` (0-based), as `attend translate` writes it:
        TEXT, "SCORE ||| TEXT" with scores, N lines "LINE ||| TEXT ||| SCORE" with
        num_hypotheses N > 1 (joined by newlines, without the last)."""
        n = self.options.num_hypotheses
        if result is None and n == 1:
            return ""
        hypotheses = result.hypotheses if result is not None else []
        missing = float("-inf") if result is not None else 0.0
        out = []
        for k in range(n):
            h = hypotheses[k] if k < len(hypotheses) else None
            text = _one_line(self._text(h)) if h is not None else ""
            score = f"{h.score if h is not None else missing:.6f}"
            out.append(f"{line} ||| {text} ||| {score}" if n > 1 else f"{score} ||| {text}" if self.scores else text)
        return "\n".join(out)

    def translate_lines(self, lines: Sequence[str], first_line: int = 0,
                        prefixes: Optional[Sequence[str]] = None) -> List[str]:
        """One output item per input line, in order (no final newline; N lines joined with
        num_hypotheses N > 1). `first_line` is the index of ``lines[0]`` in its file: it
        numbers the n-best lines and, with the seed, fixes sampling's draws, so a shard
        translated again draws the same. `prefixes`: one target prefix per line (in the
        input format), else the common ``target_prefix``."""
        if prefixes is not None and len(prefixes) != len(lines):
            raise ValueError(f"{len(prefixes)} target prefixes for {len(lines)} lines")
        lines = text_cells(lines, "lines", first_row=first_line)
        encoded = [self._encode(line) for line in lines]
        # Every line goes to the translator, an empty one as an empty source (answered at
        # once, not run), so that sentence i is line first_line + i: its draws follow its
        # line number, as `attend translate`'s do, not the non-empty lines around it.
        forced = None
        if prefixes is not None:
            forced = [self._encode_prefix(prefixes[i], first_line + i + 1) if ids is not None else []
                      for i, ids in enumerate(encoded)]
        elif self.common_prefix:
            forced = [self.common_prefix if ids is not None else [] for ids in encoded]
        results = self.translator.translate_ids([ids if ids is not None else [] for ids in encoded], self.options,
                                                forced, None, first_line)
        return [self._format(first_line + i, r if ids is not None else None)
                for i, (ids, r) in enumerate(zip(encoded, results))]

    def __call__(self, batch: Any) -> Any:
        """Translates the batch's `column` into `output_column`. Takes and returns what
        Ray Data hands over: a dict of NumPy arrays, a pandas DataFrame or an Arrow table."""
        ids = _row_ids(_column(batch, self.id_column), self.id_column) if self.id_column else None
        lines = _batch_lines(batch, self.column, ids)
        if ids is None:
            return _with_column(batch, self.output_column, self.translate_lines(lines))
        out: List[str] = []
        for start, end in _runs(ids):  # one call per run of consecutive ids (usually the batch)
            out += self.translate_lines(lines[start:end], ids[start])
        return _with_column(batch, self.output_column, out)


class Embed:
    """Sentence embeddings for Ray Data's ``map_batches``: an encoder-only model loaded
    once per actor (attend.SentenceEncoder's engine), column ``column`` (text) in, column
    ``output_column`` (a float32 vector per row) out::

        ds = ray.data.read_text("corpus/")
        ds = ds.map_batches(attend.ray.Embed, fn_constructor_args=("/models/all-MiniLM-L6-v2",),
                            concurrency=4, batch_size=1024, num_cpus=2)

    ``normalize``: None as the model (its Normalize module), True or False to force.
    Every row gives one embedding, in order; an empty line embeds the empty text. Every
    cell must be a str: a None, number, NaN or bytes cell raises TypeError naming the
    column, the row and its type. ModelError names a model directory that cannot be
    loaded."""

    def __init__(self, model_dir: str, *, threads: int = 1, column: str = "text", output_column: str = "embedding",
                 normalize: Optional[bool] = None, compute_type: str = "default", isa: str = "",
                 max_length: int = 0, max_batch_size: int = 32, max_batch_tokens: int = 8192,
                 input_format: str = "text") -> None:
        if input_format not in ("text", "ids"):
            raise ValueError(f"input_format={input_format!r}: text or ids")
        self.input_format = input_format
        if max_length < 0:
            raise ValueError(f"max_length = {max_length}: must be ≥ 0 (0: the model's)")
        try:
            self.encoder = _attend.Encoder(model_dir, isa=isa, compute_type=compute_type, threads=threads,
                                           max_length=max_length, max_batch_size=max_batch_size,
                                           max_batch_tokens=max_batch_tokens)
        except RuntimeError as e:
            raise ModelError(str(e)) from None
        self.column, self.output_column = column, output_column
        self.normalize = -1 if normalize is None else int(bool(normalize))

    def embed_lines(self, lines: Sequence[str], first_line: int = 0, prefixes: Optional[List[str]] = None) -> Any:
        """[len(lines), dim] float32, row i the embedding of lines[i] (text, or ids
        separated by spaces, cut to the model's length as `attend embed` cuts them).
        `first_line` numbers the lines in messages."""
        lines = text_cells(lines, "lines", first_row=first_line)
        if self.input_format == "ids":
            limit = self.encoder.encoder_info.max_length
            return self.encoder.embed_ids([self._ids(x, first_line + i)[:limit] for i, x in enumerate(lines)],
                                          self.normalize)
        return self.encoder.embed(lines, self.normalize)

    @staticmethod
    def _ids(line: str, row: int) -> List[int]:
        try:
            return [int(t) for t in line.split()]
        except ValueError:
            raise ValueError(f"row {row}: {line!r:.60} is not token ids separated by spaces") from None

    def __call__(self, batch: Any) -> Any:
        vectors = self.embed_lines(_batch_lines(batch, self.column))
        return _with_column(batch, self.output_column, vectors if isinstance(batch, dict) else list(vectors))


def _pyarrow() -> Any:
    import pyarrow

    return pyarrow


# ---------------------------------------------------------------- the command line

class _Shards:
    """The shards of one input file and where their outputs go:
    OUTPUT_DIR/.attend-ray/<name>/NNNNNN.txt, then OUTPUT_DIR/<name>."""

    def __init__(self, index: int, path: Path, output_dir: Path, shard_lines: int, settings: str,
                 prefixes: Optional[Path] = None) -> None:
        self.index, self.path, self.shard_lines, self.prefixes = index, path, shard_lines, prefixes
        self.output = output_dir / path.name
        self.work = output_dir / ".attend-ray" / path.name
        # A changed input (or prefix file), shard size or option starts the file over.
        stamp = "|".join(f"{p.resolve()}|{p.stat().st_size}|{p.stat().st_mtime_ns}" for p in (path, prefixes) if p)
        self.key = hashlib.sha256(f"{stamp}|{shard_lines}|{settings}".encode()).hexdigest()
        self.lines = _count_lines(path)
        self.count = max(1, math.ceil(self.lines / shard_lines)) if self.lines else 0
        self.model_facts: Any = None  # what the settings check found out about the model (_settings_status)
        self.cuts = _Cuts()  # the lines read only up to line_cap()

    def line_cap(self) -> int:
        """The bytes of a line read, as `attend translate` reads them: what the limit on
        source tokens (model_facts: the translator's) could ever use, 16 KiB a token, at
        least 16 MiB — the rest of a longer line is dropped as it is read."""
        return max(_LINE_BYTES_MIN, int(self.model_facts or 0) * _LINE_BYTES_PER_TOKEN)

    def shard_file(self, k: int) -> Path:
        return self.work / f"{k:06d}.txt"

    def prepare(self) -> bool:
        """Whether this file still needs work (False: its output is complete)."""
        manifest = self.work.parent / f"{self.path.name}.json"
        if self.output.exists() and manifest.exists() and json.loads(manifest.read_text()).get("key") == self.key:
            return False
        stamp = self.work / "key"
        if self.work.exists() and (not stamp.exists() or stamp.read_text() != self.key):
            for f in self.work.iterdir():
                f.unlink()
        self.work.mkdir(parents=True, exist_ok=True)
        stamp.write_text(self.key)
        return True

    def done(self, k: int) -> bool:
        return self.shard_file(k).exists()

    def write_shard(self, k: int, lines: List[str]) -> None:
        tmp = self.shard_file(k).with_suffix(".tmp")
        with _writing(tmp):
            tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            os.replace(tmp, self.shard_file(k))

    def finish(self) -> None:
        """Joins the shards into the output file and records it complete."""
        tmp = self.output.with_name(self.output.name + ".attend-ray.tmp")
        with _writing(tmp):
            with open(tmp, "wb") as out:
                for k in range(self.count):
                    out.write(self.shard_file(k).read_bytes())
            os.replace(tmp, self.output)
        self.record_complete()

    def record_complete(self) -> None:
        """The manifest that marks the output complete; the shards are removed."""
        manifest = self.work.parent / f"{self.path.name}.json"
        with _writing(manifest):
            manifest.write_text(json.dumps({"key": self.key, "lines": self.lines}))
        for f in self.work.iterdir():
            f.unlink()
        self.work.rmdir()


class _EmbeddingShards(_Shards):
    """An input's shards as .npy pieces, joined into OUTPUT_DIR/<name>.npy, float32
    [lines, dim] with row i the embedding of line i."""

    def __init__(self, index: int, path: Path, output_dir: Path, shard_lines: int, settings: str) -> None:
        super().__init__(index, path, output_dir, shard_lines, settings)
        self.output = output_dir / (path.name + ".npy")

    def shard_file(self, k: int) -> Path:
        return self.work / f"{k:06d}.npy"

    def line_cap(self) -> int:
        """1 MiB, as `attend embed` reads a line: far more than an encoder keeps."""
        return _EMBED_LINE_BYTES

    def write_shard(self, k: int, rows: Any) -> None:
        import numpy as np

        tmp = self.shard_file(k).with_suffix(".tmp")
        with _writing(tmp):
            with open(tmp, "wb") as f:
                np.save(f, np.asarray(rows, dtype=np.float32))
            os.replace(tmp, self.shard_file(k))

    def finish(self) -> None:
        import numpy as np

        pieces = [np.load(self.shard_file(k), mmap_mode="r") for k in range(self.count)]
        # An empty input is [0, dim], as `attend embed` writes it, so that arrays concatenate.
        dim = pieces[0].shape[1] if pieces else self.model_facts
        if dim is None:
            raise RuntimeError(f"{self.path}: the embedding dimension is unknown (the settings check did not run)")
        tmp = self.output.with_name(self.output.name + ".attend-ray.tmp")
        with _writing(tmp):
            out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(self.lines, dim))
            at = 0
            for piece in pieces:
                out[at:at + len(piece)] = piece
                at += len(piece)
            out.flush()
            del out, pieces
            os.replace(tmp, self.output)
        self.record_complete()


def _count_lines(path: Path) -> int:
    lines, last = 0, b"\n"
    with _skip_byte_order_mark(open(path, "rb")) as f:
        while chunk := f.read(1 << 20):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


# How much of a line is read, as the CLI reads it (tools/cli: translate_command.cpp,
# encoder_commands.cpp): memory follows what truncation keeps, not the line's length.
_LINE_BYTES_MIN, _LINE_BYTES_PER_TOKEN, _EMBED_LINE_BYTES = 16 << 20, 16 << 10, 1 << 20


class _Cuts:
    """The lines of one input read only up to the cap: how many, the first (1-based) and
    its length in bytes, for the warning `attend translate` gives."""

    def __init__(self) -> None:
        self.count, self.first, self.first_bytes = 0, 0, 0

    def add(self, line: int, length: int) -> None:
        if self.count == 0:
            self.first, self.first_bytes = line, length
        self.count += 1

    def warn(self, path: Path, cap: int) -> None:
        if self.count:
            print(f"attend.ray: warning: {path}: {self.count} line(s) longer than {cap} bytes were read only up to "
                  f"that, the rest dropped before tokenizing (first: line {self.first}, {self.first_bytes} bytes)",
                  file=sys.stderr, flush=True)


def _read_lines(f: Any, count: int, cap: int = 0, cuts: Optional[_Cuts] = None, first_line: int = 1) -> List[str]:
    """The next `count` lines of binary file `f` (fewer at its end), without their "\\n"
    or "\\r\\n"; invalid UTF-8 becomes U+FFFD. A line longer than `cap` bytes (0: no
    cap) is read as `attend translate` reads it: its first `cap` bytes, backed off to the
    start of a character they would split, the rest dropped as it is read — never held
    whole — and recorded in `cuts` (`first_line`: the number of the first line read)."""
    lines = []
    for i in range(count):
        r = f.readline(cap + 1) if cap else f.readline()
        if not r:
            break
        if cap and len(r) > cap and not r.endswith(b"\n"):  # longer than the cap (a "\r" counted, as there)
            lines.append(_cut_line(f, r, cap, cuts, first_line + i))
            continue
        r = r[:-1] if r.endswith(b"\n") else r
        r = r[:-1] if r.endswith(b"\r") else r
        lines.append(r.decode("utf-8", errors="replace"))
    return lines


def _cut_line(f: Any, start: bytes, cap: int, cuts: Optional[_Cuts], line: int) -> str:
    """The kept part of a line whose first cap + 1 bytes are `start`; reads past the rest."""
    keep = cap
    while keep > 0 and start[keep] & 0xC0 == 0x80:  # a UTF-8 continuation byte: inside a character
        keep -= 1
    length, tail = len(start), b""
    while not tail.endswith(b"\n"):
        tail = f.readline(1 << 20)
        if not tail:
            break
        length += len(tail) - tail.endswith(b"\n")
    if cuts is not None:
        cuts.add(line, length)
    return start[:keep].decode("utf-8", errors="replace")


def _skip_byte_order_mark(f: Any) -> Any:
    """Binary file `f` past a UTF-8 byte-order mark that opens it (as `attend translate`
    drops it; one later in the file is text)."""
    if f.read(3) != BYTE_ORDER_MARK.encode():
        f.seek(0)
    return f


def _read_shards(shards: _Shards) -> Iterator[Tuple[int, List[str], Optional[List[str]]]]:
    """(k, lines, prefixes or None) for each unfinished shard k, reading the file (and
    its prefix file) once, a shard at a time; an opening byte-order mark is dropped."""
    with contextlib.ExitStack() as files:
        f = _skip_byte_order_mark(files.enter_context(open(shards.path, "rb")))
        p = _skip_byte_order_mark(files.enter_context(open(shards.prefixes, "rb"))) if shards.prefixes else None
        cap = shards.line_cap()
        for k in range(shards.count):
            lines = _read_lines(f, shards.shard_lines, cap, shards.cuts, k * shards.shard_lines + 1)
            prefixes = _read_lines(p, len(lines)) if p else None
            if not shards.done(k):
                yield k, lines, prefixes


class _Progress:
    """lines done / total, lines/s on stderr, at most once a second (and at the end)."""

    def __init__(self, total: int, done: int) -> None:
        self.total, self.done, self.start_done = total, done, done
        self.start = self.last = time.monotonic()

    def add(self, lines: int, force: bool = False) -> None:
        self.done += lines
        now = time.monotonic()
        if force or now - self.last >= 1.0:
            self.last = now
            rate = (self.done - self.start_done) / max(now - self.start, 1e-9)
            percent = 100.0 * self.done / self.total if self.total else 100.0
            print(f"attend.ray: {self.done}/{self.total} lines ({percent:.1f}%), {rate:.0f} lines/s",
                  file=sys.stderr, flush=True)


def _option_value(spec: Any) -> Any:
    """argparse's `type` for an option of the description list: parses and range-checks
    its value, as `attend translate` does (a bad value: exit 2 naming the flag)."""
    def parse(text: str) -> Any:
        try:
            value = int(text) if spec.kind in ("integer", "seed") else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not {spec.range}") from None
        if not spec.accepts(float(value)):
            raise argparse.ArgumentTypeError(f"must be {spec.range}, got {text}")
        return value
    return parse


def _integer_in(lowest: int, highest: Optional[int] = None) -> Any:
    """argparse's `type` for an integer flag with a range (the engine's from
    _attend.limits, include/attend/limits.h): a value outside is exit 2 naming the flag,
    as `attend translate` refuses it."""
    range_ = f"an integer in [{lowest}, {highest}]" if highest is not None else f"an integer ≥ {lowest}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not {range_}") from None
        if value < lowest or (highest is not None and value > highest):
            raise argparse.ArgumentTypeError(f"must be {range_}, got {text}")
        return value
    return parse


def add_decoding_flags(parser: argparse.ArgumentParser) -> None:
    """Every decoding flag of `attend translate`, made from the same description list
    (include/attend/options.h, through attend._attend.translation_option_specs), so a
    new option reaches this command with its flag, help and range and no change here.
    Each flag stores into the option's field name; an absent flag stays None."""
    group = parser.add_argument_group("decoding (as attend translate)")
    defaults = _attend.TranslationOptions()
    for spec in _attend.translation_option_specs():
        if not spec.flag:
            continue
        if spec.kind == "flag":
            group.add_argument(spec.flag, dest=spec.name, action="store_true", default=None, help=spec.help)
        else:
            group.add_argument(spec.flag, dest=spec.name, type=_option_value(spec), default=None,
                               metavar=spec.name.upper(),
                               help=f"{spec.help} (default: {getattr(defaults, spec.name):g})".replace("%", "%%"))
    group.add_argument("--end-token", dest="end_token", action="append", default=None,
                       help="A target token that ends a hypothesis (repeatable; given, they replace the model's "
                            "end-of-sequence)")
    group.add_argument("--suppress-sequences", dest="suppress_sequences", action="append", default=None,
                       help="Target tokens, separated by spaces, never generated in that order (repeatable; one "
                            "token: never at all)")
    group.add_argument("--source-lang", dest="source_lang", default=None,
                       help="The source language in the model's own codes (eng_Latn, en, en_XX)")
    group.add_argument("--target-lang", dest="target_lang", default=None,
                       help="The target language in the model's own codes (fra_Latn, fr, fr_XX, >>fra<<)")


def given_decoding_options(args: argparse.Namespace) -> Dict[str, Any]:
    """The decoding flags given on the command line, by option name."""
    names = [s.name for s in _attend.translation_option_specs() if s.flag] + list(LIST_OPTIONS) + list(LANGUAGE_OPTIONS)
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def parser() -> argparse.ArgumentParser:
    """The command line's parser (`python -m attend.ray translate --help`)."""
    top = argparse.ArgumentParser(prog="python -m attend.ray",
                                  description="Batch translation and embedding of files across a Ray cluster.")
    commands = top.add_subparsers(dest="command", required=True)
    p = commands.add_parser("translate", help="Translate files, one output line per input line, in order",
                            description="Translate files on a Ray cluster: OUTPUT_DIR/<input name> per input, "
                                        "each line as `attend translate` writes it. Restartable: a second run "
                                        "skips finished shards.")
    p.add_argument("--address", required=True, help="The cluster's head (HOST:PORT, as `ray start --head` "
                   "prints it), 'auto' (the cluster this machine belongs to) or 'local' (start one here)")
    p.add_argument("-m", "--model", required=True, help="Model directory (the same path on every node)")
    p.add_argument("-i", "--input", nargs="+", required=True, help="Input files")
    p.add_argument("-o", "--output-dir", required=True, help="Output directory")
    p.add_argument("--input-format", choices=FORMATS, default="text")
    p.add_argument("--output-format", choices=FORMATS, help="default: the input format")
    p.add_argument("--target-prefix", help="Force every output to start with this (in the input format)")
    p.add_argument("--target-prefix-file", nargs="+", help="One forced target prefix per input line: a file per "
                   "input, in the order of -i")
    add_decoding_flags(p)
    p.add_argument("--seed", type=_integer_in(0, (1 << 64) - 1), default=1,
                   help="Seed of the sampling (as attend translate's; an integer in [0, 2^64 - 1]; default: 1)")
    p.add_argument("--scores", action="store_true", help="Prefix each output with its score")
    p.add_argument("--isa", choices=("avx512", "avx2", "sse2"), help="Kernels to use (default: each node's best)")
    p.add_argument("--compute-type", default="default", choices=COMPUTE_TYPES, help="The GEMM weights' type: "
                   "default (as stored), auto (the fastest here), float32, int8, bfloat16, … (CTranslate2's names)")
    p.add_argument("--kv-cache-type", default="default", choices=("default", "float32", "bfloat16"),
                   help="The decoder's attention caches: default (bfloat16 with int8/bfloat16 compute, else "
                   "float32), float32 (as CTranslate2 keeps them), bfloat16")
    p.add_argument("--decoding-rules", default="auto", choices=("auto", "transformers", "ctranslate2"),
                   help="Decoding semantics: auto (transformers' generate() for a Hugging Face directory, "
                   "CTranslate2's for the others), transformers, ctranslate2")
    p.add_argument("--max-batch-size", type=_integer_in(1, _LIMITS["max_batch_size"]), default=32,
                   help=f"Sentences per batch, in [1, {_LIMITS['max_batch_size']}] (default: 32)")
    p.add_argument("--max-batch-tokens", type=_integer_in(0, _LIMITS["max_batch_tokens"]), default=4096,
                   help=f"Padded source tokens per batch, in [0, {_LIMITS['max_batch_tokens']}] (0: no cap)")
    p.add_argument("--threads", type=_integer_in(1, _LIMITS["max_threads"]), default=1,
                   help=f"Compute threads per actor, in [1, {_LIMITS['max_threads']}]; each actor reserves this "
                   "many CPUs (threads × actors = the cluster's cores)")
    p.add_argument("--actors", type=_integer_in(0), default=0, help="Translating actors, ≥ 0 (0: the cluster's CPUs / --threads)")
    p.add_argument("--shard-lines", type=_integer_in(1), default=2000, help="Lines per shard, ≥ 1 (the unit of restart)")
    e = commands.add_parser("embed", help="Sentence embeddings of files: OUTPUT_DIR/<input name>.npy",
                            description="Embed files on a Ray cluster with an encoder-only model: OUTPUT_DIR/<input "
                                        "name>.npy per input, float32 [lines, dim], row i = line i. Restartable: a "
                                        "second run skips finished shards.")
    e.add_argument("--address", required=True, help="The cluster's head (HOST:PORT), 'auto' or 'local'")
    e.add_argument("-m", "--model", required=True, help="Encoder model directory (the same path on every node)")
    e.add_argument("-i", "--input", nargs="+", required=True, help="Input files, one text per line")
    e.add_argument("-o", "--output-dir", required=True, help="Output directory")
    group = e.add_mutually_exclusive_group()
    group.add_argument("--normalize", dest="normalize", action="store_true", default=None,
                       help="L2-normalise every embedding (default: as the model)")
    group.add_argument("--no-normalize", dest="normalize", action="store_false", help="Never normalise")
    e.add_argument("--input-format", choices=("text", "ids"), default="text", help="text, or token ids separated by spaces")
    e.add_argument("--compute-type", default="default", choices=COMPUTE_TYPES, help="default, auto, float32, int8, "
                   "bfloat16")
    e.add_argument("--isa", choices=("avx512", "avx2", "sse2"), help="Kernels to use (default: each node's best)")
    e.add_argument("--max-length", type=_integer_in(0), default=0,
                   help="Tokens a line is cut to, ≥ 0 and at most the model's positions (0: the model's)")
    e.add_argument("--max-batch-size", type=_integer_in(1, _LIMITS["max_batch_size"]), default=32,
                   help=f"Sentences per batch, in [1, {_LIMITS['max_batch_size']}] (default: 32)")
    e.add_argument("--threads", type=_integer_in(1, _LIMITS["max_threads"]), default=1,
                   help=f"Compute threads per actor, in [1, {_LIMITS['max_threads']}] (each reserves as many CPUs)")
    e.add_argument("--actors", type=_integer_in(0), default=0, help="Actors, ≥ 0 (0: the cluster's CPUs / --threads)")
    e.add_argument("--shard-lines", type=_integer_in(1), default=2000, help="Lines per shard, ≥ 1 (the unit of restart)")
    return top


def translate_arguments(args: argparse.Namespace) -> Dict[str, Any]:
    """Translate's keyword arguments for the parsed command line."""
    return dict(input_format=args.input_format, output_format=args.output_format, threads=args.threads,
                scores=args.scores, target_prefix=args.target_prefix, seed=args.seed, isa=args.isa or "",
                compute_type=args.compute_type, kv_cache_type=args.kv_cache_type, decoding_rules=args.decoding_rules,
                max_batch_size=args.max_batch_size, max_batch_tokens=args.max_batch_tokens,
                options=given_decoding_options(args))


def _settings_status(make: Any, describe: Any = lambda made: None) -> Tuple[int, str, Any]:
    """Runs on a worker (where the model is): (0, "", describe(make())) if `make()`
    succeeds, else the exit status `attend translate` gives the same failure — 1 for a
    bad model, 2 for options the model cannot take — the message and None."""
    try:
        made = make()
    except ModelError as e:
        return 1, str(e), None
    except (ValueError, RuntimeError) as e:  # options against the model; limits the translator cannot plan
        return 2, str(e), None
    return 0, "", describe(made)


def _check_settings(model_dir: str, kwargs: Dict[str, Any]) -> Tuple[int, str, Any]:
    """Also the limit sources are cut to, by which lines are read (_Shards.line_cap)."""
    return _settings_status(lambda: Translate(model_dir, **kwargs), lambda t: t.max_source_length)


def _translate_files(args: argparse.Namespace) -> int:
    import ray

    if args.target_prefix is not None and args.target_prefix_file:
        raise UsageError("--target-prefix and --target-prefix-file exclude each other")
    inputs = [Path(p) for p in args.input]
    prefix_files = [Path(p) for p in args.target_prefix_file] if args.target_prefix_file else None
    if prefix_files is not None and len(prefix_files) != len(inputs):
        raise UsageError(f"--target-prefix-file: {len(prefix_files)} file(s) for {len(inputs)} input(s)")
    for p in inputs:
        _check_readable(p, "input")
    for p in prefix_files or []:
        _check_readable(p, "target prefix file")
    names = [p.name for p in inputs]
    if len(set(names)) != len(names):
        raise SystemExit("python -m attend.ray: two inputs have the same file name (outputs are OUTPUT_DIR/<name>)")
    output_dir = _output_directory(Path(args.output_dir))

    translate_kwargs = translate_arguments(args)
    try:
        checked_options(translate_kwargs["options"], args.output_format or args.input_format)
    except ValueError as e:
        raise UsageError(str(e)) from None
    model_dir = str(Path(args.model).resolve())
    settings = json.dumps([model_dir, translate_kwargs], sort_keys=True)
    files = [_Shards(i, p, output_dir, args.shard_lines, settings,
                     prefix_files[i] if prefix_files else None) for i, p in enumerate(inputs)]
    for f in files:
        if f.prefixes is not None and _count_lines(f.prefixes) < f.lines:
            raise SystemExit(f"python -m attend.ray: {f.prefixes} has {_count_lines(f.prefixes)} lines for the "
                             f"{f.lines} of {f.path}: every input line needs a target prefix")
    return _process_files(args, files, Translate, translate_kwargs, model_dir, "translate_lines",
                          lambda: ray.remote(num_cpus=args.threads, max_retries=0)(_check_settings).remote(
                              model_dir, translate_kwargs), "translate")


def _process_files(args: argparse.Namespace, files: List[_Shards], actor_class: Any, actor_kwargs: Dict[str, Any],
                   model_dir: str, method: str, check: Any, verb: str) -> int:
    """The files' unfinished shards through a pool of `actor_class` actors on the cluster
    (args.address), `method` per shard; `check()` returns an ObjectRef to the settings'
    (status, message, facts) against the model (_settings_status). Shared by translate and embed."""
    import ray

    pending = [f for f in files if f.prepare()]
    total = sum(f.lines for f in files)
    already = total - sum(f.lines for f in pending) + sum(
        min(f.shard_lines, f.lines - k * f.shard_lines) for f in pending for k in range(f.count) if f.done(k))
    for f in files:
        if f not in pending:
            print(f"attend.ray: {f.output} is complete: skipped", file=sys.stderr)
    progress = _Progress(total, already)
    if already:
        print(f"attend.ray: {already} lines already done (finished shards are skipped)", file=sys.stderr)
    if not pending:
        progress.add(0, force=True)
        return 0

    if args.address == "local":
        ray.init(log_to_driver=False)
    else:
        ray.init(address=args.address, log_to_driver=False)
    try:
        # The options against the model, once, where the model is; an error here names
        # the option instead of actors failing (and restarting) one after the other.
        try:
            status, message, model_facts = ray.get(check())
        except ray.exceptions.RayTaskError as e:
            raise RuntimeError(str(e.cause) if getattr(e, "cause", None) else str(e)) from None
        if status == 2:
            raise UsageError(message)
        if status != 0:
            raise ModelError(message)
        for f in pending:
            f.model_facts = model_facts
        actors = args.actors or max(1, int(ray.cluster_resources().get("CPU", 1) // args.threads))
        remote = ray.remote(num_cpus=args.threads, max_restarts=-1, max_task_retries=-1)(actor_class)
        pool = [remote.remote(model_dir, **actor_kwargs) for _ in range(actors)]
        print(f"attend.ray: {len(pending)} file(s), {total - already} lines to {verb}, {actors} actor(s) × "
              f"{args.threads} thread(s)", file=sys.stderr, flush=True)
        _run(pool, pending, progress, method)
    finally:
        ray.shutdown()
    progress.add(0, force=True)
    return 0


def _embed_arguments(args: argparse.Namespace) -> Dict[str, Any]:
    return dict(threads=args.threads, normalize=args.normalize, compute_type=args.compute_type, isa=args.isa or "",
                max_length=args.max_length, max_batch_size=args.max_batch_size, input_format=args.input_format)


def _check_embed_settings(model_dir: str, kwargs: Dict[str, Any]) -> Tuple[int, str, Any]:
    """Also the embeddings' dimension, which an empty input's [0, dim] array needs."""
    return _settings_status(lambda: Embed(model_dir, **kwargs), lambda e: e.encoder.encoder_info.embedding_dim)


def _embed_files(args: argparse.Namespace) -> int:
    import ray

    inputs = [Path(p) for p in args.input]
    for p in inputs:
        _check_readable(p, "input")
    if len({p.name for p in inputs}) != len(inputs):
        raise SystemExit("python -m attend.ray: two inputs have the same file name (outputs are OUTPUT_DIR/<name>.npy)")
    output_dir = _output_directory(Path(args.output_dir))
    kwargs = _embed_arguments(args)
    model_dir = str(Path(args.model).resolve())
    settings = json.dumps(["embed", model_dir, kwargs], sort_keys=True)
    files = [_EmbeddingShards(i, p, output_dir, args.shard_lines, settings) for i, p in enumerate(inputs)]
    return _process_files(args, files, Embed, kwargs, model_dir, "embed_lines",
                          lambda: ray.remote(num_cpus=args.threads, max_retries=0)(_check_embed_settings).remote(
                              model_dir, kwargs), "embed")


class UsageError(Exception):
    """A bad flag or combination of flags: exit 2, as `attend translate` exits."""


def _check_readable(path: Path, what: str) -> None:
    """OSError "cannot read the input PATH: why" unless `path` is a file this process can read."""
    try:
        with open(path, "rb"):  # a directory: IsADirectoryError
            pass
    except OSError as e:
        raise OSError(f"cannot read the {what} {path}: {e.strerror or e}") from None


def _output_directory(path: Path) -> Path:
    """`path`, made a directory if it is none yet; OSError naming it if it cannot be one."""
    if path.exists() and not path.is_dir():
        raise OSError(f"the output directory {path} exists and is not a directory (-o names a directory: "
                      "OUTPUT_DIR/<input name> is written per input)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OSError(f"cannot make the output directory {path}: {e.strerror or e}") from None
    return path


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Names `path` in an OSError raised while writing it: a full disk's
    "[Errno 28] No space left on device" names no file."""
    try:
        yield
    except OSError as e:
        raise OSError(f"cannot write {path}: {e.strerror or e}") from None


def _run(pool: List[Any], files: List[_Shards], progress: _Progress, method: str = "translate_lines") -> None:
    """Keeps two shards in flight per actor (each given to the actor's `method`), writes
    each shard as it returns, and each file once its shards are all written. Memory: the
    shards in flight."""
    import ray

    work = ((f, k, lines, prefixes) for f in files for k, lines, prefixes in _read_shards(f))
    in_flight: Dict[Any, Tuple[_Shards, int, List[str], int]] = {}
    idle = [a for a in pool for _ in range(2)]
    remaining = {f.index: sum(1 for k in range(f.count) if not f.done(k)) for f in files}
    for f in files:
        if remaining[f.index] == 0:
            f.finish()
    exhausted = False
    while True:
        while idle and not exhausted:
            item = next(work, None)
            if item is None:
                exhausted = True
                break
            f, k, lines, prefixes = item
            actor = idle.pop()
            ref = getattr(actor, method).remote(lines, k * f.shard_lines, prefixes)
            in_flight[ref] = (f, k, lines, pool.index(actor))
        if not in_flight:
            break
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        ref = ready[0]
        f, k, lines, a = in_flight.pop(ref)
        outputs = ray.get(ref)  # an actor that died was restarted and the task retried
        if len(outputs) != len(lines):
            raise RuntimeError(f"{f.path} shard {k}: {len(outputs)} outputs for {len(lines)} lines")
        f.write_shard(k, outputs)
        idle.append(pool[a])
        progress.add(len(lines))
        remaining[f.index] -= 1
        if remaining[f.index] == 0:
            f.cuts.warn(f.path, f.line_cap())
            f.finish()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`python -m attend.ray translate|embed …` (see --help)."""
    args = parser().parse_args(argv)
    try:
        return _embed_files(args) if args.command == "embed" else _translate_files(args)
    except UsageError as e:
        print(f"python -m attend.ray: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # names its file: ours do in their message, the system's in filename
        where = f"{e.filename}: " if e.filename and str(e.filename) not in str(e.strerror) else ""
        print(f"python -m attend.ray: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    except (ValueError, RuntimeError) as e:
        print(f"python -m attend.ray: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # Run as a script, this file is __main__; the actors must get the class from the
    # importable module attend.ray instead, so that workers can load it by name.
    from attend.ray import main as _main

    sys.exit(_main())
