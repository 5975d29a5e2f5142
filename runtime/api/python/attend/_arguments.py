"""Checks of the scalar arguments of attend's Python API, before anything reaches the
engine: one rule for every method, so a wrong type or value always raises a
``TypeError``/``ValueError`` that names the method and the argument — never nanobind's
generic "incompatible function arguments", never an error about a field the caller
did not name.

A parameter annotated ``int``, ``float`` or ``bool`` is checked as such (so a new
option is checked by being declared); its range, where the engine has one, comes from
the engine's own description of the option (``include/attend/options.h``). What is
accepted follows CTranslate2's bindings: an ``int`` takes any integer (``bool`` and
NumPy integers included, not a float), a ``float`` any real number, a ``bool`` True,
False, None or an integer (a string or a float is refused).
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
from typing import Any, Callable, Dict, Optional, TypeVar

from . import _attend

_INT64_MAX = (1 << 63) - 1
_FLOAT32_MAX = 3.4028234663852886e38

# The engine's name of a Python argument where they differ (CTranslate2's names).
_ENGINE_NAMES = {"max_decoding_length": "max_length", "min_decoding_length": "min_length",
                 "sampling_temperature": "temperature"}
# Arguments the Python layer maps before the engine sees them: their engine range
# does not apply as it stands (sampling_topk < 1 is "all", as CTranslate2 reads it;
# max_decoding_length is cut to the model's positions).
_MAPPED = {"sampling_topk", "max_decoding_length"}
_SPECS = {s.name: s for s in _attend.translation_option_specs()}


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def integer(where: str, name: str, value: Any) -> int:
    """`value` as an int, or TypeError/ValueError naming `where` and `name`."""
    if isinstance(value, (float, str, bytes)) or value is None:
        raise TypeError(f"{where}: {name} must be an integer, not {type(value).__name__} {_describe(value)}")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{where}: {name} must be an integer, not {type(value).__name__}") from None
    spec = None if name in _MAPPED else _SPECS.get(_ENGINE_NAMES.get(name, name))
    if spec is not None and not spec.accepts(float(v)):
        raise ValueError(f"{where}: {name} = {v}: must be {spec.range}")
    if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
        raise ValueError(f"{where}: {name} = {v}: must fit in 64 bits (|{name}| < 2**63)")
    return int(v)


def real(where: str, name: str, value: Any) -> float:
    """`value` as a float (a finite float32), or TypeError/ValueError naming it."""
    if isinstance(value, (str, bytes, complex)) or value is None:
        raise TypeError(f"{where}: {name} must be a number, not {type(value).__name__} {_describe(value)}")
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"{where}: {name} = {_describe(value)}: must be a finite number") from None
    except (TypeError, ValueError):
        raise TypeError(f"{where}: {name} must be a number, not {type(value).__name__}") from None
    spec = _SPECS.get(_ENGINE_NAMES.get(name, name))
    if spec is not None and not spec.accepts(v):
        raise ValueError(f"{where}: {name} = {v}: must be {spec.range}")
    if not math.isfinite(v) or abs(v) > _FLOAT32_MAX:
        raise ValueError(f"{where}: {name} = {v}: must be a finite number (within float32's ±3.4e38)")
    return v


def flag(where: str, name: str, value: Any) -> bool:
    """`value` as a bool, or TypeError naming it."""
    if value is None or isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    try:
        return operator.index(value) != 0
    except TypeError:
        raise TypeError(f"{where}: {name} must be True or False, not {type(value).__name__} {_describe(value)}") from None


_CHECKS: Dict[str, Callable[[str, str, Any], Any]] = {"int": integer, "float": real, "bool": flag}

F = TypeVar("F", bound=Callable[..., Any])


def checked(where: Optional[str] = None, keywords_of: Optional[Callable[..., Any]] = None) -> Callable[[F], F]:
    """Decorates a method so that each argument annotated ``int``/``float``/``bool`` is
    checked and converted before the call (``where`` names it in messages: the method's
    name by default). ``keywords_of``: a function whose annotations also check what the
    method takes in ``**kwargs`` (those it forwards)."""

    def decorate(method: F) -> F:
        signature = inspect.signature(method)
        kinds = {name: _CHECKS[p.annotation] for name, p in signature.parameters.items() if p.annotation in _CHECKS}
        forwarded = {} if keywords_of is None else {
            name: _CHECKS[p.annotation] for name, p in inspect.signature(keywords_of).parameters.items()
            if p.annotation in _CHECKS}
        var_keyword = next((n for n, p in signature.parameters.items() if p.kind is p.VAR_KEYWORD), None)
        label = where or method.__name__

        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            values = bound.arguments
            for name, check in kinds.items():
                if name in values:
                    values[name] = check(label, name, values[name])
            if var_keyword is not None and var_keyword in values:
                extra = values[var_keyword]
                for name, check in forwarded.items():
                    if name in extra:
                        extra[name] = check(label, name, extra[name])
            return method(*bound.args, **bound.kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
