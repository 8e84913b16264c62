"""The hot `get` and `put` of a LangGraph `ContextChefStore`: one item, as plain calls.

Over a synchronous backend, a get or put of one item is a read (and a write) of one entry: they
run through the store core's hot lane (`contextchef.store.lanes`), with the steps of the
`_get` and `_put` flows of `ContextChefStore._batch`, and return `FLOW` when the flow has more
to do (an item with a TTL read with `refresh_ttl`: a write; a put with pending writes before
it). `ContextChefStore.get`, `put` and a `batch` of one such operation come here; a namespace is
taken here only once `BaseStore`'s rules accepted it (`ContextChefStore._path` remembers it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextchef._effects import drive_sync
from contextchef.errors import MissingDependencyError
from contextchef.store.backend import StoredEntry
from contextchef.store.core import StoreCore

try:
    from langgraph.store.base import (
        GetOp,
        NotProvided,
        Op,
        PutOp,
        TTLConfig,
        validate_op_namespace,
    )

    from contextchef.integrations import _langgraph_items as items
    from contextchef.integrations import _langgraph_ttl as ttls
except ImportError as exc:  # pragma: no cover - exercised by the runtime-only install gate
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = ["FLOW", "get_now", "put_meta", "put_now", "single"]

FLOW: Any = object()
"""The answer for an operation that needs the batch flow."""


def single(
    core: StoreCore,
    ns: str,
    paths: items.Paths,
    op: Op,
    index: object | None,
    config: TTLConfig | None,
) -> Any:
    """A batch of one get or put as plain calls (its result), or `FLOW` when it needs the
    flow (a TTL refresh, a delete, a put to embed into `index`, any other operation)."""
    if isinstance(op, GetOp):
        validate_op_namespace(op)
        namespace = tuple(op.namespace)
        path = paths.path(namespace, op.key)
        return get_now(core, ns, path, namespace, op.key, op.refresh_ttl, config)
    if isinstance(op, PutOp) and op.value is not None and index is None:
        validate_op_namespace(op)
        path = paths.path(op.namespace, op.key)
        put_now(core, ns, path, op.namespace, op.key, op.value, op.ttl, config)
        return None
    return FLOW


def get_now(
    core: StoreCore,
    ns: str,
    path: str,
    namespace: tuple[str, ...],
    key: str,
    refresh_ttl: bool | None,
    config: TTLConfig | None,
) -> Any:
    """The `Item` at `path` (or None), or `FLOW` when reading it moves its expiry on."""
    now = core.clock()
    entry = core.lane(ns).get(path)
    if entry is None:
        return None
    meta = entry.meta
    if config and ttls.hidden(meta, now, config):
        return None
    refreshes = "ttl" in meta and ttls.wants_refresh(refresh_ttl, config)
    if refreshes and ttls.refreshed(meta, now) is not None:
        return FLOW  # an item with a TTL: its expiry moves on, a write
    return items.item_of(namespace, key, entry)


def put_now(
    core: StoreCore,
    ns: str,
    path: str,
    namespace: tuple[str, ...],
    key: str,
    value: Mapping[str, Any],
    ttl: float | NotProvided | None,
    config: TTLConfig | None,
) -> None:
    """Write `value` at `path`: its TTL meta, the first `created_at` kept (the flow's steps
    when the lane cannot take it)."""
    now = core.clock()
    content = items.value_text(namespace, key, value)
    lane = core.lane(ns)
    meta = put_meta(ttl, config, lane.get(path), now)
    if lane.put(path, content, meta) is None:
        drive_sync(core.put(ns, path, content, meta))


def put_meta(
    ttl: float | NotProvided | None,
    config: TTLConfig | None,
    existing: StoredEntry | None,
    now: float,
) -> dict[str, Any] | None:
    """The meta a put writes over `existing`: its TTL (`ttl` minutes, NOT_PROVIDED: the
    default), the first `created_at`."""
    meta = ttls.expiry_meta(ttl, config, now)
    if existing is not None:
        meta["created_at"] = existing.meta["created_at"]
    return meta or None
