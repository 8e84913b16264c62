"""JSON values as the chef keeps them: keys in sorted code-point order, copied cheaply.

Sorted keys are what make payloads byte-stable whatever order a user built their dicts in; the
chef sorts once, when a value enters (`sorted_keys`, `loads_sorted`), not on every compile.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["canonical_json", "copy_json", "loads_sorted", "sorted_keys", "stable_order"]


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
