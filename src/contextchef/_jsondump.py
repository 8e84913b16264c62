"""JSON text of a value the integrations store, encoded by orjson when it is installed (the
`fast` extra) and the value is plain JSON, else by `json`.

`dumps(value)` is `json.dumps(value, ensure_ascii=False, allow_nan=False)` in what it accepts,
refuses (the same `TypeError` or `ValueError`) and what its text decodes to, written compact (no
space after `,` and `:`) by either encoder, so a value stored with and without orjson is the same
text (only a float's spelling may differ, as `1e+16` against `1e16`). orjson takes a value only
when it is made of exact built-in `dict` (string keys), `list`, `str`, `int` (64 bits), finite
`float`, `bool` and None, nested at most `MAX_FAST_DEPTH` deep: what orjson would encode where
`json` refuses (a NaN as `null`, a UUID, a dataclass, an enum) or encode differently (a subclass)
goes to `json`, and so does a string orjson refuses (a lone surrogate).
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["MAX_FAST_DEPTH", "dumps"]

MAX_FAST_DEPTH = 32
"""Nesting past this goes to `json` (orjson's own limit is 254)."""

_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is the optional `fast` extra
    _orjson = None

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what orjson encodes without OPT_STRICT_INTEGER


def dumps(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))`, faster
    where orjson can."""
    if _orjson is not None and _plain(value, 0):
        try:
            text: str = _orjson.dumps(value).decode()
        except _orjson.JSONEncodeError:  # a lone surrogate: `json` writes it
            pass
        else:
            return text
    return _encode(value)


def _plain(value: Any, depth: int) -> bool:
    """Whether `value` is made of exact built-in JSON types only (see the module docstring)."""
    kind = type(value)
    if kind is dict:
        if depth >= MAX_FAST_DEPTH:
            return False
        for key, item in value.items():
            if type(key) is not str or (not _scalar(item) and not _plain(item, depth + 1)):
                return False
        return True
    if kind is list:
        if depth >= MAX_FAST_DEPTH:
            return False
        return all(_scalar(item) or _plain(item, depth + 1) for item in value)
    return _scalar(value)


def _scalar(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(_INT_MIN <= value <= _INT_MAX)
    return kind is float and math.isfinite(value)
