"""Host text that reaches a payload: it must encode as UTF-8, and what an error shows of a host
value must never fail to print.

A lone surrogate (U+D800–U+DFFF outside a pair: what `"\\ud800"` in a JSON text, or a `str`
decoded with `surrogateescape`, makes) is a valid Python `str` that no SDK can send: UTF-8 has no
encoding for it. The chef refuses it where the host hands it over (a message, a tool definition,
the dynamic state), naming where it is, instead of keeping it and failing in the SDK at every
request; it never repairs it (replacing it would change the host's text without its say).

The checks are cheap: `str.isascii()` is a flag CPython keeps on every string (O(1)), and only a
non-ASCII string is encoded once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # the `fast` extra is not installed: the walk decides alone
    _orjson = None

__all__ = ["all_encodable", "encodable", "find_surrogate", "shown", "surrogate_problem"]

_BATCH = 512  # values encoded at once by `all_encodable`: a bounded transient buffer

_REPR_LIMIT = 80


def surrogate_problem(text: str) -> str | None:
    """Why `text` cannot be sent (it holds a lone surrogate), as the end of a sentence; else
    None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"holds the lone surrogate U+{ord(text[exc.start]):04X} at index {exc.start}, "
            "which UTF-8 cannot encode"
        )
    return None


def find_surrogate(value: Any) -> tuple[list[str | int], str] | None:
    """The path to the first string (a dict key or a value) of a JSON-like `value` that holds a
    lone surrogate, with the problem; None when every string encodes. Dicts and lists are
    walked (keys that are not strings are skipped), anything else is not text."""
    if encodable(value):
        return None
    return _locate(value, [])


def encodable(value: Any) -> bool:
    """Whether every string in `value` (keys included) encodes as UTF-8: the fast walk."""
    kind = type(value)
    if kind is str:
        return value.isascii() or surrogate_problem(value) is None
    if kind is dict:
        for key, item in value.items():
            if type(key) is str and not key.isascii() and surrogate_problem(key) is not None:
                return False
            if type(item) is str:
                if not item.isascii() and surrogate_problem(item) is not None:
                    return False
            elif item is not None and not encodable(item):
                return False
        return True
    if kind is list:
        for item in value:
            if type(item) is str:
                if not item.isascii() and surrogate_problem(item) is not None:
                    return False
            elif item is not None and not encodable(item):
                return False
        return True
    return True  # a number, a bool, None


def all_encodable(values: Sequence[Any]) -> bool:
    """`all(encodable(value) for value in values)` for strict-JSON values (a chef's message
    copies). With orjson installed, a batch of values is encoded at once in native code, which
    refuses any lone surrogate: a batch it encodes needs no walk, one it refuses (for that or,
    rarely, another reason: an integer beyond 64 bits) is walked to decide."""
    if _orjson is None:
        return all(encodable(value) for value in values)
    for start in range(0, len(values), _BATCH):
        batch = values[start : start + _BATCH]
        try:
            _orjson.dumps(batch)
        except _orjson.JSONEncodeError:
            if not all(encodable(value) for value in batch):
                return False
    return True


def _locate(value: Any, path: list[str | int]) -> tuple[list[str | int], str] | None:
    if type(value) is str:
        problem = surrogate_problem(value)
        return (path, problem) if problem is not None else None
    if type(value) is dict:
        for key, item in value.items():
            problem = surrogate_problem(key) if type(key) is str else None
            if problem is not None:
                return path, f"has a key that {problem}"
            found = _locate(item, [*path, key])
            if found is not None:
                return found
    elif type(value) is list:
        for index, item in enumerate(value):
            found = _locate(item, [*path, index])
            if found is not None:
                return found
    return None


def shown(value: object, limit: int = _REPR_LIMIT) -> str:
    """`repr(value)` for an error message, cut to about `limit` characters; never raises (an
    integer too long to print, a `__repr__` that fails) and never shows a lone surrogate raw."""
    try:
        text = repr(value)
    except Exception:
        if isinstance(value, int):
            return f"<an integer of about {int(value.bit_length() * 0.30103) + 1} digits>"
        return f"<a {type(value).__name__} that cannot be shown>"
    if len(text) > limit:
        text = f"{text[: limit - 1]}…"
    return text if surrogate_problem(text) is None else ascii(text)[1:-1]
