"""Sorted strict-JSON copies of values made of exact built-in types, for the fast intake path.

Both functions touch exact `dict`, `list`, `str`, `int`, `float`, `bool` and None only, and raise
`Unusual` for anything else (a subclass, a tuple, a `Mapping`, a non-string key, NaN, a huge
integer, nesting past the budget): the caller then leaves the value to the reference path
(`_jsonvalue.strict_json`), which says exactly what is wrong. They never run host code.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SCALAR_TYPES", "Unusual", "exact_json", "sorted_copy"]


class Unusual(Exception):
    """The fast path declines this value; the reference path decides."""


SCALAR_TYPES = frozenset((str, type(None), bool))
_SAFE_INT_BITS = 2000  # as `_jsonvalue`: ints this short always print
_ONLY_STR = frozenset((str,)).issuperset
_ONLY_PLAIN = frozenset((str, type(None))).issuperset
_ONLY_SCALARS = SCALAR_TYPES.issuperset


def sorted_copy(value: dict[Any, Any]) -> tuple[dict[str, Any], int]:
    """`value` with its keys sorted, and how many of its values are neither a string nor None
    (0 for up to four keys means none; past four, any); `Unusual` if a key is not an exact
    `str`. Up to four keys (a message, a tool call, its function, a content part) by a sorting
    network and one dict display: about three times as fast as testing the key types, sorting
    and testing the value types apart, and with no table to keep."""
    size = len(value)
    if size == 1:
        (a,) = value
        if type(a) is not str:
            raise Unusual
        va = value[a]
        return {a: va}, type(va) is not str and va is not None
    if size == 2:
        a, b = value
        if type(a) is not str or type(b) is not str:
            raise Unusual
        va, vb = value[a], value[b]
        odd = (type(va) is not str and va is not None) + (type(vb) is not str and vb is not None)
        return ({a: va, b: vb} if a < b else {b: vb, a: va}), odd
    if size == 3:
        a, b, c = value
        if type(a) is not str or type(b) is not str or type(c) is not str:
            raise Unusual
        if a > b:
            a, b = b, a
        if b > c:
            b, c = c, b
            if a > b:
                a, b = b, a
        va, vb, vc = value[a], value[b], value[c]
        odd = (
            (type(va) is not str and va is not None)
            + (type(vb) is not str and vb is not None)
            + (type(vc) is not str and vc is not None)
        )
        return {a: va, b: vb, c: vc}, odd
    if size == 4:
        a, b, c, d = value
        if type(a) is not str or type(b) is not str or type(c) is not str or type(d) is not str:
            raise Unusual
        if a > b:
            a, b = b, a
        if c > d:
            c, d = d, c
        if a > c:
            a, c = c, a
        if b > d:
            b, d = d, b
        if b > c:
            b, c = c, b
        out = {a: value[a], b: value[b], c: value[c], d: value[d]}
        return out, 0 if _ONLY_PLAIN(map(type, out.values())) else size
    if not _ONLY_STR(map(type, value)):
        raise Unusual
    out = dict(sorted(value.items())) if size else {}
    return out, 0 if _ONLY_PLAIN(map(type, out.values())) else size


def exact_json(value: Any, budget: int) -> Any:
    """`_jsonvalue._strict` restricted to exact built-in types (else `Unusual`)."""
    kind = type(value)
    if kind is dict:
        if not budget:
            raise Unusual
        out, odd = sorted_copy(value)
        if odd:
            budget -= 1
            for key in list(out):
                item = out[key]
                if type(item) not in SCALAR_TYPES:
                    out[key] = exact_json(item, budget)
        return out
    if kind is list:
        if not budget:
            raise Unusual
        if _ONLY_SCALARS(map(type, value)):
            return value.copy()
        budget -= 1
        return [exact_json(item, budget) for item in value]
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if value.bit_length() > _SAFE_INT_BITS:
            raise Unusual
        return value
    if kind is float and value - value == 0.0:  # not NaN nor an infinity
        return value
    raise Unusual
