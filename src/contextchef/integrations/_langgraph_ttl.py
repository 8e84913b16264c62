"""LangGraph's TTL for `ContextChefStore`: expiry times in entry meta and the sweeper thread.

An item written with a TTL (`ttl=` minutes, else `TTLConfig["default_ttl"]`) carries `ttl` (minutes)
and `expires_at` (seconds since the epoch, on the store's clock) in its entry meta. A read with
`refresh_ttl` (default `TTLConfig["refresh_on_read"]`, else True) moves `expires_at` on; an
expired item stays readable until swept unless `TTLConfig["omit_expired"]` is set, as in
`PostgresStore`. `sweep_ttl()` deletes the expired items; the sweeper thread calls it every
`sweep_interval_minutes` (default 5), as `SqliteStore`'s and `PostgresStore`'s do.
`refresh_flow` and `sweep_flow` are those writes, as flows over the store's core.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

from contextchef._effects import Flow
from contextchef.errors import MissingDependencyError
from contextchef.store.backend import StoredEntry
from contextchef.store.core import StoreCore

try:
    from langgraph.store.base import NotProvided, TTLConfig

    from contextchef.integrations import _langgraph_items as items
    from contextchef.integrations._langgraph_index import GraphIndex
except ImportError as exc:  # pragma: no cover - exercised by the runtime-only install gate
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = [
    "Sweeper",
    "expired",
    "expiry_meta",
    "hidden",
    "omits_expired",
    "refresh_flow",
    "refreshed",
    "sweep_flow",
    "wants_refresh",
]

log = logging.getLogger(__name__)


def expiry_meta(
    ttl: float | NotProvided | None, config: TTLConfig | None, now: float
) -> dict[str, Any]:
    """The TTL meta of an item written now with `ttl` (minutes; NOT_PROVIDED: the default)."""
    minutes = (config or {}).get("default_ttl") if isinstance(ttl, NotProvided) else ttl
    if minutes is None:
        return {}
    at = _expires_at(now, minutes)
    return {} if at is None else {"ttl": float(minutes), "expires_at": at}


def _expires_at(now: float, minutes: float) -> float | None:
    """When an item with `minutes` to live expires; None when that is past any date a float
    holds (a TTL of 1e306 minutes, or an infinite one, never expires)."""
    at = now + float(minutes) * 60.0
    return at if math.isfinite(at) else None


def expired(meta: Mapping[str, Any], now: float) -> bool:
    at = meta.get("expires_at")
    return isinstance(at, int | float) and at <= now


def omits_expired(config: TTLConfig | None) -> bool:
    """Whether reads leave out expired items (`omit_expired`)."""
    return bool((config or {}).get("omit_expired", False))


def hidden(meta: Mapping[str, Any], now: float, config: TTLConfig | None) -> bool:
    """Whether reads leave out an item with `meta` now: expired, under `omit_expired`."""
    return omits_expired(config) and expired(meta, now)


def wants_refresh(refresh_ttl: bool | None, config: TTLConfig | None) -> bool:
    if refresh_ttl is not None:
        return refresh_ttl
    return bool((config or {}).get("refresh_on_read", True))


def refreshed(meta: Mapping[str, Any], now: float) -> dict[str, Any] | None:
    """The meta of an item read now with its expiry moved on, or None (no TTL)."""
    minutes = meta.get("ttl")
    if minutes is None or not isinstance(minutes, int | float):  # most items: no TTL
        return None
    at = _expires_at(now, minutes)
    if at is None:
        return {key: value for key, value in meta.items() if key != "expires_at"}
    return {**meta, "expires_at": at}


def refresh_flow(core: StoreCore, ns: str, read: dict[str, StoredEntry], now: float) -> Flow[None]:
    """Move on the expiry of the entries read with `refresh_ttl`: in one write where the
    backend has `write_many`."""
    fresh = {}
    for path, entry in read.items():
        meta = refreshed(entry.meta, now)
        if meta is not None:
            fresh[path] = StoredEntry(entry.content, meta)
    write_many = getattr(type(core.backend), "write_many", None)
    if len(fresh) > 1 and write_many is not None:
        yield core.ops.op(write_many, ns, fresh)
        return
    for path, entry in fresh.items():
        yield from core.put(ns, path, entry.content, entry.meta, vectors=False)  # same text


def sweep_flow(core: StoreCore, ns: str, index: GraphIndex | None) -> Flow[int]:
    """Delete the expired items of the store namespace `ns` (and their vectors); how many."""
    now = core.clock()
    listed = yield from core.list(ns, "")
    swept = 0
    for entry in listed:
        if items.address(entry.path) is not None and expired(entry.meta, now):
            if index is not None:  # the listed meta names the item's vectors
                named = StoredEntry("", entry.meta)
                yield from index.forget(core, ns, entry.path, named)
            swept += bool((yield from core.delete(ns, entry.path)))
    return swept


class Sweeper:
    """The thread calling `sweep` every interval until stopped (`SqliteStore`'s sweeper)."""

    def __init__(self, sweep: Callable[[], int]) -> None:
        self._sweep = sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(
        self, config: TTLConfig | None, minutes: float | None
    ) -> concurrent.futures.Future[None]:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not config:
            future.set_result(None)
            return future
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        if self._thread is not None and self._thread.is_alive():
            return future
        self._stop.clear()
        interval = float(minutes or config.get("sweep_interval_minutes") or 5) * 60.0

        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    swept = self._sweep()
                    if swept:
                        log.info("swept %d expired LangGraph items", swept)
                except Exception:
                    log.exception("a LangGraph TTL sweep failed")
            if not future.done():
                future.set_result(None)

        self._thread = threading.Thread(target=loop, daemon=True, name="contextchef-ttl-sweeper")
        self._thread.start()
        return future

    def stop(self, timeout: float | None = None) -> bool:
        thread = self._thread
        if thread is None or not thread.is_alive():
            return True
        self._stop.set()
        thread.join(timeout)
        if thread.is_alive():
            return False
        self._thread = None
        return True
