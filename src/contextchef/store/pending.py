"""What a store owes its backend: read times and deferred writes, held until the next write.

A read never writes. Recording the time of each read for eviction was a write per `get` (an
`UPDATE` on PostgreSQL, a write transaction on SQLite that waited as long as any writer held
the lock), and a compile with memory wrote the turn count. So a `StoreCore` keeps, per core:

- `seen`: the time this process last read each entry (eviction reads it at once, on every
  backend: see `eviction`); once a backend with `touch` holds a time, `seen` drops it;
- `unsaved`: of those, the ones a backend with `touch` has not persisted yet, at most
  `MAX_PENDING` entries (a read beyond that is still in `seen`, it is only not persisted);
- `deferred`: writes a feature asked to run "with the next write" (memory's turn count, the
  deletion of the entries a compile found expired), keyed so that a later one replaces an
  earlier one with the same key. Each is a flow, re-checking what it writes when it runs.

`flush_flow` writes all of it: at the start of the core's next write flow (put, append, create,
replace_if, delete, restore, cleanup), and from `Store.flush()` / `Store.close()`. Within one
process nothing is lost; a process that dies without a write or a `close` loses what was
pending: read times only make an entry look older than it is, and a turn not yet persisted is
counted again from the history by the next compile.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable

from contextchef.store.ops import BackendOps, Op

__all__ = ["MAX_PENDING", "Deferred", "Pending", "flush_flow"]

logger = logging.getLogger("contextchef.store.pending")

MAX_PENDING = 10_000
"""Read times a core holds for `touch` before a flush; later reads of new entries wait in
`seen` only (eviction still sees them)."""

Deferred = Callable[[], Op[None]]
"""A deferred write: called at the flush, its flow re-reads what it needs and writes."""


class Pending:
    """The read times and deferred writes of one `StoreCore` (see the module docstring)."""

    __slots__ = ("deferred", "seen", "unsaved")

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, float]] = {}
        self.unsaved: dict[tuple[str, str], float] = {}
        self.deferred: dict[Hashable, Deferred] = {}

    def __bool__(self) -> bool:
        return bool(self.unsaved) or bool(self.deferred)

    def note_read(self, ns: str, path: str, at: float, persist: bool) -> None:
        """Record that `ns/path` was read at `at`; `persist` when the backend can `touch`."""
        seen = self.seen.get(ns)
        if seen is None:
            seen = self.seen[ns] = {}
        seen[path] = at
        if persist:
            key = (ns, path)
            if key in self.unsaved or len(self.unsaved) < MAX_PENDING:
                self.unsaved[key] = at

    def seen_in(self, ns: str) -> dict[str, float]:
        """The read times of `ns`, by path: the one table for the life of the core (a
        `Lane` writes into it directly)."""
        seen = self.seen.get(ns)
        if seen is None:
            seen = self.seen[ns] = {}
        return seen

    def forget(self, ns: str, path: str) -> None:
        """`ns/path` is gone: no read time to keep for it."""
        self.seen.get(ns, {}).pop(path, None)
        self.unsaved.pop((ns, path), None)

    def forget_namespace(self, ns: str) -> None:
        """`ns` was replaced wholesale (restore): its read times are void."""
        self.seen.get(ns, {}).clear()  # in place: a lane holds it
        for key in [key for key in self.unsaved if key[0] == ns]:
            del self.unsaved[key]

    def defer(self, key: Hashable, write: Deferred) -> None:
        """Run `write` with the next flush (replacing a write deferred under `key`)."""
        self.deferred.pop(key, None)
        self.deferred[key] = write


def flush_flow(ops: BackendOps, pending: Pending, *, strict: bool) -> Op[None]:
    """Write what `pending` holds: the deferred writes, then the read times.

    A deferred write that raises is kept for the next flush (unless one replaced it) and, when
    `strict` (an explicit flush), its error is raised once the rest is written; a read time that
    cannot be written is dropped (it is an eviction hint, see `backend.touch`).
    """
    deferred, pending.deferred = pending.deferred, {}
    unsaved, pending.unsaved = pending.unsaved, {}
    failure: Exception | None = None
    for key, write in deferred.items():
        try:
            yield from write()
        except Exception as exc:
            logger.warning("a deferred store write (%r) failed, kept for the next: %s", key, exc)
            pending.deferred.setdefault(key, write)
            failure = failure or exc
    for (ns, path), at in unsaved.items():
        try:
            yield from ops.touch(ns, path, at)
        except Exception as exc:
            logger.debug("the read time of %s/%s was not recorded: %s", ns, path, exc)
            continue
        seen = pending.seen.get(ns)
        if seen is not None and seen.get(path) == at:
            del seen[path]  # the backend holds it now: `seen` keeps only what it does not
    if strict and failure is not None:
        raise failure
