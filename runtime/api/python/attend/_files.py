"""The text files of ``Translator.translate_file`` and ``score_file``, read and written as
CTranslate2 reads and writes them (its TextLineReader, split_tokens, join_tokens and the
writers of include/ctranslate2/translator.h):

- a line ends at ``\\n``; one ``\\r`` before it is dropped; a last line without ``\\n``
  counts; a UTF-8 byte-order mark opening a file is dropped (attend's CLI drops it too;
  CTranslate2 would read it as part of the first token);
- without tokenize functions a line's tokens are separated by single spaces, empty ones
  skipped; hypotheses are written with single spaces between tokens;
- a number is written as C++'s ``ostream`` writes a float (six significant digits).

Lines must be UTF-8: a line that is not raises ``ValueError`` naming the file and line.
A file that cannot be opened raises ``RuntimeError`` with CTranslate2's "Failed to open
file" in the message. Output goes to a temporary file beside ``output_path``, renamed over
it once complete, so a failed call never leaves a half-written file (a FIFO or a device
is written directly).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
import struct
import tempfile
from typing import IO, Any, Callable, Iterator, List, Optional, Sequence

Tokenize = Callable[[str], List[str]]
Detokenize = Callable[[List[str]], str]


def split_tokens(line: str) -> List[str]:
    """CTranslate2's split_tokens: single spaces separate tokens, empty ones are skipped."""
    return [token for token in line.split(" ") if token]


def join_tokens(tokens: Sequence[str]) -> str:
    """CTranslate2's join_tokens."""
    return " ".join(tokens)


def number(value: float) -> str:
    """A float as C++'s ostream writes it (``%g``, six significant digits)."""
    return f"{value:g}"


def _float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def float32_mean(values: Sequence[float]) -> float:
    """CTranslate2's ScoringResult::normalized_score: the values summed in float32, divided
    by their count in float32 (0 for none), so that a file prints CTranslate2's digits."""
    total = 0.0
    for v in values:
        total = _float32(total + v)
    return _float32(total / len(values)) if values else 0.0


def chunks(examples: Iterator[tuple], size: int, batch_type: str) -> Iterator[List[tuple]]:
    """Examples ((source tokens, …) tuples) grouped as CTranslate2's BatchReader reads
    them: `size` examples, or with batch_type="tokens" as many as keep (count × longest
    source) ≤ `size` — always at least one."""
    chunk: List[tuple] = []
    longest = 0
    for example in examples:
        length = len(example[0]) if batch_type == "tokens" else 1
        if chunk and (len(chunk) + 1) * max(longest, length) > size:
            yield chunk
            chunk, longest = [], 0
        chunk.append(example)
        longest = max(longest, length)
    if chunk:
        yield chunk


def _open_failure(method: str, argument: str, path: Any, error: OSError) -> RuntimeError:
    return RuntimeError(f"{method}: {argument} {os.fspath(path)!r}: {error.strerror or error} "
                        f"(Failed to open file: {os.fspath(path)})")


def lines(method: str, argument: str, path: Any) -> Iterator[str]:
    """The lines of a text file, as CTranslate2 reads them (see the module's docstring)."""
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed below, also when the caller stops early
    except OSError as e:
        raise _open_failure(method, argument, path, e) from e
    with stream:
        for number_, raw in enumerate(stream, 1):
            if raw.endswith(b"\n"):
                raw = raw[:-1]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if number_ == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{method}: {argument} {os.fspath(path)!r}, line {number_}: not valid UTF-8 "
                                 f"(byte {e.start + 1} of the line)") from None


def tokenized(method: str, argument: str, path: Any, tokenize: Optional[Tokenize], hook: str) -> Iterator[List[str]]:
    """Each line's tokens: split on spaces, or `tokenize(line)` (the function `hook`),
    which must return a list of strings (TypeError naming it and the line otherwise)."""
    for number_, line in enumerate(lines(method, argument, path), 1):
        if tokenize is None:
            yield split_tokens(line)
            continue
        tokens = tokenize(line)
        if isinstance(tokens, (str, bytes)) or not isinstance(tokens, (list, tuple)) or \
                not all(isinstance(t, str) for t in tokens):
            raise TypeError(f"{method}: {hook} returned {type(tokens).__name__} for line {number_} of {argument}: "
                            "it must return a list of token strings")
        yield list(tokens)


def detokenized(method: str, detokenize: Optional[Detokenize], tokens: List[str]) -> str:
    """`tokens` joined by spaces, or through `detokenize` (target_detokenize_fn), which
    must return a string with no line break (the file holds one output per line)."""
    if detokenize is None:
        return join_tokens(tokens)
    text = detokenize(tokens)
    if not isinstance(text, str):
        raise TypeError(f"{method}: target_detokenize_fn returned {type(text).__name__}: it must return a string")
    if "\n" in text:
        raise ValueError(f"{method}: target_detokenize_fn returned text with a line break ({text!r}): "
                         "the output file holds one line per output")
    return text


def parallel(method: str, first: Iterator[Any], second: Iterator[Any], first_name: str, second_name: str
             ) -> Iterator[tuple]:
    """Examples of two files line by line; a file with fewer lines raises RuntimeError
    (CTranslate2: "One input stream has less examples than the others")."""
    for line, pair in enumerate(itertools.zip_longest(first, second, fillvalue=None), 1):
        if pair[0] is None or pair[1] is None:
            short, long_ = (first_name, second_name) if pair[0] is None else (second_name, first_name)
            raise RuntimeError(f"{method}: {short} has less examples than {long_}: it ends before line {line} "
                               "(one input stream has less examples than the others)")
        yield pair


@contextlib.contextmanager
def output(method: str, path: Any) -> Iterator[IO[str]]:
    """A text file to write, in place of `path` once the block completes."""
    path = os.fspath(path)
    try:
        special = os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode)
        if special:  # a FIFO, /dev/stdout: written as it is
            stream = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        else:
            directory = os.path.dirname(os.path.abspath(path))
            fd, temporary = tempfile.mkstemp(prefix=".attend-", suffix=".part", dir=directory)
            stream = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
    except OSError as e:
        raise _open_failure(method, "output_path", path, e) from e
    try:
        with stream:
            yield stream
        if not special:
            if os.path.exists(path):
                os.chmod(temporary, stat.S_IMODE(os.stat(path).st_mode))
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(temporary, 0o666 & ~umask)
            os.replace(temporary, path)
    except BaseException:
        if not special:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise


def check_hooks(method: str, *, source_tokenize_fn: Optional[Tokenize], target_tokenize_fn: Optional[Tokenize],
                target_detokenize_fn: Optional[Detokenize], target_file: bool, scoring: bool) -> None:
    """The combinations of tokenize functions CTranslate2 accepts (ValueError otherwise,
    with its message); one it would ignore is refused too."""
    for name, fn in (("source_tokenize_fn", source_tokenize_fn), ("target_tokenize_fn", target_tokenize_fn),
                     ("target_detokenize_fn", target_detokenize_fn)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{method}: {name} must be callable, not {type(fn).__name__}")
    if scoring:
        if len({source_tokenize_fn is None, target_tokenize_fn is None, target_detokenize_fn is None}) > 1:
            raise ValueError(f"{method}: source_tokenize_fn, target_tokenize_fn, and target_detokenize_fn should all "
                             "be set or none at all")
        return
    if (source_tokenize_fn is None) != (target_detokenize_fn is None):
        raise ValueError(f"{method}: source_tokenize_fn and target_detokenize_fn should both be set or none at all")
    if source_tokenize_fn is not None and target_file and target_tokenize_fn is None:
        raise ValueError(f"{method}: target_tokenize_fn should be set when passing a target file (target_path)")
    if target_tokenize_fn is not None and (source_tokenize_fn is None or not target_file):
        raise ValueError(f"{method}: target_tokenize_fn is only used with source_tokenize_fn and a target file "
                         "(target_path): CTranslate2 would ignore it")
