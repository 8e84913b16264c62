"""LangGraph: `ContextChefStore`, a `BaseStore` over any contextchef backend.

    graph = builder.compile(store=ContextChefStore(SQLiteBackend("graph.db")))

Items live in one store namespace (`langgraph` by default): an item of namespace
`("users", "42")` under key `prefs` is the entry `users/42/=prefs`, every label and key
percent-encoded (see `_keys`; `=` is always encoded inside one, so an entry never collides with a
namespace directory). The entry holds the value as JSON; `created_at` and `updated_at` are the
entry's times (an update keeps `created_at`).

`batch` and `abatch` run one flow (the sync and async drivers of `contextchef._effects`), with
`InMemoryStore`'s batch semantics: the reads of a batch (gets, searches, namespace listings) see
the store as it was before the batch, then its puts apply, the last put of a key winning.
`SearchOp` filters like LangGraph's stores (nested dicts, lists, `$eq`, `$ne`, `$gt`, `$gte`,
`$lt`, `$lte`); a text `query` goes to the backend's own search (SQLite's FTS5, PostgreSQL's
full-text search, a substring scan elsewhere) and orders hits by its score. Without a query,
items come most recently updated first. There is no embedding index (`index=` is accepted and
ignored) and no TTL. Requires the `langgraph` extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from contextchef._effects import Flow, drive_async, drive_sync
from contextchef.chef.options import open_store
from contextchef.errors import ConfigError, MissingDependencyError
from contextchef.integrations._keys import decode_segment, encode_segment
from contextchef.store.backend import AsyncStorageBackend, StorageBackend, StoredEntry
from contextchef.store.paths import validate_namespace
from contextchef.store.search import scan
from contextchef.store.store import StoreBase

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - exercised by simulating the missing extra
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = ["ContextChefStore"]

KEY_MARK = "="
"""Starts the last segment of an entry path: the item key (never the start of a label)."""


def _directory(namespace: tuple[str, ...]) -> str:
    return "".join(encode_segment(label, what="namespace label") + "/" for label in namespace)


def _path(namespace: tuple[str, ...], key: str) -> str:
    return _directory(namespace) + KEY_MARK + encode_segment(key, what="key")


def _address(path: str) -> tuple[tuple[str, ...], str] | None:
    *labels, last = path.split("/")
    if not last.startswith(KEY_MARK):
        return None  # not written by this store
    return tuple(decode_segment(label) for label in labels), decode_segment(last[1:])


def _time(entry: StoredEntry, which: str) -> datetime:
    value = entry.meta.get(which)
    return datetime.fromtimestamp(float(value) if isinstance(value, int | float) else 0.0, UTC)


def _item(path: str, entry: StoredEntry, score: float | None = None, *, hit: bool = False) -> Any:
    address = _address(path)
    assert address is not None
    namespace, key = address
    fields: dict[str, Any] = {
        "value": json.loads(entry.content),
        "key": key,
        "namespace": namespace,
        "created_at": _time(entry, "created_at"),
        "updated_at": _time(entry, "updated_at"),
    }
    return SearchItem(**fields, score=score) if hit else Item(**fields)


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's JSONB-like filter match of one field."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, Mapping) and all(
            _compare(value.get(k), v) for k, v in wanted.items()
        )
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _operator(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(value == operand)
    if operator == "$ne":
        return bool(value != operand)
    comparisons = {
        "$gt": float.__gt__,
        "$gte": float.__ge__,
        "$lt": float.__lt__,
        "$lte": float.__le__,
    }
    if operator not in comparisons:
        raise ConfigError(f"unsupported filter operator {operator!r}")
    return bool(comparisons[operator](float(value), float(operand)))


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path, strict=False)
    if condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    elif condition.match_type != "prefix":
        raise ConfigError(f"unsupported match type {condition.match_type!r}")
    return all(wanted == "*" or label == wanted for label, wanted in pairs)


class ContextChefStore(BaseStore):
    """LangGraph's `BaseStore` on a contextchef store (see the module docstring).

    Args:
        store: a backend, a `Store`/`AsyncStore`, `"sqlite"` (the machine's database), `"memory"`
            (the default) or a `postgresql://` DSN. An async-native backend serves `abatch`
            (and the `a*` methods) only.
        namespace: the store namespace holding the items.
    """

    def __init__(
        self,
        store: StoreBase[Any] | StorageBackend | AsyncStorageBackend | str | None = None,
        *,
        namespace: str = "langgraph",
    ) -> None:
        self._core = open_store(store, asynchronous=True)
        self._ns = validate_namespace(namespace)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run `ops` (see the module docstring for the batch semantics)."""
        return drive_sync(self._batch(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch`, awaited."""
        return await drive_async(self._batch(list(ops)))

    def _batch(self, ops: list[Op]) -> Flow[list[Result]]:
        for op in ops:
            validate_op_namespace(op)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append((yield from self._get(op)))
            elif isinstance(op, SearchOp):
                results.append((yield from self._search(op)))
            elif isinstance(op, ListNamespacesOp):
                results.append((yield from self._list_namespaces(op)))
            elif isinstance(op, PutOp):
                puts[op.namespace, op.key] = op
                results.append(None)
            else:
                raise ConfigError(f"unknown LangGraph store operation {type(op).__name__}")
        for put in puts.values():
            yield from self._put(put)
        return results

    def _get(self, op: GetOp) -> Flow[Item | None]:
        path = _path(op.namespace, op.key)
        entry = yield from self._core.get(self._ns, path)
        return None if entry is None else _item(path, entry)

    def _put(self, op: PutOp) -> Flow[None]:
        path = _path(op.namespace, op.key)
        if op.value is None:
            yield from self._core.delete(self._ns, path)
            return
        try:
            content = json.dumps(dict(op.value), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"the value of {op.namespace!r}/{op.key!r} is not JSON: {exc}"
            ) from None
        existing = yield from self._core.get(self._ns, path)
        meta = {"created_at": existing.meta["created_at"]} if existing is not None else None
        yield from self._core.put(self._ns, path, content, meta)

    def _search(self, op: SearchOp) -> Flow[list[SearchItem]]:
        prefix = _directory(tuple(op.namespace_prefix))
        entries = yield from self._core.entries(self._ns, prefix)
        found: list[tuple[str, StoredEntry, float | None]] = []
        if op.query:
            if self._core.supports("search", self._ns):
                hits = yield from self._core.search(self._ns, op.query, prefix, None)
            else:
                hits = scan(entries.items(), op.query)
            for hit in hits:
                entry = entries.get(hit.path)
                if entry is not None:
                    found.append((hit.path, entry, hit.score))
        else:
            found = [(path, entry, None) for path, entry in entries.items()]
            found.sort(key=lambda f: -(f[1].updated_at or 0.0))
        items = []
        for path, entry, score in found:
            if _address(path) is None:
                continue
            value = json.loads(entry.content)
            if op.filter and not all(_compare(value.get(k), v) for k, v in op.filter.items()):
                continue
            items.append(_item(path, entry, score, hit=True))
        return items[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> Flow[list[tuple[str, ...]]]:
        listed = yield from self._core.list(self._ns, "")
        namespaces = set()
        for entry in listed:
            address = _address(entry.path)
            if address is not None:
                namespaces.add(address[0])
        kept = [
            ns
            for ns in namespaces
            if all(_matches(condition, ns) for condition in op.match_conditions or ())
        ]
        if op.max_depth is not None:
            kept = list({ns[: op.max_depth] for ns in kept})
        return sorted(kept)[op.offset : op.offset + op.limit]
