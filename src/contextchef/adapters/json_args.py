"""JSON the adapters decode (tool-call arguments, tool results that hold a JSON object): parsed
by orjson, with every object's keys in sorted order, exactly as the standard library parses it.

orjson parses several times faster than `json` with a sorting hook, but differs from it on a few
inputs: it refuses NaN, Infinity, lone surrogates and very deep nesting, and reads an integer
beyond 64 bits as a float. Every such input (any error, any float) is handed to the caller's
standard-library decoder instead, so the value, and any error with its message, are the ones
`json` gives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

__all__ = ["loads_sorted_fast"]


class _Float(Exception):
    """A float in orjson's result: it may stand for an integer orjson could not hold."""


_SCALARS = frozenset((str, int, bool, type(None)))


def _resorted(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        out = {}
        for key in sorted(value):
            item = value[key]
            out[key] = item if type(item) in _SCALARS else _resorted(item)
        return out
    if kind is list:
        return [item if type(item) in _SCALARS else _resorted(item) for item in value]
    if kind is float:
        raise _Float
    return value


def loads_sorted_fast(text: str, slow: Callable[[str], Any]) -> Any:
    """`slow(text)` (a `json` decoder that sorts keys), computed by orjson when that is exact."""
    try:
        return _resorted(orjson.loads(text))
    except (orjson.JSONDecodeError, _Float, RecursionError):
        return slow(text)
