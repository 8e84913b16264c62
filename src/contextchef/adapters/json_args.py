"""JSON the adapters decode (tool-call arguments, tool results that hold a JSON object), with
every object's keys in sorted order, exactly as the standard library parses it.

With the optional `orjson` installed (extra `fast`), parsing is done by orjson where that is
exact: it parses several times faster than `json` with a sorting hook, but differs from it on a
few inputs (it refuses NaN, Infinity, lone surrogates and very deep nesting, and reads an
integer beyond 64 bits as a float). Every such input (any error, any float) is handed to the
caller's standard-library decoder instead, so the value, and any error with its message, are
the ones `json` gives. Without orjson the standard-library decoder parses everything
(`benchmarks/json_args.py` measures what the speed-up is worth in a compile).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ORJSON", "loads_sorted_fast", "loads_sorted_stdlib"]


def loads_sorted_stdlib(text: str, slow: Callable[[str], Any]) -> Any:
    """`slow(text)`: the standard-library path, used when orjson is not installed."""
    return slow(text)


try:
    import orjson
except ImportError:  # the `fast` extra is not installed: the standard library parses
    ORJSON = False
    loads_sorted_fast = loads_sorted_stdlib
else:
    ORJSON = True

    class _Float(Exception):
        """A float in orjson's result: it may stand for an integer orjson could not hold."""

    _SCALARS = frozenset((str, int, bool, type(None)))
    _ONLY_SCALARS = _SCALARS.issuperset

    def _resorted(value: Any) -> Any:
        kind = type(value)
        if kind is dict:
            if _ONLY_SCALARS(map(type, value.values())):  # flat (most arguments): sorted in C
                return dict(sorted(value.items()))  # (keys are unique: values never compared)
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
        """`slow(text)` (a `json` decoder that sorts keys), computed by orjson when exact."""
        try:
            value = orjson.loads(text)
        except (orjson.JSONDecodeError, RecursionError):
            return slow(text)
        if type(value) is dict:
            if len(value) == 2:  # the commonest arguments: a pair, sorted without `sorted`
                (first, one), (second, other) = value.items()
                if type(one) in _SCALARS and type(other) in _SCALARS:
                    return value if first < second else {second: other, first: one}
            elif _ONLY_SCALARS(map(type, value.values())):  # flat: sorted in C
                return dict(sorted(value.items())) if len(value) > 2 else value
        try:
            return _resorted(value)
        except (_Float, RecursionError):
            return slow(text)
