"""CTranslate2's ``set_log_level``/``get_log_level`` over attend's log: the library's
lines on standard error (what loading a model found and chose, at INFO), set with a
Python logging level."""

from __future__ import annotations

import logging

from . import _attend

# Python's level → attend's (0 off, 1 critical, 2 error, 3 warning, 4 info, 5 debug, 6 trace), as CTranslate2 maps them.
_TO_ATTEND = {logging.CRITICAL: 1, logging.ERROR: 2, logging.WARNING: 3, logging.INFO: 4, logging.DEBUG: 5,
              logging.NOTSET: 6}
_TO_PYTHON = {v: k for k, v in _TO_ATTEND.items()}


def set_log_level(level: int) -> None:
    """Sets the library's log level from a Python logging level (``logging.INFO``: each
    model load says what it loaded and chose). The default is ``logging.WARNING``, or
    $ATTEND_LOG_LEVEL (off, critical, error, warning, info, debug, trace)."""
    attend_level = _TO_ATTEND.get(level) if isinstance(level, int) and not isinstance(level, bool) else None
    if attend_level is None:
        raise ValueError(f"set_log_level: {level!r} is not a Python logging level (logging.CRITICAL, ERROR, WARNING, "
                         f"INFO, DEBUG or NOTSET) (Level {level} is not a valid logging level)")
    _attend.set_log_level(attend_level)


def get_log_level() -> int:
    """The library's log level, as a Python logging level (off: ``logging.CRITICAL + 10``)."""
    return _TO_PYTHON.get(_attend.get_log_level(), logging.CRITICAL + 10)
