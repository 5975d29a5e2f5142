"""Where a Translator's model comes from: a directory, or CTranslate2's ``files=`` (the
model's files in memory); and CTranslate2's ``contains_model``."""

from __future__ import annotations

import os
from typing import Any, Dict

from . import _attend

# The weights files that make a directory a model (CTranslate2's; attend's own).
_WEIGHTS = ("model.bin", "model.safetensors")


def contains_model(path: Any) -> bool:
    """Whether `path` is a directory that holds a model's weights, as
    ``ctranslate2.contains_model``: CTranslate2's ``model.bin`` — or attend's
    ``model.safetensors``."""
    try:
        return any(os.path.isfile(os.path.join(os.fspath(path), name)) for name in _WEIGHTS)
    except TypeError:
        raise TypeError(f"contains_model: path must be a path, not {type(path).__name__}") from None


def load(path: str, **options: Any) -> "_attend.Model":
    """Model.load, with CTranslate2's words added where it could not open the model's
    file, so that scripts matching on them ("Unable to open file") keep working."""
    try:
        return _attend.Model.load(path, **options)
    except RuntimeError as e:
        if not contains_model(path):
            raise RuntimeError(f"{e} (unable to open file 'model.bin' in model '{path}')") from None
        raise


def read_files(where: str, files: Any) -> Dict[str, bytes]:
    """CTranslate2's ``files=``: a dictionary of file name to content — bytes (or a
    bytearray, memoryview, or str, taken as UTF-8) or a file-like object, read now, as
    CTranslate2 reads it. TypeError with CTranslate2's words otherwise."""
    if not isinstance(files, dict):
        raise TypeError(f"{where}: files must be a dict, not {type(files).__name__} (files argument must be a "
                        "dictionary mapping file names to the file contents)")
    out: Dict[str, bytes] = {}
    for name, content in files.items():
        if not isinstance(name, str):
            raise TypeError(f"{where}: files: a file name must be a string, not {type(name).__name__}")
        read = getattr(content, "read", None)
        if callable(read):
            content = read()
        if isinstance(content, str):
            content = content.encode("utf-8")
        if not isinstance(content, (bytes, bytearray, memoryview)):
            raise TypeError(f"{where}: files[{name!r}] is {type(content).__name__} (File content must be a file-like "
                            "or bytes object)")
        out[name] = bytes(content)
    return out
