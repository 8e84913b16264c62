"""`Store` and `NamespaceView`: namespaces, `context://` URIs and eviction over one backend.

A `Store` wraps one synchronous `StorageBackend` and serves every namespace from it
(`memory/`, `notes/`, `vfs/`, `archive/`, or your own). `store.namespace("notes")` returns a
`NamespaceView` whose methods validate every path (see `contextchef.store.paths`) before the
backend sees it. The logic lives in `StoreCore` as flows; this module only runs them with plain
calls. `AsyncStore` (in `contextchef.store.aio`) runs the same flows for async code.

    store = Store(FileSystemBackend(".context"), eviction={"vfs": {"max_files": 500}})
    notes = store.namespace("notes")
    notes.put("plan.md", "# Plan\\n")          # PutResult(path='plan.md', uri='context://notes/plan.md')
    notes.put(long_tool_output)               # content-addressed: notes_<sha256[:16]>.txt
    store.cleanup("vfs")                      # CleanupReport(...)
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

from contextchef.errors import ConfigError
from contextchef.store.backend import (
    Capability,
    ListedEntry,
    SearchHit,
    StorageBackend,
    StoredEntry,
)
from contextchef.store.core import PutResult, StoreCore
from contextchef.store.eviction import CleanupReport, EvictionPolicy
from contextchef.store.flow import Flow, run_sync
from contextchef.store.paths import (
    ContextAddress,
    content_path,
    format_uri,
    parse_uri,
    validate_namespace,
)

__all__ = ["NamespaceView", "Store", "StoreBase", "ViewBase"]

T = TypeVar("T")


class StoreBase:
    """What `Store` and `AsyncStore` share: the core, URIs and capability queries."""

    _core: StoreCore

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

    def eviction_policy(self, ns: str) -> EvictionPolicy:
        """The caps `cleanup(ns)` applies when called without overrides."""
        return self._core.eviction.get(validate_namespace(ns), EvictionPolicy())


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
        """The path `put(content)` stores `content` under: `<ns>_<sha256[:16]>.txt`."""
        return content_path(self._ns, content)

    def supports(self, capability: Capability) -> bool:
        """Whether the backend offers `capability` here."""
        return self._core.supports(capability, self._ns)


class Store(StoreBase):
    """One synchronous backend, many namespaces, one addressing scheme.

    Args:
        backend: any `StorageBackend` (an async one needs `AsyncStore`).
        eviction: per-namespace caps for `cleanup()`, as `EvictionPolicy` or plain dicts.
        clock: the time source for timestamps and eviction (seconds since the epoch).
    """

    def __init__(
        self,
        backend: StorageBackend,
        *,
        eviction: Mapping[str, EvictionPolicy | Mapping[str, Any]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._core = StoreCore(backend, eviction=eviction, clock=clock)
        if self._core.native_async:
            raise ConfigError(
                f"{type(backend).__name__} is asynchronous; wrap it in AsyncStore, not Store"
            )
        self._views: dict[str, NamespaceView] = {}

    @classmethod
    def of(cls, source: StorageBackend | StoreBase, **options: Any) -> Store:
        """`source` itself when it is a Store; a Store sharing its state for an AsyncStore;
        otherwise a new Store over the backend `source` (with `options`)."""
        if isinstance(source, Store):
            return source
        if isinstance(source, StoreBase):
            if source._core.native_async:
                raise ConfigError("this AsyncStore's backend is asynchronous; it has no Store")
            store = cls.__new__(cls)
            store._core = source._core
            store._views = {}
            return store
        return cls(source, **options)

    def __repr__(self) -> str:
        return f"Store({self._core.backend!r})"

    def namespace(self, ns: str) -> NamespaceView:
        """The view of namespace `ns` (validated: one plain segment)."""
        view = self._views.get(ns)
        if view is None:
            view = self._views[ns] = NamespaceView(self._core, ns)
        return view

    def cleanup(
        self,
        ns: str,
        *,
        max_files: float | None = None,
        max_bytes: float | None = None,
        max_age: float | None = None,
    ) -> CleanupReport:
        """Run one eviction sweep of `ns`; arguments override the namespace policy per field."""
        flow = self._core.cleanup(ns, max_files=max_files, max_bytes=max_bytes, max_age=max_age)
        return run_sync(self._core.backend, flow)


class NamespaceView(ViewBase):
    """One namespace of a `Store`. Every path is checked before the backend sees it."""

    def _run(self, flow: Flow[T]) -> T:
        return run_sync(self._core.backend, flow)

    def get(self, path: str) -> StoredEntry | None:
        """The entry at `path`, or None; a hit refreshes its last-read time."""
        return run_sync(self._core.backend, self._core.get(self._ns, path))

    @overload
    def put(self, content: str, /, *, meta: Mapping[str, Any] | None = None) -> PutResult: ...

    @overload
    def put(
        self, path: str, content: str, /, meta: Mapping[str, Any] | None = None
    ) -> PutResult: ...

    def put(
        self, first: str, content: str | None = None, /, meta: Mapping[str, Any] | None = None
    ) -> PutResult:
        """`put(path, content, meta=None)` writes `path`; `put(content)` derives the path.

        The derived path is `<ns>_<sha256[:16]>.txt`: putting the same content again is a no-op
        (the first write and its meta win) and returns the same URI, in any process.
        """
        if content is None:
            return self._run(self._core.put(self._ns, None, first, meta))
        return self._run(self._core.put(self._ns, first, content, meta))

    def append(self, path: str, content: str, meta: Mapping[str, Any] | None = None) -> PutResult:
        """Add `content` to the end of `path`, creating it when missing."""
        return self._run(self._core.append(self._ns, path, content, meta))

    def delete(self, path: str) -> bool:
        """Remove `path`; False when there was nothing to remove."""
        return self._run(self._core.delete(self._ns, path))

    def list(self, prefix: str = "") -> list[ListedEntry]:
        """Entries under `prefix` (recursively), with meta but no content, sorted by path."""
        return self._run(self._core.list(self._ns, prefix))

    def entries(self, prefix: str = "") -> dict[str, StoredEntry]:
        """Entries under `prefix` with their content, ordered by path (the render order)."""
        return self._run(self._core.entries(self._ns, prefix))

    def search(
        self, query: str, *, prefix: str = "", limit: int | None = None
    ) -> builtins.list[SearchHit]:
        """Entries whose content holds `query` (case-insensitive, for the built-in backends)."""
        return self._run(self._core.search(self._ns, query, prefix, limit))

    def exists(self, path: str) -> bool:
        """Whether `path` holds an entry (reads it when the backend has no `exists`)."""
        return self._run(self._core.exists(self._ns, path))

    def get_physical_path(self, path: str) -> str | None:
        """Where the entry lives on disk, or None when the backend has no files."""
        return self._run(self._core.physical_path(self._ns, path))

    def snapshot(self) -> dict[str, StoredEntry]:
        """Every entry of the namespace, for `restore` (raises `StoreCapabilityError`)."""
        return self._run(self._core.snapshot(self._ns))

    def restore(self, data: Mapping[str, StoredEntry]) -> None:
        """Make the namespace hold exactly `data` (raises `StoreCapabilityError`)."""
        return self._run(self._core.restore(self._ns, data))

    def cleanup(
        self,
        *,
        max_files: float | None = None,
        max_bytes: float | None = None,
        max_age: float | None = None,
    ) -> CleanupReport:
        """`Store.cleanup` for this namespace."""
        flow = self._core.cleanup(
            self._ns, max_files=max_files, max_bytes=max_bytes, max_age=max_age
        )
        return self._run(flow)
