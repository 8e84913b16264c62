"""LangGraph items as store entries: paths, values and the `Item`s built from them.

An item of namespace `("users", "42")` under key `prefs` is the entry `users/42/=prefs` (every
label and key percent-encoded, see `_keys`); the entry holds the value as JSON (decoded by
orjson when it is installed, see `_json`) and its times are the item's.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from contextchef._jsonload import loads
from contextchef.errors import ConfigError, MissingDependencyError
from contextchef.integrations._keys import decode_segment, encode_segment
from contextchef.store.backend import StoredEntry

try:
    from langgraph.store.base import Item, ListNamespacesOp, PutOp, SearchItem
except ImportError as exc:  # pragma: no cover - exercised by the runtime-only install gate
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = [
    "KEY_MARK",
    "address",
    "decode",
    "directory",
    "fixed_prefix",
    "is_item",
    "item",
    "item_of",
    "path_of",
    "updated",
    "value_text",
]


def decode(text: str) -> Any:
    """An item value's JSON text, decoded (see `_json`)."""
    return loads(text)


KEY_MARK = "="
"""Starts the last segment of an entry path: the item key (never the start of a label)."""


def directory(namespace: tuple[str, ...]) -> str:
    return "".join(encode_segment(label, what="namespace label") + "/" for label in namespace)


def path_of(namespace: tuple[str, ...], key: str) -> str:
    return directory(namespace) + KEY_MARK + encode_segment(key, what="key")


def address(path: str) -> tuple[tuple[str, ...], str] | None:
    *labels, last = path.split("/")
    if not last.startswith(KEY_MARK):
        return None  # not written by this store
    return tuple(decode_segment(label) for label in labels), decode_segment(last[1:])


def _time(entry: StoredEntry, which: str) -> datetime:
    value = entry.meta.get(which)
    return datetime.fromtimestamp(float(value) if isinstance(value, int | float) else 0.0, UTC)


def is_item(path: str) -> bool:
    """Whether `path` is an item's entry (its last segment starts with the key mark)."""
    return path.startswith(KEY_MARK, path.rfind("/") + 1)


def value_text(op: PutOp) -> str:
    """The JSON text of a put's value; `ConfigError` when it is not JSON."""
    try:
        return json.dumps(dict(op.value or {}), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"the value of {op.namespace!r}/{op.key!r} is not JSON: {exc}") from None


def item_of(namespace: tuple[str, ...], key: str, entry: StoredEntry) -> Item:
    return Item(
        value=decode(entry.content),
        key=key,
        namespace=namespace,
        created_at=_time(entry, "created_at"),
        updated_at=_time(entry, "updated_at"),
    )


def item(
    path: str,
    entry: StoredEntry,
    score: float | None = None,
    *,
    hit: bool = False,
    value: Any = None,
) -> Any:
    found = address(path)
    assert found is not None
    namespace, key = found
    fields: dict[str, Any] = {
        "value": decode(entry.content) if value is None else value,
        "key": key,
        "namespace": namespace,
        "created_at": _time(entry, "created_at"),
        "updated_at": _time(entry, "updated_at"),
    }
    return SearchItem(**fields, score=score) if hit else Item(**fields)


def fixed_prefix(op: ListNamespacesOp) -> tuple[str, ...]:
    """The labels every namespace `op` lists starts with: a prefix condition's, up to its
    first wildcard."""
    for condition in op.match_conditions or ():
        if condition.match_type == "prefix":
            labels = tuple(condition.path)
            return labels[: labels.index("*")] if "*" in labels else labels
    return ()


def updated(entry: StoredEntry) -> float:
    value = entry.meta.get("updated_at")
    return float(value) if isinstance(value, int | float) else 0.0
