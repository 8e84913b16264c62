"""The store's policy, once: every namespace operation as a flow of backend calls.

`StoreCore` holds what a `Store` knows beyond its backend (eviction policies, the clock, the
read times of backends that cannot persist them) and turns each public operation into a flow
(see `contextchef.store.ops`); all but the hottest (`get`, `put`) live in modules of their own:
`writes`, `edits`, `queries` (with `last`, `dirs`, `recent`), `spellings`, `versioning`,
`snapshots` and `eviction`. `Store` runs the flows synchronously, `AsyncStore` awaits them;
neither repeats any of the rules below.

Rules every operation shares: names are validated before the backend is called, and an entry's
path is spelled as stored (its NFC form, or the spelling an older entry has; see `paths`, "One
spelling per name"); content must be a `str` that encodes as UTF-8; meta must be JSON-shaped (it
has to survive every backend); `bytes` and `accessed_at` are derived by the backend and never
taken from the caller; missing `created_at`/`updated_at` are filled in with the clock.

Versioned namespaces are configuration of the store (`versioned=`, or `keep_versions(ns)`; see
`versioning`). Reads never write: read times and a read path's writes (memory's turn count)
wait in memory until the next write flow, `flush()` or `Store.close()` (see `pending`).

Atomic operations: `create` is create-if-absent; `update` and `rename` are one `transact` of
the backend, so concurrent edits queue (see `edits` and `writes`, which say what a backend
without `create`, `transact` or `replace_if` gets instead).
"""

from __future__ import annotations

import builtins
import logging
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, Unpack

from contextchef._effects import Flow
from contextchef.errors import ConfigError, StoreCapabilityError
from contextchef.store.backend import (
    CAPABILITIES,
    Capability,
    ListedEntry,
    SearchHit,
    StorageBackend,
    StoredEntry,
    Version,
    backend_supports,
)
from contextchef.store.dirs import dirs_flow
from contextchef.store.edits import CAS_ATTEMPTS, Change, rename_flow, update_flow
from contextchef.store.eviction import Caps, CleanupReport, EvictionPolicy, sweep_flow
from contextchef.store.indexing import IndexConfig, index_flow, require_vectors
from contextchef.store.lanes import Lane, PutResult
from contextchef.store.last import last_flow
from contextchef.store.ops import BackendOps, Op
from contextchef.store.paths import URI_PREFIX, content_path, entry_spellings, validate_namespace
from contextchef.store.pending import Deferred, Pending, flush_flow
from contextchef.store.queries import entries_flow, list_flow, search_flow
from contextchef.store.recent import recent_flow, recent_where_flow
from contextchef.store.snapshots import restore_flow, snapshot_flow
from contextchef.store.spellings import exists_flow, stored_flow
from contextchef.store.validation import DERIVED_META_KEYS, check_content, prepare_meta
from contextchef.store.versioning import declare_flow, history_flow, keep_versions
from contextchef.store.where import Condition
from contextchef.store.writes import (
    append_entry_flow,
    create_flow,
    delete_flow,
    read_versioned_flow,
    replace_if_flow,
)

__all__ = [
    "CAS_ATTEMPTS",
    "DERIVED_META_KEYS",
    "Change",
    "PutResult",
    "StoreCore",
    "check_content",
    "prepare_meta",
]

logger = logging.getLogger("contextchef.store.core")


class StoreCore:
    """Backend, eviction policies, clock and the in-process read times, plus every self.ops."""

    def __init__(
        self,
        backend: object,
        *,
        eviction: Mapping[str, EvictionPolicy | Mapping[str, Any]] | None = None,
        clock: Callable[[], float] = time.time,
        versioned: Iterable[str] | None = None,
        index: IndexConfig | Mapping[str, Any] | None = None,
    ) -> None:
        for method in ("read", "write", "delete", "list"):
            if not callable(getattr(backend, method, None)):
                raise ConfigError(
                    f"{type(backend).__name__} is not a storage backend: it has no {method}()"
                )
        if not callable(clock):
            raise ConfigError(f"clock must be a callable returning seconds, got {clock!r}")
        if eviction is not None and not isinstance(eviction, Mapping):
            raise ConfigError(f"eviction must map namespaces to policies, got {eviction!r}")
        self.backend = backend
        self.ops = BackendOps(backend)
        self.native_async = self.ops.native
        self.clock = clock
        self.eviction: dict[str, EvictionPolicy] = {
            validate_namespace(ns): EvictionPolicy.coerce(policy)
            for ns, policy in (eviction or {}).items()
        }
        self._capabilities: dict[tuple[str, str], bool] = {}
        # Read times and deferred writes, written with the next write (see `pending`).
        self._pending = Pending()
        self._lanes: dict[str, Lane] = {}  # see `lane`
        self.versioned: set[str] = set()  # the namespaces declared versioned through this store
        self.on_evicted: list[Callable[[CleanupReport], Any]] = []  # called after a sweep
        self.offloader: Any = None  # the `offloads.Offloader` of the chef that opened the store
        self._undeclared: set[str] = set()  # declared here, not yet handed to the backend
        if isinstance(versioned, str):
            raise ConfigError("versioned must be a list of namespaces, not a single string")
        for ns in versioned or ():
            self.keep_versions(ns)
        self.index = None if index is None else IndexConfig.coerce(index)  # see `indexing`
        if self.index is not None:
            require_vectors(self.index, backend)

    # -- capabilities ---------------------------------------------------------------------

    def supports(self, capability: Capability, ns: str) -> bool:
        """Whether the backend offers `capability` for `ns` (answers are cached)."""
        key = (capability, ns)
        known = self._capabilities.get(key)
        if known is None:
            if capability not in CAPABILITIES:
                raise ConfigError(
                    f"unknown capability {capability!r}; known: {', '.join(CAPABILITIES)}"
                )
            known = backend_supports(self.backend, capability, ns)
            if known or capability != "history":  # a namespace may be declared versioned later
                self._capabilities[key] = known
        return known

    def require(self, capability: Capability, ns: str) -> None:
        if not self.supports(capability, ns):
            raise StoreCapabilityError(ns, [capability])

    # -- versioned namespaces ---------------------------------------------------------------

    def keep_versions(self, ns: str, *, required: bool = True) -> bool:
        """Declare `ns` versioned (see `versioning.keep_versions`); True when it keeps versions
        from now on. `StoreCapabilityError` when the backend cannot keep them, unless not
        `required` (a feature versioning its namespace where it can): then False."""
        return keep_versions(
            validate_namespace(ns),
            self.supports,
            self.backend,
            self.versioned,
            self._undeclared,
            self._capabilities,
            required=required,
        )

    # -- flows ----------------------------------------------------------------------------

    def _note_read(self, ns: str, path: str) -> None:
        """Record a read in memory: never a write (see `pending`)."""
        self._pending.note_read(ns, path, self.clock(), self.supports("touch", ns))

    def defer(self, key: Hashable, write: Deferred) -> None:
        """Run the flow `write()` at the start of the next write flow, `flush` or `close`
        (replacing what was deferred under `key`): how a read path records what it must
        write without writing (see `pending`)."""
        self._pending.defer(key, write)

    @property
    def has_pending(self) -> bool:
        """Whether read times or deferred writes wait for a flush."""
        return bool(self._pending)

    def flush(self) -> Op[None]:
        """Write the pending read times and deferred writes now; a deferred write that fails
        is kept and its error raised."""
        yield from self._flush(strict=True)

    def _flush(self, *, strict: bool = False) -> Op[None]:
        """The flush that opens every write flow: failures are logged, never raised (unless
        `strict`)."""
        if self._undeclared:  # a read time or a deferred write may be in a versioned namespace
            yield from declare_flow(self.ops, self._undeclared)
        yield from flush_flow(self.ops, self._pending, strict=strict)

    def _open_write(self) -> Op[None]:
        """What a write flow does before it writes: the pending flush, then the versioned
        namespaces declared since."""
        if self._pending:
            yield from self._flush()
        if self._undeclared:
            yield from declare_flow(self.ops, self._undeclared)

    def get(self, ns: str, path: str) -> Op[StoredEntry | None]:
        # The hottest flow: its requests are yielded inline rather than through `self.ops.read`.
        entry: StoredEntry | None = None
        for spelling in entry_spellings(path):  # NFC first, then an older entry's spelling
            entry = yield self.ops.call(StorageBackend.read, (ns, spelling))
            if entry is not None:
                self._note_read(ns, spelling)
                return entry
        return None

    # The two hottest calls of the synchronous `Store`, short-circuited: over a synchronous
    # backend, `drive_sync` makes exactly the plain calls a `Lane` makes (see `lanes`).

    def lane(self, ns: str) -> Lane:
        """The hot lane of `ns` (`get` and `put` as plain calls; a synchronous backend only)."""
        lane = self._lanes.get(ns)
        if lane is None:
            lane = self._lanes[ns] = Lane(self, ns)
        return lane

    def get_now(self, ns: str, path: str) -> StoredEntry | None:
        """`get`, as plain calls on a synchronous backend."""
        return self.lane(ns).get(path)

    def put_now(
        self, ns: str, path: str, content: str, meta: Mapping[str, Any] | None
    ) -> PutResult | None:
        """`put` of a named entry as plain calls on a synchronous backend, or None (nothing
        done) when the flow has more to do (see `Lane.put`)."""
        return self.lane(ns).put(path, content, meta)

    def put(
        self,
        ns: str,
        path: str | None,
        content: str,
        meta: Mapping[str, Any] | None,
        *,
        vectors: bool = True,
    ) -> Op[PutResult]:
        """`vectors=False`: the caller keeps the entry's vectors (see `indexing`)."""
        if path is not None:
            spellings = entry_spellings(path)
            if len(spellings) == 1:
                path = spellings[0]
            else:
                path = yield from stored_flow(self.ops, ns, spellings, self.supports)
        if self._pending:  # `_open_write`, inline: this is the hottest write flow
            yield from self._flush()
        if self._undeclared:
            yield from declare_flow(self.ops, self._undeclared)
        check_content(content, ns=ns, path=path)
        prepared = prepare_meta(meta, self.clock())
        if path is None:
            path = content_path(ns, content)
            if (yield from exists_flow(self.ops, ns, path, self.supports)):
                self._note_read(ns, path)
                return PutResult(path, f"{URI_PREFIX}{ns}/{path}")
        # The hottest write: its request is yielded inline rather than through `self.ops.write`.
        entry = StoredEntry(content, prepared)
        yield self.ops.call(StorageBackend.write, (ns, path, entry))
        if self.index is not None and vectors:
            yield from self._index(ns, {path: entry})
        return PutResult(path, f"{URI_PREFIX}{ns}/{path}")

    def append(
        self, ns: str, path: str, content: str, meta: Mapping[str, Any] | None
    ) -> Op[PutResult]:
        path = yield from append_entry_flow(self, ns, path, content, meta)
        return PutResult(path, f"{URI_PREFIX}{ns}/{path}")

    def create(self, ns: str, path: str, content: str, meta: Mapping[str, Any] | None) -> Op[bool]:
        """Write `path` only when nothing is there; True when this call created it."""
        return (yield from create_flow(self, ns, path, content, meta))

    def read_versioned(self, ns: str, path: str) -> Op[tuple[StoredEntry, Version | None] | None]:
        """The entry and its version (None when the backend has no compare-and-swap), or None;
        a hit refreshes its last-read time like `get`."""
        return (yield from read_versioned_flow(self, ns, path))

    def replace_if(
        self,
        ns: str,
        path: str,
        content: str,
        meta: Mapping[str, Any] | None,
        expected: Version | None,
    ) -> Op[bool]:
        """Write `path` only if it is still at version `expected`; True when written. With
        `expected` None (a backend without `replace_if`) it is a plain write."""
        return (yield from replace_if_flow(self, ns, path, content, meta, expected))

    def update(self, ns: str, path: str, change: Change) -> Op[StoredEntry | None]:
        """Apply `change` to the current entry atomically; the new entry, or None when there is
        none (see `edits`: serialised where the backend can `transact`, else a compare-and-swap
        retried up to `CAS_ATTEMPTS` times before `StoreConflictError`)."""
        return (yield from update_flow(self, ns, path, change))

    def rename(self, ns: str, path: str, new_path: str, change: Change) -> Op[bool | None]:
        """Move `path` to `new_path` (its entry passed through `change`) atomically: True when
        moved, False when `new_path` is taken, None when `path` holds nothing (see `edits`)."""
        return (yield from rename_flow(self, ns, path, new_path, change))

    def delete(self, ns: str, path: str) -> Op[bool]:
        return (yield from delete_flow(self, ns, path))

    def list(self, ns: str, prefix: str) -> Op[list[ListedEntry]]:
        return (yield from list_flow(self.ops, ns, prefix))

    def entries(self, ns: str, prefix: str) -> Op[dict[str, StoredEntry]]:
        return (yield from entries_flow(self.ops, ns, prefix, self.supports))

    def last(self, ns: str, prefix: str, count: int) -> Op[dict[str, StoredEntry]]:
        """The last `count` entries under `prefix`, ordered by path (see `last`)."""
        native = self.supports("read_last", ns)
        return (yield from last_flow(self.ops, ns, prefix, count, native=native))

    def dirs(self, ns: str, prefix: str) -> Op[builtins.list[str]]:
        """The directories under `prefix` directly holding an entry, sorted (see `dirs`)."""
        native = self.supports("list_dirs", ns)
        return (yield from dirs_flow(self.ops, ns, prefix, native=native))

    def recent(self, ns: str, prefix: str, limit: int, offset: int) -> Op[dict[str, StoredEntry]]:
        """A page of the entries under `prefix`, most recently updated first (see `recent`)."""
        native = self.supports("read_recent", ns)
        flow = recent_flow(self.ops, ns, prefix, limit, offset, native=native, entries=self.entries)
        return (yield from flow)

    def recent_where(
        self, ns: str, prefix: str, where: Condition, limit: int, offset: int
    ) -> Op[dict[str, StoredEntry]]:
        """`recent` of only the entries matching `where`, filtered and paged by the backend:
        only where it `supports("read_recent_where", ns)` (see `where`)."""
        return (yield from recent_where_flow(self.ops, ns, prefix, where, limit, offset))

    def search(
        self,
        ns: str,
        query: str,
        prefix: str,
        limit: int | None,
        mode: str | None = None,
        min_score: float | None = None,
    ) -> Op[builtins.list[SearchHit]]:
        """Text search, or by meaning (`mode`, hybrid by default where `ns` is indexed;
        `min_score` cuts the matches by meaning; see `indexing`)."""
        flow = search_flow(
            self.ops,
            self.index,
            ns,
            query,
            prefix,
            limit,
            mode,
            self.supports,
            min_score,
            self.defer,
        )
        return (yield from flow)

    def _index(self, ns: str, entries: Mapping[str, StoredEntry | None]) -> Op[None]:
        """Bring the vectors of `entries` up to date after a write (see `indexing`)."""
        if self.index is not None and self.index.covers(ns):
            yield from index_flow(self.ops, self.index, ns, entries)

    def reindex(self, ns: str, prefix: str) -> Op[int]:
        """Embed every entry of `ns` under `prefix` again; how many were embedded."""
        if self.index is None or not self.index.covers(validate_namespace(ns)):
            raise ConfigError(f"namespace {ns!r} has no semantic index to rebuild")
        found = yield from self.entries(ns, prefix)
        yield from self._index(ns, dict(found))
        return len(found)

    def _spelled(self, ns: str, path: str) -> Op[str]:
        """`path` validated and spelled as stored: its NFC form, unless only another spelling
        of it is stored (an entry from before paths were normalised; see `paths`)."""
        return (yield from stored_flow(self.ops, ns, entry_spellings(path), self.supports))

    def exists(self, ns: str, path: str) -> Op[bool]:
        path = yield from self._spelled(ns, path)
        return (yield from exists_flow(self.ops, ns, path, self.supports))

    def physical_path(self, ns: str, path: str) -> Op[str | None]:
        path = yield from self._spelled(ns, path)
        if not self.supports("get_physical_path", ns):
            return None
        return (yield from self.ops.get_physical_path(ns, path))

    def history(self, ns: str, path: str) -> Op[builtins.list[StoredEntry]]:
        """Every version of `ns/path`, oldest first; `StoreCapabilityError` when `ns` keeps
        no versions (see `keep_versions`)."""
        path = yield from self._spelled(ns, path)
        return (yield from history_flow(self.ops, ns, path, self._undeclared, self.supports))

    def snapshot(self, ns: str) -> Op[dict[str, StoredEntry]]:
        return (yield from snapshot_flow(self, ns))

    def restore(self, ns: str, data: Mapping[str, StoredEntry]) -> Op[None]:
        return (yield from restore_flow(self, ns, data))

    def cleanup(self, ns: str, **caps: Unpack[Caps]) -> Flow[CleanupReport]:
        return (yield from sweep_flow(self, ns, **caps))
