"""attend.ray: translating a corpus across the machines of a Ray cluster.

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
          -i corpus-*.txt -o out/ [--input-format tokens] [--beam 4] [--threads 2]

  It writes ``out/<input file name>`` for each input: exactly one output line per input
  line, in order, as ``attend translate`` writes them. Each file is cut into shards of
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
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from . import _attend

FORMATS = ("text", "tokens", "ids")


def _split_tokens(line: str) -> List[str]:
    """Tokens separated by spaces and tabs (as `attend translate --input-format tokens`)."""
    return [t for t in line.replace("\t", " ").split(" ") if t]


def _is_blank(line: str) -> bool:
    return line.strip(" \t\r\v\f") == ""


class Translate:
    """Translates batches of lines with one model loaded per instance (per Ray actor):
    the class to give ``ray.data.Dataset.map_batches``.

    Args:
      model_dir: The model directory (the same path on every node).
      input_format: "text" (SentencePiece), "tokens" (vocabulary tokens separated by
        spaces) or "ids" (integers given to the encoder as they are).
      output_format: "text", "tokens" or "ids" (default: the input format).
      column: The batch column to read (``read_text`` makes "text").
      output_column: The column to write the translations to.
      threads: Compute threads of this actor (0: one per core of the node; give
        ``num_cpus`` the same number).
      beam, length_penalty, max_length, min_length, sampling, sample_topk, sample_topp,
      temperature, seed, scores, max_batch_size, max_batch_tokens: as the flags of
      ``attend translate``, with its defaults (min_length None: the engine's default).

    An empty (or blank) line gives an empty line; a line longer than the model's limit
    is truncated; invalid ids are read as <unk> — as ``attend translate`` does.
    """

    def __init__(self, model_dir: str, *, input_format: str = "text", output_format: Optional[str] = None,
                 column: str = "text", output_column: str = "translation", threads: int = 0, beam: int = 1,
                 length_penalty: float = 1.0, max_length: int = 0, min_length: Optional[int] = None,
                 sampling: bool = False,
                 sample_topk: int = 0, sample_topp: float = 1.0, temperature: float = 1.0, seed: int = 1,
                 scores: bool = False, max_batch_size: int = 32, max_batch_tokens: int = 4096) -> None:
        if input_format not in FORMATS:
            raise ValueError(f"input_format={input_format!r}: expected one of {', '.join(FORMATS)}")
        output_format = output_format or input_format
        if output_format not in FORMATS:
            raise ValueError(f"output_format={output_format!r}: expected one of {', '.join(FORMATS)}")
        if sampling and beam > 1:
            raise ValueError("sampling and beam > 1 exclude each other")
        self.model = _attend.Model.load(model_dir)
        for fmt, what in ((input_format, "read"), (output_format, "write")):
            if fmt == "text" and not self.model.has_text_tokenizer:
                raise ValueError(f"{model_dir} has no SentencePiece model to {what} text: use 'tokens' or 'ids'")
            if fmt == "tokens" and not self.model.has_vocabulary:
                raise ValueError(f"{model_dir} has no vocabulary files to {what} tokens: use 'ids'")
        options = _attend.TranslatorOptions()
        options.threads, options.max_batch_size, options.max_batch_tokens = threads, max_batch_size, max_batch_tokens
        options.max_target_length, options.max_beam_size = (max_length if max_length > 0 else 256), beam
        self.translator = _attend.Translator(self.model, options)
        o = _attend.TranslationOptions()  # attend translate's defaults (CTranslate2's)
        o.beam_size, o.length_penalty, o.max_length = beam, length_penalty, max_length
        if min_length is not None:
            o.min_length = min_length
        o.sampling = sampling or sample_topk != 0 or sample_topp != 1.0 or temperature != 1.0
        o.sampling_topk, o.sampling_topp, o.temperature, o.seed = sample_topk, sample_topp, temperature, seed
        self.options = o
        self.input_format, self.output_format = input_format, output_format
        self.column, self.output_column, self.scores = column, output_column, scores
        self.max_source_length = self.translator.max_source_length
        self.truncated = 0

    def _encode(self, line: str) -> Optional[List[int]]:
        if _is_blank(line):
            return None
        if self.input_format == "text":
            ids = self.model.encode_text(line)
        elif self.input_format == "tokens":
            ids = self.model.encode_tokens(_split_tokens(line))
        else:
            vocab, unk = self.model.source_vocabulary_size, self.model.special_ids.unk
            ids = []
            for token in _split_tokens(line):
                try:
                    value = int(token)
                except ValueError:
                    raise ValueError(f"'{token}' is not a token id (input_format 'ids' reads integers)") from None
                ids.append(value if 0 <= value < vocab else min(unk, vocab - 1))
        if len(ids) > self.max_source_length:
            ids = self.model.truncate_source(ids, self.max_source_length)
            self.truncated += 1
        return ids

    def _format(self, h: Any) -> str:
        if self.output_format == "text":
            text = self.model.decode_text(h.ids)
        elif self.output_format == "tokens":
            text = " ".join(self.model.decode_tokens(h.ids))
        else:
            text = " ".join(map(str, h.ids))
        return f"{h.score:.6f} ||| {text}" if self.scores else text

    def translate_lines(self, lines: Sequence[str], first_line: int = 0) -> List[str]:
        """One output line per input line, in order (no newline). `first_line` numbers
        the sentences for sampling's seeds (the index of ``lines[0]`` in its file), so a
        shard translated again draws the same samples."""
        encoded = [self._encode(line) for line in lines]
        todo = [i for i, ids in enumerate(encoded) if ids is not None]
        out = [f"{0.0:.6f} ||| " if self.scores else ""] * len(lines)
        for k, r in enumerate(self.translator.translate_ids([encoded[i] for i in todo], self.options, None, None,
                                                            first_line)):
            out[todo[k]] = self._format(r.hypotheses[0])
        return out

    def __call__(self, batch: Any) -> Any:
        """Translates the batch's `column` into `output_column`. Takes and returns what
        Ray Data hands over: a dict of NumPy arrays, a pandas DataFrame or an Arrow table."""
        if isinstance(batch, dict):
            import numpy as np

            batch = dict(batch)
            batch[self.output_column] = np.asarray(self.translate_lines([str(x) for x in batch[self.column]]),
                                                   dtype=object)
            return batch
        if hasattr(batch, "to_pandas") and hasattr(batch, "append_column"):  # pyarrow.Table
            lines = [str(x) for x in batch.column(self.column).to_pylist()]
            return batch.append_column(self.output_column, _pyarrow().array(self.translate_lines(lines)))
        if hasattr(batch, "assign"):  # pandas.DataFrame
            return batch.assign(**{self.output_column: self.translate_lines([str(x) for x in batch[self.column]])})
        raise TypeError(f"Translate takes a dict of arrays, a pandas DataFrame or an Arrow table, not {type(batch)}")


def _pyarrow() -> Any:
    import pyarrow

    return pyarrow


# ---------------------------------------------------------------- the command line

class _Shards:
    """The shards of one input file and where their outputs go:
    OUTPUT_DIR/.attend-ray/<name>/NNNNNN.txt, then OUTPUT_DIR/<name>."""

    def __init__(self, index: int, path: Path, output_dir: Path, shard_lines: int, settings: str) -> None:
        self.index, self.path, self.shard_lines = index, path, shard_lines
        self.output = output_dir / path.name
        self.work = output_dir / ".attend-ray" / path.name
        stat = path.stat()
        # A changed input, shard size or option starts the file over.
        self.key = hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{shard_lines}|{settings}"
                                  .encode()).hexdigest()
        self.lines = _count_lines(path)
        self.count = max(1, math.ceil(self.lines / shard_lines)) if self.lines else 0

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
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(tmp, self.shard_file(k))

    def finish(self) -> None:
        """Joins the shards into the output file and records it complete."""
        tmp = self.output.with_name(self.output.name + ".attend-ray.tmp")
        with open(tmp, "wb") as out:
            for k in range(self.count):
                out.write(self.shard_file(k).read_bytes())
        os.replace(tmp, self.output)
        (self.work.parent / f"{self.path.name}.json").write_text(json.dumps({"key": self.key, "lines": self.lines}))
        for f in self.work.iterdir():
            f.unlink()
        self.work.rmdir()


def _count_lines(path: Path) -> int:
    lines, last = 0, b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def _read_shards(shards: _Shards) -> Iterator[Tuple[int, List[str]]]:
    """(k, lines) for each unfinished shard k, reading the file once, a shard at a time.
    Lines lose their "\\n" or "\\r\\n"; invalid UTF-8 becomes U+FFFD."""
    with open(shards.path, "rb") as f:
        for k in range(shards.count):
            raw = [f.readline() for _ in range(shards.shard_lines)]
            raw = [r for r in raw if r]
            if shards.done(k):
                continue
            lines = []
            for r in raw:
                r = r[:-1] if r.endswith(b"\n") else r
                r = r[:-1] if r.endswith(b"\r") else r
                lines.append(r.decode("utf-8", errors="replace"))
            yield k, lines


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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m attend.ray",
                                     description="Batch translation of files across a Ray cluster.")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("translate", help="Translate files, one output line per input line, in order",
                            description="Translate files on a Ray cluster: OUTPUT_DIR/<input name> per input. "
                                        "Restartable: a second run skips finished shards.")
    p.add_argument("--address", required=True, help="The cluster's head (HOST:PORT, as `ray start --head` "
                   "prints it), 'auto' (the cluster this machine belongs to) or 'local' (start one here)")
    p.add_argument("-m", "--model", required=True, help="Model directory (the same path on every node)")
    p.add_argument("-i", "--input", nargs="+", required=True, help="Input files")
    p.add_argument("-o", "--output-dir", required=True, help="Output directory")
    p.add_argument("--input-format", choices=FORMATS, default="text")
    p.add_argument("--output-format", choices=FORMATS, help="default: the input format")
    p.add_argument("--beam", type=int, default=1, help="Beam size (1: greedy)")
    p.add_argument("--length-penalty", type=float, default=1.0)
    p.add_argument("--max-length", type=int, default=0, help="Most generated tokens (0: 256)")
    p.add_argument("--min-length", type=int, help=f"default: {_attend.TranslationOptions().min_length}")
    p.add_argument("--sampling", action="store_true", help="Sample tokens instead of searching")
    p.add_argument("--sample-topk", type=int, default=0)
    p.add_argument("--sample-topp", type=float, default=1.0)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1, help="Seed of the sampling (as attend translate's)")
    p.add_argument("--scores", action="store_true", help="Prefix each output with its score")
    p.add_argument("--max-batch-size", type=int, default=32)
    p.add_argument("--max-batch-tokens", type=int, default=4096)
    p.add_argument("--threads", type=int, default=1, help="Compute threads per actor; each actor reserves this "
                   "many CPUs (threads × actors = the cluster's cores)")
    p.add_argument("--actors", type=int, default=0, help="Translating actors (0: the cluster's CPUs / --threads)")
    p.add_argument("--shard-lines", type=int, default=2000, help="Lines per shard (the unit of restart)")
    return parser


def _translate_files(args: argparse.Namespace) -> int:
    import ray

    for name in ("beam", "threads", "shard_lines", "max_batch_size"):
        if getattr(args, name) < 1:
            raise SystemExit(f"python -m attend.ray: --{name.replace('_', '-')} must be ≥ 1")
    inputs = [Path(p) for p in args.input]
    for p in inputs:
        if not p.is_file():
            raise SystemExit(f"python -m attend.ray: cannot read the input {p}")
    names = [p.name for p in inputs]
    if len(set(names)) != len(names):
        raise SystemExit("python -m attend.ray: two inputs have the same file name (outputs are OUTPUT_DIR/<name>)")
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)

    translate_kwargs = dict(input_format=args.input_format, output_format=args.output_format, threads=args.threads,
                            beam=args.beam, length_penalty=args.length_penalty, max_length=args.max_length,
                            min_length=args.min_length, sampling=args.sampling, sample_topk=args.sample_topk,
                            sample_topp=args.sample_topp, temperature=args.temperature, seed=args.seed,
                            scores=args.scores, max_batch_size=args.max_batch_size,
                            max_batch_tokens=args.max_batch_tokens)
    model_dir = str(Path(args.model).resolve())
    settings = json.dumps([model_dir, translate_kwargs], sort_keys=True)
    files = [_Shards(i, p, output_dir, args.shard_lines, settings) for i, p in enumerate(inputs)]
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
        actors = args.actors or max(1, int(ray.cluster_resources().get("CPU", 1) // args.threads))
        remote = ray.remote(num_cpus=args.threads, max_restarts=-1, max_task_retries=-1)(Translate)
        pool = [remote.remote(model_dir, **translate_kwargs) for _ in range(actors)]
        print(f"attend.ray: {len(pending)} file(s), {total - already} lines to translate, {actors} actor(s) × "
              f"{args.threads} thread(s)", file=sys.stderr, flush=True)
        _run(pool, pending, progress)
    finally:
        ray.shutdown()
    progress.add(0, force=True)
    return 0


def _run(pool: List[Any], files: List[_Shards], progress: _Progress) -> None:
    """Keeps two shards in flight per actor, writes each shard as it returns, and each
    file once its shards are all written. Memory: the shards in flight."""
    import ray

    work = ((f, k, lines) for f in files for k, lines in _read_shards(f))
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
            f, k, lines = item
            actor = idle.pop()
            ref = actor.translate_lines.remote(lines, k * f.shard_lines)
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
            f.finish()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`python -m attend.ray translate …` (see --help)."""
    args = _parser().parse_args(argv)
    try:
        return _translate_files(args)
    except (ValueError, RuntimeError, OSError) as e:
        print(f"python -m attend.ray: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # Run as a script, this file is __main__; the actors must get the class from the
    # importable module attend.ray instead, so that workers can load it by name.
    from attend.ray import main as _main

    sys.exit(_main())
