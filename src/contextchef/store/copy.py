"""Copy every project and namespace of one store to another, over the backend protocol only.

A *location* (`Location`) is a place that holds the entries of any number of projects: a
SQLite file, a PostgreSQL schema, a directory (see `locations.py` for the built-in ones). It
names its projects and each project's namespaces and opens a backend scoped to one project;
`copy_store` does the rest with `list`, `read`, `write` and `touch`, so any two locations copy
into each other.

The copy streams: one namespace's paths are listed, then entries are read one at a time and
written one at a time, or in batches of `WRITE_BATCH` where the target has `write_many`
(PostgreSQL). Content is copied byte for byte; the meta too (free keys, `created_at`, `updated_at`,
and `accessed_at` where the target keeps it). An entry the target already holds with the same
content, free meta and times is left alone, so running the same copy again writes nothing.
Entries of the target that the source lacks are kept (a copy, not a mirror). A namespace the
source keeps versions of (`history`) is declared versioned in the target too, where the target
can keep versions (`keep_versions`); the current version of each entry is copied, not its
history.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from contextchef.store.backend import StorageBackend, StoredEntry, backend_supports

__all__ = ["CopyReport", "Location", "NamespaceCount", "copy_store", "same_entry"]

WRITE_BATCH = 500
"""Entries per `write_many` call when the target has one."""

TIME_TOLERANCE_S = 1e-3
"""Times closer than this are equal (a directory keeps them in milliseconds)."""

_DERIVED = ("created_at", "updated_at", "accessed_at", "bytes")

Progress = Callable[[int, int], None]
"""A progress callback: `(entries done, entries in all)`."""


class Location(Protocol):
    """A place holding the entries of one or more projects."""

    description: str
    """What to call it in messages (never a password)."""

    def projects(self) -> list[str]:
        """The identities of the projects with entries, sorted."""
        ...

    def namespaces(self, project: str) -> list[str]:
        """The namespaces holding entries of `project`, sorted."""
        ...

    def open(self, project: str) -> AbstractContextManager[StorageBackend]:
        """A backend scoped to `project` (created if new), closed when the block ends."""
        ...


@dataclass(frozen=True, slots=True)
class NamespaceCount:
    """What the copy did in one namespace of one project."""

    project: str
    namespace: str
    copied: int
    unchanged: int
    bytes: int


@dataclass(slots=True)
class CopyReport:
    """Totals of one `copy_store` run, and the counts per project and namespace."""

    source: str
    target: str
    namespaces: list[NamespaceCount] = field(default_factory=list)

    @property
    def projects(self) -> int:
        return len({count.project for count in self.namespaces})

    @property
    def copied(self) -> int:
        return sum(count.copied for count in self.namespaces)

    @property
    def unchanged(self) -> int:
        return sum(count.unchanged for count in self.namespaces)

    @property
    def bytes(self) -> int:
        return sum(count.bytes for count in self.namespaces)


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=TIME_TOLERANCE_S)
    return bool(a is None and b is None)


def same_entry(a: StoredEntry, b: StoredEntry) -> bool:
    """Whether `b` already holds `a`: the same content, free meta, `created_at` and
    `updated_at` (within `TIME_TOLERANCE_S`). The access time and byte count are not compared."""
    if a.content != b.content:
        return False
    free_a = {k: v for k, v in a.meta.items() if k not in _DERIVED}
    free_b = {k: v for k, v in b.meta.items() if k not in _DERIVED}
    if free_a != free_b:
        return False
    return all(_close(a.meta.get(key), b.meta.get(key)) for key in ("created_at", "updated_at"))


def _for_write(entry: StoredEntry) -> StoredEntry:
    """The entry as the target writes it: every meta key but the derived byte count."""
    return StoredEntry(entry.content, {k: v for k, v in entry.meta.items() if k != "bytes"})


class _Writer:
    """Writes entries into one namespace of the target: in batches through `write_many` when
    the backend has it (one transaction per batch; such a backend keeps every meta key it is
    given, `accessed_at` included), else one `write` each, followed by `touch` for the access
    time where the backend supports it."""

    def __init__(self, target: StorageBackend, ns: str) -> None:
        self._target, self._ns = target, ns
        self._many = getattr(target, "write_many", None)
        self._touch = backend_supports(target, "touch", ns)
        self._pending: dict[str, StoredEntry] = {}

    def write(self, path: str, entry: StoredEntry) -> None:
        if callable(self._many):
            self._pending[path] = entry
            if len(self._pending) >= WRITE_BATCH:
                self.flush()
            return
        self._target.write(self._ns, path, entry)
        accessed = entry.meta.get("accessed_at")
        if self._touch and isinstance(accessed, int | float) and not isinstance(accessed, bool):
            self._target.touch(self._ns, path, float(accessed))  # type: ignore[attr-defined]

    def flush(self) -> None:
        if self._pending and callable(self._many):
            self._many(self._ns, self._pending)
            self._pending = {}


def _copy_entries(
    source: StorageBackend, target: StorageBackend, ns: str, paths: Iterable[str]
) -> Iterator[tuple[bool, int]]:
    """Copy `paths` of `ns`, yielding `(written, bytes)` per entry still in the source (a
    written entry may wait in the batch until the namespace is done)."""
    writer = _Writer(target, ns)
    for path in paths:
        entry = source.read(ns, path)
        if entry is None:
            continue  # removed from the source since it was listed
        existing = target.read(ns, path)
        if existing is not None and same_entry(entry, existing):
            yield False, 0
            continue
        writer.write(path, _for_write(entry))
        yield True, len(entry.content.encode("utf-8"))
    writer.flush()


def _carry_versions(source: StorageBackend, target: StorageBackend, ns: str) -> None:
    """Declare `ns` versioned in `target` when `source` keeps its versions and `target` can."""
    if backend_supports(source, "history", ns) and backend_supports(target, "keep_versions", ns):
        target.keep_versions(ns)  # type: ignore[attr-defined]


def copy_store(
    source: Location,
    target: Location,
    *,
    projects: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> CopyReport:
    """Copy every project (or only `projects`) and namespace of `source` into `target`.

    Idempotent: entries the target already holds unchanged are counted, not written. Returns
    the counts per project and namespace; `progress(done, total)` is called per entry.
    """
    chosen = source.projects() if projects is None else sorted(set(projects))
    report = CopyReport(source.description, target.description)
    plan: list[tuple[str, str, list[str]]] = []
    for project in chosen:
        with source.open(project) as backend:
            for ns in source.namespaces(project):
                plan.append((project, ns, [listed.path for listed in backend.list(ns)]))
    total = sum(len(paths) for _, _, paths in plan)
    done = 0
    if progress is not None:
        progress(done, total)
    for project in chosen:
        with source.open(project) as reader, target.open(project) as writer:
            for _, ns, paths in (item for item in plan if item[0] == project):
                _carry_versions(reader, writer, ns)
                copied = unchanged = size = 0
                for written, nbytes in _copy_entries(reader, writer, ns, paths):
                    copied, unchanged = copied + written, unchanged + (not written)
                    size += nbytes
                    done += 1
                    if progress is not None:
                        progress(done, total)
                report.namespaces.append(NamespaceCount(project, ns, copied, unchanged, size))
    return report
