"""`InMemoryBackend`: a dict per namespace, for tests and short-lived agents.

Everything lives in this process and is gone when it ends. It cannot persist access times, so
it does not offer `touch`: the `Store` remembers read times itself, for the life of the process,
which is exactly as long as the entries live.
Entries are copied on the way in (meta deeply, then frozen behind a read-only mapping), so a
caller mutating what it wrote, or what it read, never changes the store. Reads take no lock;
writes, appends and restores take one, so the backend is safe to share between threads (and
therefore under `AsyncStore`, which runs it in worker threads). `create`, `read_versioned`,
`replace_if` and `transact` run under the same lock; a version is a backend-wide counter value
taken by each write, so a deleted and re-created entry never repeats one.

Versioned namespaces (`keep_versions`, declared by the store) keep a list of versions per entry:
every write records one (the previous one gets `superseded_at`), a delete marks the current one
`deleted_at`, and `history` returns them oldest first, like SQLite's (see `sqlite/backend.py`).

Like the filesystem, it refuses to use one path both as an entry and as a directory
(`a` and `a/b`): a test double that accepted what the disk backend refuses would hide the bug.
"""

from __future__ import annotations

import builtins
import copy
import itertools
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from contextchef.errors import EntryExistsError, StoreCapabilityError
from contextchef.store.backend import ListedEntry, SearchHit, StoredEntry, Transaction, Version
from contextchef.store.entries import appended, utf8_length
from contextchef.store.recent import recent_page
from contextchef.store.search import scan
from contextchef.store.vectors import VectorSet

__all__ = ["InMemoryBackend"]


_IMMUTABLE = frozenset({str, int, float, bool, type(None)})
"""Meta values stored as they are: nothing can change them in place."""


def _parents(path: str) -> list[str]:
    """`a/b/c` → `[a, a/b]`."""
    parents = []
    index = path.find("/")
    while index != -1:
        parents.append(path[:index])
        index = path.find("/", index + 1)
    return parents


@dataclass(slots=True)
class _Version:
    """One recorded version of an entry of a versioned namespace."""

    entry: StoredEntry
    recorded_at: float
    superseded_at: float | None = None
    deleted_at: float | None = None

    @property
    def live(self) -> bool:
        return self.superseded_at is None and self.deleted_at is None

    def as_entry(self) -> StoredEntry:
        meta = copy.deepcopy(dict(self.entry.meta))
        meta["recorded_at"] = self.recorded_at
        if self.superseded_at is not None:
            meta["superseded_at"] = self.superseded_at
        if self.deleted_at is not None:
            meta["deleted_at"] = self.deleted_at
        return StoredEntry(self.entry.content, meta)


class InMemoryBackend:
    """A process-lifetime `StorageBackend`: every optional capability but `touch` and files."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, StoredEntry]] = {}
        self._dirs: dict[str, dict[str, int]] = {}
        # The paths directly in each directory ("" the root): listings by prefix and
        # `list_dirs` read the directories under the prefix, never the whole namespace.
        self._holding: dict[str, dict[str, set[str]]] = {}
        self._lock = threading.RLock()
        self._versions: dict[tuple[str, str], int] = {}
        self._clock = itertools.count(1)
        self._kept: set[str] = set()
        self._histories: dict[tuple[str, str], list[_Version]] = {}
        self._vectors: dict[str, VectorSet] = {}

    # -- required -------------------------------------------------------------------------

    def read(self, ns: str, path: str) -> StoredEntry | None:
        bucket = self._data.get(ns)
        return bucket.get(path) if bucket is not None else None

    def entry_table(self, ns: str) -> Mapping[str, StoredEntry]:
        """The live entries of `ns` by path, read-only (a hot-path hook, see
        `StorageBackend`): what `read` answers from, one table for the backend's life."""
        with self._lock:
            bucket = self._data.get(ns)
            if bucket is None:
                bucket = self._data[ns] = {}
        return MappingProxyType(bucket)

    def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        meta: dict[str, Any] = dict(entry.meta)  # the caller's: copied, then handed over
        meta.pop("accessed_at", None)
        if "created_at" not in meta or "updated_at" not in meta:
            now = time.time()
            meta.setdefault("created_at", now)
            meta.setdefault("updated_at", now)
        self.write_fresh(ns, path, entry.content, meta)

    def write_fresh(self, ns: str, path: str, content: str, meta: dict[str, Any]) -> None:
        """`write(ns, path, StoredEntry(content, meta))` of a `meta` the caller made for this
        call and hands over (a hot-path hook, see `StorageBackend`): kept, not copied."""
        for key, value in meta.items():  # replacing values in place: the keys stay as they are
            if type(value) not in _IMMUTABLE:
                meta[key] = copy.deepcopy(value)  # the caller's containers are still copied
        meta["bytes"] = len(content) if content.isascii() else utf8_length(content)
        frozen = StoredEntry(content, MappingProxyType(meta))
        with self._lock:
            bucket = self._data.get(ns)
            if bucket is None:
                bucket = self._data[ns] = {}
            if path not in bucket:
                self._claim(ns, bucket, path)
            bucket[path] = frozen
            self._versions[ns, path] = next(self._clock)
            if ns in self._kept:
                self._record(ns, path, frozen)

    def delete(self, ns: str, path: str) -> bool:
        with self._lock:
            bucket = self._data.get(ns)
            if bucket is None or bucket.pop(path, None) is None:
                return False
            self._versions.pop((ns, path), None)
            if ns in self._kept:
                self._mark_deleted(ns, path)
            holding = self._holding[ns]
            directory = path[: path.rfind("/") + 1]
            members = holding[directory]
            members.discard(path)
            if not members:
                del holding[directory]
            dirs = self._dirs.setdefault(ns, {})
            for parent in _parents(path):
                left = dirs[parent] - 1
                if left:
                    dirs[parent] = left
                else:
                    del dirs[parent]
            return True

    def list(self, ns: str, prefix: str = "") -> list[ListedEntry]:
        return [ListedEntry(path, entry.meta) for path, entry in self._items(ns, prefix)]

    # -- optional capabilities ------------------------------------------------------------

    def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]:
        return dict(self._items(ns, prefix))

    def read_last(self, ns: str, prefix: str, count: int) -> dict[str, StoredEntry]:
        return dict(self._items(ns, prefix)[-count:]) if count > 0 else {}

    def read_recent(self, ns: str, prefix: str, limit: int, offset: int) -> dict[str, StoredEntry]:
        return recent_page(self._items(ns, prefix, ordered=False), limit, offset)

    def list_dirs(self, ns: str, prefix: str) -> builtins.list[str]:
        with self._lock:
            return sorted(d for d in self._holding.get(ns, ()) if d.startswith(prefix))

    def exists(self, ns: str, path: str) -> bool:
        return path in self._data.get(ns, {})

    def append(self, ns: str, path: str, content: str) -> None:
        with self._lock:
            self.write(ns, path, appended(self.read(ns, path), content))

    def search(
        self, ns: str, query: str, *, prefix: str = "", limit: int | None = None
    ) -> builtins.list[SearchHit]:
        return scan(self._items(ns, prefix), query, limit)

    def create(self, ns: str, path: str, entry: StoredEntry) -> bool:
        with self._lock:
            if self.exists(ns, path):
                return False
            self.write(ns, path, entry)
            return True

    def read_versioned(self, ns: str, path: str) -> tuple[StoredEntry, Version] | None:
        with self._lock:
            entry = self.read(ns, path)
            return None if entry is None else (entry, str(self._versions[ns, path]))

    def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> bool:
        with self._lock:
            if str(self._versions.get((ns, path))) != expected:
                return False
            self.write(ns, path, entry)
            return True

    def transact(
        self, ns: str, paths: Sequence[str], change: Transaction
    ) -> Mapping[str, StoredEntry | None]:
        """Read `paths`, apply `change`, write its answer: all under the backend's lock."""
        with self._lock:
            written = change({path: self.read(ns, path) for path in paths})
            for path, entry in written.items():  # writes first, then deletes
                if entry is not None:
                    self.write(ns, path, entry)
            for path, entry in written.items():
                if entry is None:
                    self.delete(ns, path)
            return written

    def snapshot(self, ns: str) -> dict[str, StoredEntry]:
        with self._lock:
            return {
                path: StoredEntry(entry.content, copy.deepcopy(dict(entry.meta)))
                for path, entry in self._items(ns, "")
            }

    def restore(self, ns: str, snapshot: Mapping[str, StoredEntry]) -> None:
        with self._lock:
            if ns in self._kept:
                for path in self._data.get(ns, {}).keys() - snapshot.keys():
                    self._mark_deleted(ns, path)
            self._data.get(ns, {}).clear()  # in place: `entry_table` hands it out
            self._dirs.pop(ns, None)
            self._holding.pop(ns, None)
            for key in [key for key in self._versions if key[0] == ns]:
                del self._versions[key]
            for path, entry in snapshot.items():
                self.write(ns, path, entry)

    def supports(self, capability: str, ns: str) -> bool:
        """Every capability it has a method for; `history` for the versioned namespaces;
        `vectors` (scored exactly, see `contextchef.store.vectors`)."""
        if capability == "history":
            return ns in self._kept
        if capability == "vectors":
            return True
        return callable(getattr(self, capability, None))

    # -- vectors (a semantic index's, written by the store) -------------------------------

    def put_vectors(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> None:
        with self._lock:
            self._vectors.setdefault(ns, VectorSet()).put(vectors)

    def delete_vectors(self, ns: str, paths: Sequence[str] | None = None) -> None:
        with self._lock:
            found = self._vectors.get(ns)
            if found is not None:
                found.delete(paths)

    def nearest(
        self,
        ns: str,
        vector: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> builtins.list[tuple[str, float]]:
        with self._lock:
            found = self._vectors.get(ns)
            if found is None:
                return []
            return found.nearest(vector, metric=metric, prefix=prefix, limit=limit)

    def keep_versions(self, ns: str) -> None:
        """Keep every version of `ns` from now on; its current entries are the first ones."""
        with self._lock:
            if ns in self._kept:
                return
            self._kept.add(ns)
            for path, entry in self._items(ns, ""):
                self._record(ns, path, entry)

    def history(self, ns: str, path: str) -> builtins.list[StoredEntry]:
        """Every version of `ns/path`, oldest first (see `StorageBackend`)."""
        with self._lock:
            if ns not in self._kept:
                raise StoreCapabilityError(ns, ["history"])
            return [version.as_entry() for version in self._histories.get((ns, path), ())]

    # -- internals ------------------------------------------------------------------------

    def _record(self, ns: str, path: str, entry: StoredEntry) -> None:
        """Make `entry` the current version of `ns/path`, superseding the live one."""
        now = time.time()
        versions = self._histories.setdefault((ns, path), [])
        if versions and versions[-1].live:
            versions[-1].superseded_at = now
        versions.append(_Version(entry, now))

    def _mark_deleted(self, ns: str, path: str) -> None:
        versions = self._histories.get((ns, path))
        if versions and versions[-1].live:
            versions[-1].deleted_at = time.time()

    def _items(
        self, ns: str, prefix: str, *, ordered: bool = True
    ) -> builtins.list[tuple[str, StoredEntry]]:
        """The entries of `ns` under `prefix`, sorted by path unless not `ordered`."""
        bucket = self._data.get(ns, {})
        if not prefix:
            items = list(bucket.items())
        else:  # the directories under `prefix`, and the one `prefix` ends inside
            with self._lock:
                holding = self._holding.get(ns, {})
                paths = [p for d, ps in holding.items() if d.startswith(prefix) for p in ps]
                inside = prefix[: prefix.rfind("/") + 1]
                if inside != prefix:
                    paths += [p for p in holding.get(inside, ()) if p.startswith(prefix)]
            items = [(path, bucket[path]) for path in paths if path in bucket]
        if ordered:
            items.sort(key=lambda item: item[0])
        return items

    def _claim(self, ns: str, bucket: dict[str, StoredEntry], path: str) -> None:
        """Register a new path's parent directories, refusing entry/directory clashes."""
        dirs = self._dirs.get(ns)
        if dirs is None:
            dirs = self._dirs[ns] = {}
        if path in dirs:
            raise EntryExistsError(
                f"{path!r} is a directory (it holds entries), so it cannot also be an entry",
                namespace=ns,
                path=path,
            )
        parents = _parents(path)
        for parent in parents:
            if parent in bucket:
                raise EntryExistsError(
                    f"{parent!r} is an entry, so it cannot also be a directory for {path!r}",
                    namespace=ns,
                    path=path,
                )
        for parent in parents:
            dirs[parent] = dirs.get(parent, 0) + 1
        holding = self._holding.get(ns)
        if holding is None:
            holding = self._holding[ns] = {}
        directory = path[: path.rfind("/") + 1]
        members = holding.get(directory)
        if members is None:
            members = holding[directory] = set()
        members.add(path)
