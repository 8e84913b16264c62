"""`Store` and `NamespaceView`: namespaces, `context://` URIs and eviction over one backend.

A `Store` wraps one synchronous `StorageBackend` and serves every namespace from it
(`memory/`, `notes/`, `vfs/`, `archive/`, or your own). `store.namespace("notes")` returns a
`NamespaceView` whose methods validate every path (see `contextchef.store.paths`) before the
backend sees it. The logic lives in `StoreCore` as flows; this module only runs them with plain
calls. `AsyncStore` (in `contextchef.store.aio`) runs the same flows for async code.

    store = Store(FileSystemBackend(".context"), eviction={"vfs": {"max_files": 500}})
    notes = store.namespace("notes")
    notes.put("plan.md", "# Plan\\n")          # PutResult(path='plan.md', uri='context://notes/plan.md')
    notes.put_content(long_tool_output)       # content-addressed: notes_<sha256[:16]>.txt
    store.cleanup("vfs")                      # CleanupReport(...)
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, Self, TypeVar, Unpack

from contextchef._effects import drive_sync
from contextchef.errors import ConfigError
from contextchef.store.backend import (
    AsyncStorageBackend,
    Capability,
    ListedEntry,
    SearchHit,
    StorageBackend,
    StoredEntry,
)
from contextchef.store.core import Change, PutResult, StoreCore
from contextchef.store.eviction import Caps, CleanupReport, EvictionPolicy
from contextchef.store.indexing import IndexConfig, SearchMode
from contextchef.store.offloads import Offloaded, offload_flow, resolve_flow
from contextchef.store.ops import Op
from contextchef.store.paths import (
    ContextAddress,
    content_path,
    format_uri,
    parse_uri,
    validate_namespace,
)

__all__ = ["NamespaceView", "Store", "StoreBase", "ViewBase", "core_of"]

T = TypeVar("T")
V = TypeVar("V", bound="ViewBase")


class StoreBase(Generic[V]):
    """What `Store` and `AsyncStore` share: construction, views, URIs, capability queries."""

    _core: StoreCore
    _views: dict[str, V]

    def __init__(
        self,
        backend: StorageBackend | AsyncStorageBackend,
        *,
        eviction: Mapping[str, EvictionPolicy | Mapping[str, Any]] | None = None,
        clock: Callable[[], float] = time.time,
        versioned: Iterable[str] | None = None,
        index: IndexConfig | Mapping[str, Any] | None = None,
    ) -> None:
        self._attach(
            StoreCore(backend, eviction=eviction, clock=clock, versioned=versioned, index=index)
        )

    def _attach(self, core: StoreCore) -> None:
        """Take `core` as this store's state (a new one, or one shared with a twin)."""
        self._core = core
        self._views = {}

    def _view(self, ns: str) -> V:
        raise NotImplementedError

    @classmethod
    def over(cls, core: StoreCore) -> Self:
        """A store sharing `core` (backend, eviction policies, read times) with its owner."""
        store = cls.__new__(cls)
        store._attach(core)
        return store

    @property
    def core(self) -> StoreCore:
        """The flows behind this store (what the chef and `Memory` drive)."""
        return self._core

    @classmethod
    def of(
        cls, source: StorageBackend | AsyncStorageBackend | StoreBase[Any], **options: Any
    ) -> Self:
        """`source` itself when it is already this kind of store; a store sharing the state of
        its sync or async twin; otherwise a new store over the backend `source` (`options` are
        the constructor's)."""
        if isinstance(source, StoreBase) and options:
            raise ConfigError("options apply only when wrapping a backend, not an existing store")
        if isinstance(source, cls):
            return source
        if isinstance(source, StoreBase):
            return cls.over(source._core)
        return cls(source, **options)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._core.backend!r})"

    def namespace(self, ns: str) -> V:
        """The view of namespace `ns` (validated: one plain segment)."""
        view = self._views.get(validate_namespace(ns))
        if view is None:
            view = self._views[ns] = self._view(ns)
        return view

    @staticmethod
    def uri(ns: str, path: str) -> str:
        """`context://<ns>/<path>`; raises `InvalidPathError` for a name the rules reject."""
        return format_uri(ns, path)

    @staticmethod
    def parse_uri(uri: str) -> ContextAddress | None:
        """`(ns, path)` for a well-formed `context://` URI, else None."""
        return parse_uri(uri)

    @property
    def backend(self) -> object:
        """The backend this store runs on."""
        return self._core.backend

    def supports(self, capability: Capability, ns: str) -> bool:
        """Whether the backend offers `capability` for namespace `ns`."""
        return self._core.supports(capability, validate_namespace(ns))

    def keep_versions(self, ns: str) -> None:
        """Declare `ns` versioned: from now on the backend keeps every version of its entries,
        read with `namespace(ns).history(path)`. `StoreCapabilityError` when the backend keeps
        no versions (see `supports("keep_versions", ns)`)."""
        self._core.keep_versions(ns)

    @property
    def index(self) -> IndexConfig | None:
        """The semantic index (`index=`; see `contextchef.store.indexing`), or None."""
        return self._core.index

    @property
    def versioned(self) -> frozenset[str]:
        """The namespaces declared versioned through this store (`versioned=`, `keep_versions`)."""
        return frozenset(self._core.versioned)

    def eviction_policy(self, ns: str) -> EvictionPolicy:
        """The caps `cleanup(ns)` applies when called without overrides."""
        return self._core.eviction.get(validate_namespace(ns), EvictionPolicy())

    def on_evicted(self, handler: Callable[[CleanupReport], Any]) -> Callable[[], bool]:
        """Call `handler(report)` after every `cleanup` sweep that evicted something (any
        namespace; `report.ns` says which); returns a function that unsubscribes it. A handler
        that raises is logged, never fails the sweep. Shared by every store over this one's
        state (`Store.over`, `AsyncStore.of`)."""
        if not callable(handler):
            raise ConfigError("an on_evicted handler must be callable")
        handlers = self._core.on_evicted
        if handler not in handlers:
            handlers.append(handler)

        def unsubscribe() -> bool:
            if handler in handlers:
                handlers.remove(handler)
                return True
            return False

        return unsubscribe


class ViewBase:
    """What both namespace views share: the namespace, URIs, content paths, capabilities."""

    def __init__(self, core: StoreCore, ns: str) -> None:
        self._core = core
        self._ns = validate_namespace(ns)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._ns!r}>"

    @property
    def ns(self) -> str:
        """The namespace this view serves."""
        return self._ns

    def uri(self, path: str) -> str:
        """The `context://` URI of `path` in this namespace."""
        return format_uri(self._ns, path)

    def content_path(self, content: str) -> str:
        """The path `put_content(content)` stores `content` under: `<ns>_<sha256[:16]>.txt`."""
        return content_path(self._ns, content)

    def supports(self, capability: Capability) -> bool:
        """Whether the backend offers `capability` here."""
        return self._core.supports(capability, self._ns)


class Store(StoreBase["NamespaceView"]):
    """One synchronous backend, many namespaces, one addressing scheme.

    Args:
        backend: any `StorageBackend` (an async one needs `AsyncStore`).
        eviction: per-namespace caps for `cleanup()`, as `EvictionPolicy` or plain dicts.
        clock: the time source for timestamps and eviction (seconds since the epoch).
        versioned: namespaces whose every version the backend keeps (`history`); raises
            `StoreCapabilityError` when the backend keeps none (`keep_versions` missing).
        index: a semantic index, `{"embed": fn, "dims": N, "fields": ["content"]}` or an
            `IndexConfig` (see `contextchef.store.indexing`); `StoreCapabilityError` when the
            backend keeps no vectors.
    """

    def _attach(self, core: StoreCore) -> None:
        if core.native_async:
            raise ConfigError(
                f"{type(core.backend).__name__} is asynchronous; use AsyncStore, not Store"
            )
        super()._attach(core)

    def _view(self, ns: str) -> NamespaceView:
        return NamespaceView(self._core, ns)

    def cleanup(self, ns: str, **caps: Unpack[Caps]) -> CleanupReport:
        """Run one eviction sweep of `ns`. `max_files`, `max_bytes` and `max_age` given here
        override the namespace's policy, field by field."""
        return drive_sync(self._core.cleanup(ns, **caps))

    def flush(self) -> None:
        """Write what reads left pending: read times for eviction and deferred writes such as
        memory's turn count (see `contextchef.store.pending`). Every write does it first; call
        it when no write may follow. A deferred write that fails raises (and stays pending)."""
        drive_sync(self._core.flush())

    def close(self) -> None:
        """`flush`, then close the backend when it has a `close()`."""
        try:
            self.flush()
        finally:
            close = getattr(self._core.backend, "close", None)
            if callable(close):
                close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def offload(
        self,
        content: str,
        *,
        name: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Offloaded:
        """Store `content` whole in the chef's offload namespace (`vfs/`), content-addressed,
        and return its URI and the marker to give the model in its place: the same preview a
        long tool result gets (head, tail, error lines, how to read the rest), whatever its
        length. `name` (kept in the entry's meta with `meta`) is yours; offloading the same
        content again stores nothing new and returns the same marker. Emits the chef's
        `offload:created`. Only a chef's store offloads (`ConfigError` otherwise)."""
        return drive_sync(offload_flow(self._core, content, name, meta))

    def resolve(self, uri: str) -> str | None:
        """The content a `context://` URI names (a marker's, an archive's), or None when
        nothing is stored there; `InvalidPathError` for a string that is not such a URI."""
        return drive_sync(resolve_flow(self._core, uri))


class NamespaceView(ViewBase):
    """One namespace of a `Store`. Every path is checked before the backend sees it."""

    def __init__(self, core: StoreCore, ns: str) -> None:
        super().__init__(core, ns)
        self._lane = core.lane(self._ns)  # `get` and `put` as plain calls (see `lanes`)

    def _run(self, flow: Op[T]) -> T:
        return drive_sync(flow)

    def get(self, path: str) -> StoredEntry | None:
        """The entry at `path`, or None; a hit refreshes its last-read time."""
        return self._lane.get(path)

    def put(self, path: str, content: str, meta: Mapping[str, Any] | None = None) -> PutResult:
        """Write `content` at `path` (replacing what is there); `meta` is free-form JSON."""
        done = self._lane.put(path, content, meta)
        if done is not None:
            return done
        return drive_sync(self._core.put(self._ns, path, content, meta))

    def put_content(self, content: str, meta: Mapping[str, Any] | None = None) -> PutResult:
        """Store `content` under a path derived from it, `<ns>_<sha256[:16]>.txt`.

        Putting the same content again is a no-op (the first write and its meta win) and
        returns the same URI, in any process.
        """
        return self._run(self._core.put(self._ns, None, content, meta))

    def append(self, path: str, content: str, meta: Mapping[str, Any] | None = None) -> PutResult:
        """Add `content` to the end of `path`, creating it when missing."""
        return self._run(self._core.append(self._ns, path, content, meta))

    def create(self, path: str, content: str, meta: Mapping[str, Any] | None = None) -> bool:
        """Write `path` only when it is absent; True when this call created it. Of racing
        creators exactly one wins where `supports("create")`."""
        return self._run(self._core.create(self._ns, path, content, meta))

    def update(self, path: str, change: Change) -> StoredEntry | None:
        """Apply `change(entry) -> (content, meta)` as a compare-and-swap, retried; the new
        entry, None when `path` is missing; `StoreConflictError` when it kept losing races.
        Exact where `supports("replace_if")`."""
        return self._run(self._core.update(self._ns, path, change))

    def delete(self, path: str) -> bool:
        """Remove `path`; False when there was nothing to remove."""
        return self._run(self._core.delete(self._ns, path))

    def list(self, prefix: str = "") -> list[ListedEntry]:
        """Entries under `prefix` (recursively), with meta but no content, sorted by path."""
        return self._run(self._core.list(self._ns, prefix))

    def entries(self, prefix: str = "") -> dict[str, StoredEntry]:
        """Entries under `prefix` with their content, ordered by path (the render order)."""
        return self._run(self._core.entries(self._ns, prefix))

    def last(self, count: int, prefix: str = "") -> dict[str, StoredEntry]:
        """The last `count` entries under `prefix` by path, with their content, ordered by path:
        one request where `supports("read_last")`, whatever the namespace holds."""
        return self._run(self._core.last(self._ns, prefix, count))

    def recent(self, limit: int, prefix: str = "", offset: int = 0) -> dict[str, StoredEntry]:
        """`limit` entries under `prefix` from `offset`, most recently updated first (then by
        path): one page read where `supports("read_recent")`."""
        return self._run(self._core.recent(self._ns, prefix, limit, offset))

    def directories(self, prefix: str = "") -> builtins.list[str]:
        """The directories under `prefix` (`""` or a path ending in `/`) that directly hold an
        entry, each ending in `/` (`""` for the root), sorted; no entry is listed where
        `supports("list_dirs")`."""
        return self._run(self._core.dirs(self._ns, prefix))

    def search(
        self,
        query: str,
        *,
        prefix: str = "",
        limit: int | None = None,
        mode: SearchMode | None = None,
        min_score: float | None = None,
    ) -> builtins.list[SearchHit]:
        """Entries whose content holds `query` (case-insensitive, for the built-in backends);
        with a semantic index, by meaning too (`mode`: `"lexical"`, `"semantic"`, or
        `"hybrid"`, the default where this namespace is indexed). `min_score`: the lowest
        score a match by meaning may have (default: the index's); text matches are not cut."""
        return self._run(self._core.search(self._ns, query, prefix, limit, mode, min_score))

    def reindex(self, prefix: str = "") -> int:
        """Embed every entry under `prefix` again (those written before the index was
        configured, or by a store without it); how many were embedded."""
        return self._run(self._core.reindex(self._ns, prefix))

    def exists(self, path: str) -> bool:
        """Whether `path` holds an entry (reads it when the backend has no `exists`)."""
        return self._run(self._core.exists(self._ns, path))

    def get_physical_path(self, path: str) -> str | None:
        """Where the entry lives on disk, or None when the backend has no files."""
        return self._run(self._core.physical_path(self._ns, path))

    def history(self, path: str) -> builtins.list[StoredEntry]:
        """Every stored version of `path`, oldest first, each with `recorded_at` and, where
        they apply, `superseded_at` and `deleted_at` in its meta; `StoreCapabilityError`
        unless this namespace is versioned (`Store(versioned=[...])`, `keep_versions`)."""
        return self._run(self._core.history(self._ns, path))

    def snapshot(self) -> dict[str, StoredEntry]:
        """Every entry of the namespace, for `restore` (raises `StoreCapabilityError`)."""
        return self._run(self._core.snapshot(self._ns))

    def restore(self, data: Mapping[str, StoredEntry]) -> None:
        """Make the namespace hold exactly `data` (raises `StoreCapabilityError`)."""
        return self._run(self._core.restore(self._ns, data))

    def cleanup(self, **caps: Unpack[Caps]) -> CleanupReport:
        """`Store.cleanup` for this namespace."""
        return drive_sync(self._core.cleanup(self._ns, **caps))


def core_of(source: StoreCore | StoreBase[Any] | StorageBackend | AsyncStorageBackend) -> StoreCore:
    """The store flows behind `source`: its own, a store's, or new ones over a bare backend."""
    if isinstance(source, StoreCore):
        return source
    if isinstance(source, StoreBase):
        return source.core
    return StoreCore(source)
