"""JSON text the integrations stored, decoded by orjson when it is installed (the `fast` extra)
and can, else by `json`: orjson refuses what it would decode differently (lone surrogates,
integers beyond 64 bits), and those go to `json`, so the result is always `json.loads`'s."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads"]

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is the optional `fast` extra
    _orjson = None


def loads(text: str) -> Any:
    """`json.loads(text)`, faster where orjson can answer."""
    if _orjson is not None:
        try:
            return _orjson.loads(text)
        except (_orjson.JSONDecodeError, RecursionError):
            pass
    return json.loads(text)
