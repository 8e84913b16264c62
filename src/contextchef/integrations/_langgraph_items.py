"""LangGraph items as store entries: paths, values and the `Item`s built from them.

An item of namespace `("users", "42")` under key `prefs` is the entry `users/42/=prefs` (every
label and key percent-encoded, see `_keys`); the entry holds the value as JSON (decoded by
orjson when it is installed, see `_json`) and its times are the item's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from contextchef._jsondump import dumps
from contextchef._jsonload import loads
from contextchef.errors import ConfigError, MissingDependencyError
from contextchef.integrations._keys import decode_segment, encode_segment
from contextchef.store.backend import StoredEntry

try:
    from langgraph.store.base import Item, ListNamespacesOp, SearchItem
except ImportError as exc:  # pragma: no cover - exercised by the runtime-only install gate
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = [
    "KEY_MARK",
    "Paths",
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
    """The directory (ending in `/`) of the items of `namespace`."""
    return "".join(encode_segment(label, what="namespace label") + "/" for label in namespace)


directory_of = directory


def path_of(namespace: tuple[str, ...], key: str) -> str:
    return directory(namespace) + KEY_MARK + encode_segment(key, what="key")


class Paths:
    """`path_of`, remembered: the directory of each namespace (only once it was accepted: a
    namespace is handed to `path` after `BaseStore`'s checks) and the segment of each key, a
    few thousand of each at most (forgotten all at once past that)."""

    __slots__ = ("_directories", "_keys")

    LIMIT = 4096

    def __init__(self) -> None:
        self._directories: dict[tuple[str, ...], str] = {}
        self._keys: dict[str, str] = {}

    def path(self, namespace: tuple[str, ...], key: str) -> str:
        """The entry path of the item `key` in `namespace` (`InvalidPathError` for a key
        beyond the store's limits)."""
        directory = self._directories.get(namespace)
        if directory is None:
            if len(self._directories) >= self.LIMIT:
                self._directories.clear()
            directory = self._directories[namespace] = directory_of(namespace)
        return directory + KEY_MARK + self._segment(key)

    def known(self, namespace: tuple[str, ...], key: str) -> str | None:
        """`path`, when `namespace` was accepted before; else None."""
        directory = self._directories.get(namespace) if type(namespace) is tuple else None
        if directory is None:
            return None
        segment = self._keys.get(key)  # `key` is a str here
        return directory + KEY_MARK + (segment or self._segment(key))

    def _segment(self, key: str) -> str:
        segment = self._keys.get(key) if type(key) is str else None
        if segment is None:
            segment = encode_segment(key, what="key")
            if len(self._keys) >= self.LIMIT:
                self._keys.clear()
            self._keys[key] = segment
        return segment


def address(path: str) -> tuple[tuple[str, ...], str] | None:
    """The namespace and key of an item's entry path; None for a path this store did not
    write."""
    cut = path.rfind("/") + 1
    if not path.startswith(KEY_MARK, cut):
        return None
    return _namespace_of(path[:cut]), decode_segment(path[cut + 1 :])


_NAMESPACES: dict[str, tuple[str, ...]] = {}
"""The namespaces of directories decoded (at most `Paths.LIMIT`): the items a search returns
share a few."""


def _namespace_of(directory: str) -> tuple[str, ...]:
    namespace = _NAMESPACES.get(directory)
    if namespace is None:
        namespace = tuple(decode_segment(label) for label in directory.split("/")[:-1])
        if len(_NAMESPACES) >= Paths.LIMIT:
            _NAMESPACES.clear()
        _NAMESPACES[directory] = namespace
    return namespace


_DATES: dict[float, datetime] = {}
"""The datetimes of entry times already converted (at most `_MAX_DATES`; an item read again
has the same times): a lookup instead of a conversion. Datetimes are immutable."""

_MAX_DATES = 4096


def _time(entry: StoredEntry, which: str) -> datetime:
    value = entry.meta.get(which)
    return (_DATES.get(value) if type(value) is float else None) or _date(value)


def _date(value: object) -> datetime:
    """The UTC datetime of an entry time (0 for a missing one), remembered."""
    seconds = float(value) if isinstance(value, int | float) else 0.0
    found = _DATES.get(seconds)
    if found is None:
        if len(_DATES) >= _MAX_DATES:
            _DATES.clear()
        found = _DATES[seconds] = datetime.fromtimestamp(seconds, UTC)
    return found


def is_item(path: str) -> bool:
    """Whether `path` is an item's entry (its last segment starts with the key mark)."""
    return path.startswith(KEY_MARK, path.rfind("/") + 1)


def value_text(namespace: tuple[str, ...], key: str, value: Mapping[str, Any] | None) -> str:
    """The JSON text of a put's value (see `_jsondump`); `ConfigError` when it is not JSON."""
    try:
        return dumps(value if type(value) is dict else dict(value or {}))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"the value of {namespace!r}/{key!r} is not JSON: {exc}") from None


def item_of(namespace: tuple[str, ...], key: str, entry: StoredEntry) -> Item:
    """The `Item` of `entry` (the hot path of a get: `_time`'s steps inline)."""
    meta = entry.meta
    created, updated = meta.get("created_at"), meta.get("updated_at")
    return Item(
        value=loads(entry.content),
        key=key,
        namespace=namespace,
        created_at=(_DATES.get(created) if type(created) is float else None) or _date(created),
        updated_at=(_DATES.get(updated) if type(updated) is float else None) or _date(updated),
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
    value = loads(entry.content) if value is None else value
    created, updated = _time(entry, "created_at"), _time(entry, "updated_at")
    if hit:
        return SearchItem(
            namespace=namespace,
            key=key,
            value=value,
            created_at=created,
            updated_at=updated,
            score=score,
        )
    return Item(value=value, key=key, namespace=namespace, created_at=created, updated_at=updated)


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
