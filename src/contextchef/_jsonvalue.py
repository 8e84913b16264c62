"""JSON values as the chef keeps them: keys in sorted code-point order, copied cheaply.

Sorted keys are what make payloads byte-stable whatever order a user built their dicts in; the
chef sorts once, when a value enters (`sorted_keys`, `loads_sorted`), not on every compile.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "NotJson",
    "canonical_json",
    "copy_json",
    "json_text_problem",
    "loads_sorted",
    "sorted_keys",
    "stable_order",
    "strict_json",
]


def _sorted_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    pairs.sort(key=_first)
    return dict(pairs)


def _first(pair: tuple[str, Any]) -> str:
    return pair[0]


_SORTED_DECODER = json.JSONDecoder(object_pairs_hook=_sorted_object)


def loads_sorted(text: str) -> Any:
    """`json.loads`, with every object's keys in sorted order (sorted while parsing, in one pass).

    Raises `json.JSONDecodeError` like `json.loads`.
    """
    return _SORTED_DECODER.decode(text)


def sorted_keys(value: Any) -> Any:
    """A deep copy of a JSON value with every dict's keys in sorted code-point order (and every
    set or frozenset a list in `stable_order`).

    The chef keeps its private copies of messages in this form, so adapters can emit them (or
    parts of them) as they are and still produce byte-stable payloads.
    """
    if isinstance(value, Mapping):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list | tuple):
        return [sorted_keys(item) for item in value]
    if isinstance(value, set | frozenset):
        return [sorted_keys(item) for item in stable_order(value)]
    return value


def canonical_json(value: Any) -> str:
    """One string per logical value, whatever order its dicts were built in or its sets hash
    in: sorted keys, sets as sorted lists, anything else JSON cannot hold as its `str`."""
    return json.dumps(
        _canonical(value), ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
    )


def _canonical(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    if isinstance(value, set | frozenset):
        return [_canonical(item) for item in stable_order(value)]
    return value


def stable_order(items: Any) -> list[Any]:
    """The members of a set (or any iterable) in an order that does not depend on hashing or
    construction: by type name, then canonical JSON, so mixed types sort too."""
    return sorted(items, key=_order_key)


def _order_key(item: Any) -> tuple[str, str]:
    return type(item).__name__, canonical_json(item)


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON-like value (dicts, lists, scalars), much faster than `deepcopy`."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


MAX_DEPTH = 200
"""How deeply host JSON (messages, tool schemas, tool-call arguments) may nest. Far beyond any
real message; well inside the interpreter's recursion limit, so the walks below, `json.dumps`
and the SDKs' encoders never hit it. A value that contains itself is reported at this depth."""


class NotJson(ValueError):
    """A host value is not strict JSON. `reason` says why; `path` locates it (keys and indexes
    from the top of the value, e.g. `["tool_calls", 0, "function"]`)."""

    def __init__(self, reason: str, path: list[str | int] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str | int] = path if path is not None else []

    def where(self) -> str:
        """The path as a field name, `tool_calls[0].function`; "" for the top of the value.
        A path deeper than 12 steps keeps its first 10 and says how many more follow."""
        text = ""
        for step in self.path[:10] if len(self.path) > 12 else self.path:
            text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
        if len(self.path) > 12:
            text += f"…({len(self.path) - 10} levels more)"
        return text

    def describe(self, top: str, inner: str = "the value") -> str:
        """A sentence naming the fault: `top` (e.g. "the message") or `inner` at its path."""
        where = self.where()
        return f"{f'{inner} at {where}' if where else top} {self.reason}"


class _Fault(Exception):
    """Raised by the fast walk; `strict_json` then locates the fault with the slow one."""


def strict_json(value: Any) -> Any:
    """`sorted_keys` for host input, refusing anything that is not strict JSON.

    Accepts dicts (any `Mapping`) with string keys, lists and tuples, strings, booleans, None,
    finite floats and integers `str()` can print; returns a deep copy with sorted keys (tuples
    become lists, and a `str` subclass, key or value, a plain `str` of its data, as `json.dumps`
    writes it: an enum member's value, never its `__str__`). Refuses (`NotJson`, with the path
    of the first fault) non-string keys, NaN and infinities, integers beyond the interpreter's
    int-to-str limit, sets (their order is not the host's) and any other type, and nesting
    deeper than `MAX_DEPTH` (which is how a value that contains itself ends). One recursive
    pass, the copy itself: the checks ride on it.
    """
    try:
        return _strict(value, MAX_DEPTH)
    except (_Fault, RecursionError):
        found = _locate(value, [], MAX_DEPTH, set())
    raise found if found.reason else NotJson(f"is nested more than {MAX_DEPTH} levels deep")


def _strict(value: Any, budget: int) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is dict:
        if not budget:
            raise _Fault
        for key in value:
            if type(key) is not str:
                if not all(isinstance(key, str) for key in value):
                    raise _Fault
                value = {str.__str__(key): item for key, item in value.items()}  # keys' data
                break
        budget -= 1
        return {key: _strict(value[key], budget) for key in sorted(value)}
    if kind is list or kind is tuple:
        if not budget:
            raise _Fault
        budget -= 1
        return [_strict(item, budget) for item in value]
    if kind is int:
        if value.bit_length() > _SAFE_INT_BITS and _unprintable(value):
            raise _Fault
        return value
    if kind is float:
        if value - value != 0.0:  # NaN and the infinities
            raise _Fault
        return value
    if isinstance(value, Mapping):
        return _strict(dict(value), budget)
    if isinstance(value, list | tuple):
        return _strict(list(value), budget)
    if isinstance(value, str):  # its data, as `json.dumps` writes it (never its `__str__`)
        return str.__str__(value)
    for base in (int, float):  # a subclass (an enum member…) as its plain JSON value
        if isinstance(value, base):
            return _strict(base(value), budget)
    raise _Fault


_SAFE_INT_BITS = 2000
"""Integers up to this many bits (about 600 digits) print under any int-to-str limit Python
accepts (at least 640 digits); longer ones are checked by printing them."""


def _unprintable(value: int) -> bool:
    try:
        str(value)
    except ValueError:
        return True
    return False


def _locate(value: Any, path: list[str | int], budget: int, open_: set[int]) -> NotJson:
    """The first fault `_strict` met, with its path (a slow walk, run only after a fault)."""
    kind = type(value)
    if isinstance(value, Mapping | list | tuple):
        if id(value) in open_:
            return NotJson("contains itself (a reference cycle)", path)
        if not budget:
            return NotJson(f"is nested more than {MAX_DEPTH} levels deep", path)
        open_.add(id(value))
        if isinstance(value, Mapping):
            for key in value:
                if not isinstance(key, str):
                    return NotJson(f"has the non-string key {key!r}; JSON keys are strings", path)
            items: list[tuple[str | int, Any]] = [(key, value[key]) for key in sorted(value)]
        else:
            items = list(enumerate(value))
        for step, item in items:
            found = _locate(item, [*path, step], budget - 1, open_)
            if found.reason:
                return found
        open_.discard(id(value))
        return NotJson("", path)
    if kind is int and _unprintable(value):
        return NotJson(
            f"is an integer of more than {sys.get_int_max_str_digits()} digits, beyond what "
            "Python prints (sys.set_int_max_str_digits)",
            path,
        )
    if kind is float and value - value != 0.0:
        return NotJson(f"is {value!r}; JSON has no NaN or infinity", path)
    if kind is set or kind is frozenset:
        return NotJson("is a set; pass a list (a set has no order of its own)", path)
    if kind in (str, bool, int, float) or value is None:
        return NotJson("", path)
    for base in (str, int, float):
        if isinstance(value, base):
            return _locate(base(value), path, budget, open_)
    return NotJson(
        f"is a {kind.__name__}; JSON values are dict, list, str, number, bool or None", path
    )


_EXPONENT = re.compile(r"[eE]\+?\d\d\d")
"""An exponent of three digits or more: the only way a JSON number overflows to infinity."""


class _NotFinite(ValueError):
    """A NaN or infinity met while parsing."""


def _refuse_constant(name: str) -> float:
    raise _NotFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:
        raise _NotFinite(text)
    return value


_STRICT_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


def json_text_problem(raw: str, what: str) -> str | None:
    """Why a JSON text that parses is not strict JSON (NaN, Infinity, 1e999, an integer beyond
    Python's int-to-str limit, nesting beyond `MAX_DEPTH`), as a sentence about `what`; None if
    it is strict JSON or not JSON at all.

    A short string is parsed only when it could hold such a value (two substring tests and a
    regex); a long one is parsed outright, which costs less than scanning it with a regex."""
    short = len(raw) <= 2 * MAX_DEPTH  # too short to nest deeper, or to hold a 640-digit int
    if short and "NaN" not in raw and "Infinity" not in raw and not _EXPONENT.search(raw):
        return None
    try:
        value = _STRICT_DECODER.decode(raw)
        if raw.count("[") + raw.count("{") > MAX_DEPTH:
            strict_json(value)
    except json.JSONDecodeError:
        return None
    except _NotFinite as exc:
        return f"{what} holds {exc}, a number strict JSON does not have"
    except NotJson as exc:
        return exc.describe(what, what)
    except RecursionError:
        return f"{what} is nested more than {MAX_DEPTH} levels deep"
    except ValueError as exc:  # int(): an integer longer than the int-to-str limit
        return f"{what} holds a number Python cannot read: {exc}"
    return None
