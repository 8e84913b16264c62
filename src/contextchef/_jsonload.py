"""JSON text (tool-call arguments, what the integrations stored) decoded by orjson when it is
installed (the `fast` extra) and can, else by `json`, so the result is always `json.loads`'s:
orjson refuses some of what it would decode differently (lone surrogates, a float beyond the
double range), and turns an integer beyond 64 bits into a float without a word, so a text
holding a run of 19 digits or more goes to `json` too."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["flat_object", "loads"]

_LONG_NUMBER = re.compile(r"[0-9]{19}")
"""A digit run orjson may read as a float where `json` reads an int (beyond 64 bits). JSON
numbers are ASCII digits only; `[0-9]` scans ~2.5x faster than `\\d` (a Unicode class)."""

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is the optional `fast` extra
    _orjson = None


def loads(text: str) -> Any:
    """`json.loads(text)`, faster where orjson can answer."""
    if _orjson is not None and _LONG_NUMBER.search(text) is None:
        try:
            return _orjson.loads(text)
        except (_orjson.JSONDecodeError, RecursionError):
            pass
    return json.loads(text)


_FLAT = frozenset((str, int, bool, type(None))).issuperset


def flat_object(text: str) -> bool:
    """Whether `text` is, as orjson reads it, a JSON object whose values are all strings,
    integers, booleans or null (most tool-call arguments). Such a text is strict JSON and
    `json.loads` reads the same object: orjson refuses NaN, Infinity and lone surrogates, and
    reads an integer beyond 64 bits (or 1e999) as a float, which is not one of those types.
    False whenever it cannot tell (no orjson, not JSON, anything else): the caller then checks
    the long way. One C parse, no regex."""
    if _orjson is None:
        return False
    try:
        value = _orjson.loads(text)
    except (_orjson.JSONDecodeError, RecursionError):
        return False
    return type(value) is dict and _FLAT(map(type, value.values()))
