"""The synchronous hot lane of one namespace: `get` and `put` of a named entry as plain calls.

Over a synchronous backend, `drive_sync` runs the `get` and `put` flows of `StoreCore` as a few
plain backend calls; a `Lane` makes exactly those calls without the generator and the driver
(a test runs both, and `AsyncStore`, call for call), and without repeating what it already
knows about a path:

- each entry path it has validated is remembered with its `PutResult` (its one spelling and
  its URI), at most `KNOWN_PATHS` of them (forgotten all at once past that): a path seen
  before costs one dict lookup, never a second check; a path with several spellings (see
  `paths`, "One spelling per name") is never remembered and takes the flow's steps;
- a backend that keeps its entries in this process as immutable `StoredEntry`s offers
  `entry_table(ns)` (see `backend.StorageBackend`, "Hot-path hooks"): a hit is read there, a
  lookup in a live mapping, rather than through `read`;
- a backend that can take the meta the lane prepared as it is offers `write_fresh` (the same
  hooks); any other gets a `StoredEntry` through `write`;
- a hook counts only where the class that defines it also defines the method it stands for
  (`_hook`): a subclass that overrides `read` or `write`, or a wrapper forwarding attributes
  to another backend, is read and written through its own methods;
- a read's time (for eviction) goes straight into the core's `seen` table of the namespace
  when the backend cannot `touch` (the `pending` rules otherwise).

A `put` takes the lane only when the flow would do nothing more: no pending write to flush, no
versioned namespace to declare, no semantic index to embed into (`put` returns None then, and
the caller drives the flow).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NamedTuple, Protocol

from contextchef.store.backend import Capability, StoredEntry
from contextchef.store.indexing import IndexConfig
from contextchef.store.paths import URI_PREFIX, entry_spellings
from contextchef.store.pending import Pending
from contextchef.store.validation import check_content, prepare_meta

__all__ = ["KNOWN_PATHS", "Lane", "PutResult"]

KNOWN_PATHS = 8192
"""Validated paths a lane remembers (per namespace)."""


class PutResult(NamedTuple):
    """Where a `put` or `append` landed: the entry's path and its `context://` URI."""

    path: str
    uri: str


class StoreCore(Protocol):
    """What a lane uses of `contextchef.store.core.StoreCore` (which makes it; a protocol, so
    that this module does not import the one that imports it)."""

    backend: object
    clock: Callable[[], float]
    index: IndexConfig | None
    _pending: Pending
    _undeclared: set[str]

    def supports(self, capability: Capability, ns: str) -> bool: ...
    def _note_read(self, ns: str, path: str) -> None: ...


def _hook(backend: object, hook: str, stands_for: str) -> Callable[..., Any] | None:
    """`backend`'s hot-path `hook`, bound, where it stands for the backend's own `stands_for`
    method: both defined by one class of its type's MRO. A subclass that overrides `read` or
    `write` but inherits the hook, or a wrapper that forwards unknown attributes to another
    backend (`__getattr__`), would have the lane bypass the very method it changed: it gets
    None, and the lane calls `read` and `write`."""
    mro = type(backend).__mro__
    owner = next((kind for kind in mro if hook in vars(kind)), None)
    if owner is None or owner is not next((kind for kind in mro if stands_for in vars(kind)), None):
        return None
    found = getattr(backend, hook)
    return found if callable(found) else None


class Lane:
    """`get` and `put` of one namespace of `core`, as plain calls (see the module docstring)."""

    __slots__ = ("_core", "_known", "_lookup", "_ns", "_seen", "_write")

    def __init__(self, core: StoreCore, ns: str) -> None:
        self._core = core
        self._ns = ns
        self._known: dict[str, PutResult] = {}
        # Bound at the first call that reaches the backend (a refused path never does).
        self._lookup: Callable[[str], StoredEntry | None] = self._bind_lookup
        self._write: Callable[[str, str, str, dict[str, Any]], None] = self._bind_write
        self._seen: dict[str, float] | None = None

    def _bind_lookup(self, path: str) -> StoredEntry | None:
        core, ns = self._core, self._ns
        backend: Any = core.backend
        table = _hook(backend, "entry_table", "read")
        if table is not None:
            entries: Mapping[str, StoredEntry] = table(ns)
            self._lookup = entries.get
        else:
            self._lookup = partial(backend.read, ns)
        # Read times: straight into the namespace's `seen` table unless the backend persists
        # them (`touch`), when the core queues them for the next flush.
        self._seen = None if core.supports("touch", ns) else core._pending.seen_in(ns)
        return self._lookup(path)

    def _bind_write(self, ns: str, path: str, content: str, meta: dict[str, Any]) -> None:
        backend: Any = self._core.backend
        fresh = _hook(backend, "write_fresh", "write")
        if fresh is not None:  # takes the meta the lane prepared, rather than a copy of it
            self._write = fresh
        else:
            write = backend.write
            self._write = lambda ns, path, text, meta: write(ns, path, StoredEntry(text, meta))
        self._write(ns, path, content, meta)

    def _learn(self, path: str) -> PutResult | None:
        """Validate `path` (`InvalidPathError` as the flows raise it); its `PutResult` when it
        has one spelling (remembered), else None."""
        spellings = entry_spellings(path)
        if len(spellings) > 1:
            return None
        known = self._known
        if len(known) >= KNOWN_PATHS:
            known.clear()
        spelled = spellings[0]
        found = known[path] = PutResult(spelled, f"{URI_PREFIX}{self._ns}/{spelled}")
        return found

    def get(self, path: str) -> StoredEntry | None:
        """`StoreCore.get`: the entry at `path` or None; a hit's read time noted."""
        try:
            known = self._known.get(path)
        except TypeError:  # unhashable, so not a path: the check below says so
            known = None
        if known is None:
            known = self._learn(path)
            if known is None:
                return self._get_spelled(path)
        spelled = known.path
        entry = self._lookup(spelled)
        if entry is not None:
            seen = self._seen
            if seen is not None:
                seen[spelled] = self._core.clock()
            else:
                self._core._note_read(self._ns, spelled)
        return entry

    def _get_spelled(self, path: str) -> StoredEntry | None:
        """`get` of a path with several spellings: NFC first, then an older entry's."""
        for spelling in entry_spellings(path):
            entry = self._lookup(spelling)
            if entry is not None:
                self._core._note_read(self._ns, spelling)
                return entry
        return None

    def put(self, path: str, content: str, meta: Mapping[str, Any] | None) -> PutResult | None:
        """`StoreCore.put` of a named entry, or None (nothing done) when the flow has more to
        do: pending writes, an undeclared versioned namespace, a name with several spellings,
        an index to embed the entry into."""
        try:
            known = self._known.get(path)
        except TypeError:
            known = None
        if known is None:
            known = self._learn(path)
        core = self._core
        pending = core._pending  # `Pending.__bool__`, without the call
        if known is None or pending.unsaved or pending.deferred or core._undeclared:
            return None
        if core.index is not None:
            return None
        if type(content) is not str or not content.isascii():
            check_content(content, ns=self._ns, path=known.path)
        now = core.clock()
        prepared = {"created_at": now, "updated_at": now} if meta is None else None
        if prepared is None:
            prepared = prepare_meta(meta, now)
        self._write(self._ns, known.path, content, prepared)
        return known
