"""The storage contract every backend implements, sync and async.

A backend stores UTF-8 text entries addressed by `(namespace, path)`. Four methods are
required (`read`, `write`, `delete`, `list`); everything else is an optional *capability* that
callers query through `supports()` and never assume. Path rules are enforced by the `Store`
before a backend sees a path, so backends may trust the names they are given, but still refuse
anything that would escape their own root.

Times in `meta` are seconds since the Unix epoch as floats (`time.time()`); `bytes` is the UTF-8
length of the content. Other meta keys are free-form JSON values and must round-trip.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "CAPABILITIES",
    "VECTOR_METHODS",
    "AsyncStorageBackend",
    "Capability",
    "ListedEntry",
    "SearchHit",
    "StorageBackend",
    "StoredEntry",
    "Transaction",
    "Version",
    "backend_supports",
]

Capability = Literal[
    "read_all",
    "read_last",
    "list_dirs",
    "read_recent",
    "read_recent_where",
    "exists",
    "append",
    "search",
    "snapshot",
    "restore",
    "get_physical_path",
    "touch",
    "history",
    "create",
    "read_versioned",
    "replace_if",
    "keep_versions",
    "transact",
    "vectors",
]
CAPABILITIES: tuple[Capability, ...] = (
    "read_all",
    "read_last",
    "list_dirs",
    "read_recent",
    "read_recent_where",
    "exists",
    "append",
    "search",
    "snapshot",
    "restore",
    "get_physical_path",
    "touch",
    "history",
    "create",
    "read_versioned",
    "replace_if",
    "keep_versions",
    "transact",
    "vectors",
)

VECTOR_METHODS = ("put_vectors", "delete_vectors", "nearest")
"""The methods of the `vectors` capability (the one capability whose name is not a method)."""

Version = str
"""An opaque version token: what `read_versioned` hands out and `replace_if` compares.

Only the backend that issued it interprets it; callers compare nothing and store nothing.
"""

Transaction = Callable[[Mapping[str, "StoredEntry | None"]], Mapping[str, "StoredEntry | None"]]
"""What `transact` applies: the current entries of the paths it names (None where a path holds
none) to what to write (an entry, or None to delete; a path left out stays as it is). Pure: it
may run more than once and may raise to write nothing."""

_NO_META: Any = object()


@dataclass(frozen=True, slots=True, init=False)
class StoredEntry:
    """One stored text entry and its metadata (`created_at`, `updated_at`, `bytes`, free keys)."""

    content: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, content: str, meta: Mapping[str, Any] = _NO_META) -> None:
        # Made on every read and write: the slots are filled directly, half the cost of a
        # frozen dataclass's generated `__init__` (which goes through `object.__setattr__`).
        _set_content(self, content)
        _set_meta(self, {} if meta is _NO_META else meta)

    @property
    def created_at(self) -> float | None:
        value = self.meta.get("created_at")
        return float(value) if isinstance(value, int | float) else None

    @property
    def updated_at(self) -> float | None:
        value = self.meta.get("updated_at")
        return float(value) if isinstance(value, int | float) else None

    @property
    def bytes(self) -> int:
        value = self.meta.get("bytes")
        return value if isinstance(value, int) else len(self.content.encode("utf-8"))


_set_content, _set_meta = (vars(StoredEntry)[name].__set__ for name in ("content", "meta"))


@dataclass(frozen=True, slots=True)
class ListedEntry:
    """A path found by `list`, with the entry's metadata (never its content)."""

    path: str
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A search result: the path, its metadata, a snippet around the match and a rank score.

    `matched` says how it was found when a semantic index took part (see
    `contextchef.store.indexing`): `("lexical",)`, `("semantic",)` or both; empty for a plain
    text search."""

    path: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    snippet: str | None = None
    score: float | None = None
    matched: tuple[str, ...] = ()


@runtime_checkable
class StorageBackend(Protocol):
    """The four required methods of a synchronous backend.

    Optional capabilities, implemented as methods of the same name when present:

    - `read_all(ns, prefix="") -> dict[str, StoredEntry]`
    - `read_last(ns, prefix, count) -> dict[str, StoredEntry]`: the last `count` entries under
      `prefix` in path order (code-point order, as `Store.list` sorts), returned in that order:
      a "last N" read in one request, whatever the namespace holds (`{}` for `count <= 0`).
    - `list_dirs(ns, prefix) -> list[str]`: the directories under `prefix` (`""` or a path
      ending in `/`) that directly hold an entry, each ending in `/` (`""` for the namespace
      root), sorted: a namespace index, answered without listing every entry.
    - `read_recent(ns, prefix, limit, offset) -> dict[str, StoredEntry]`: `limit` entries under
      `prefix` from `offset` in recency order (`updated_at` descending, then path ascending by
      code point), in that order: one page, never the whole prefix.
    - `read_recent_where(ns, prefix, where, limit, offset) -> dict[str, StoredEntry]`: the page
      `read_recent` would give if `prefix` held only the entries matching `where` (a
      `contextchef.store.where.Condition` on the entry's JSON content and name): the filter and
      the page both where the entries are. An entry whose content is not JSON matches no
      condition on its content.
    - `exists(ns, path) -> bool`
    - `append(ns, path, content) -> None` (creates the entry when missing)
    - `search(ns, query, *, prefix="", limit=None) -> list[SearchHit]`
    - `snapshot(ns) -> dict[str, StoredEntry]` and `restore(ns, snapshot) -> None`
    - `get_physical_path(ns, path) -> str | None`
    - `touch(ns, path, accessed_at) -> None` (persists the last-read time for eviction)
    - `keep_versions(ns) -> None`: from now on, keep every version of the entries of `ns` (a
      *versioned namespace*). Which namespaces are versioned is configuration the store hands
      down (`Store(backend, versioned=[...])`, or a feature such as memory declaring its own
      namespace); the backend honours any name it is given and never picks one itself.
      Idempotent. Entries already in `ns` become the first version of their history. A
      persistent backend records the declaration with the data, so whoever opens the same
      storage later keeps versioning `ns` without being told again.
    - `history(ns, path) -> list[StoredEntry]`: every version of an entry of a versioned
      namespace, oldest first, the current one (if any) last, each with the meta it was
      written with plus `recorded_at` (when the version was recorded) and, when they apply,
      `superseded_at` (the `recorded_at` of its successor) and `deleted_at` (it was the
      current version when the entry was deleted). Every write, append, create or
      compare-and-swap that lands records a version (a backend may skip a rewrite that changes
      nothing); a delete marks the current version deleted and keeps it; writing the path
      again starts a new version after it; a `touch` is not a version; `restore` is the same
      deletes and writes. `[]` for a path never written; `StoreCapabilityError` for a
      namespace that is not versioned. `supports("history", ns)` is True exactly for the
      versioned namespaces.
    - `create(ns, path, entry) -> bool`: create-if-absent in one step. True when this call
      created the entry, False (nothing written) when one was already there, whoever wrote it
      and in whichever process: of racing creators exactly one gets True.
    - `read_versioned(ns, path) -> tuple[StoredEntry, Version] | None`: the entry and an
      opaque token that changes whenever its content or meta is rewritten (a `touch` does not
      change it, so concurrent readers never invalidate each other).
    - `replace_if(ns, path, entry, expected) -> bool`: compare-and-swap. Writes `entry` and
      returns True only when the entry still exists with version `expected`; otherwise writes
      nothing and returns False. Offered together with `read_versioned`. Writers that do not
      use it (`write`, `append`, `delete`) must still be serialised against it, so a plain
      write can never land between its comparison and its write.
    - `transact(ns, paths, change) -> Mapping[str, StoredEntry | None]`: an atomic
      read-modify-write of a few entries (a `Transaction`). Reads the current entries of
      `paths`, calls `change` with them and writes what it returns, all while every other
      writer of those paths (in any thread or process, `write`/`append`/`delete` included)
      waits: concurrent edits queue, none is refused and none is lost. Returns what `change`
      returned. An exception from `change` propagates and nothing is written. The store's
      edits (`update`, `rename`) use it when present and fall back to `read_versioned` +
      `replace_if` (compare-and-swap, refused after repeated contention) otherwise.
    - `vectors` (a semantic index, see `contextchef.store.indexing`): one vector per entry,
      kept by the backend beside its entries. `put_vectors(ns, {path: vector})` stores or
      replaces, `delete_vectors(ns, paths)` removes (every vector of `ns` for None), and
      `nearest(ns, vector, *, metric="cosine", prefix="", limit=None)` returns `(path, score)`
      pairs, best first, ties by path, scored exactly as `contextchef.store.vectors.rank` does
      (`cosine`, `l2`, `inner_product`). The store writes them after the entries; a backend
      never embeds. `supports("vectors", ns)` declares it (the method names alone do not).
    - `supports(capability, ns) -> bool` (when absent: "the method exists")

    Hot-path hooks (not capabilities: no flow requests them; only the synchronous `Store`'s
    hot lane uses them, see `contextchef.store.lanes`):

    - `entry_table(ns) -> Mapping[str, StoredEntry]`: the namespace's entries by path, live
      and read-only, one table for the backend's life (it never hands out another): for a
      backend that holds its entries in this process as immutable `StoredEntry`s, so a lookup
      there is a `read` (the in-memory one).
    - `write_fresh(ns, path, content, meta) -> None`: `write(ns, path, StoredEntry(content,
      meta))`, where `meta` is a dict the store made for this call and never touches again
      (JSON values, no derived keys, `created_at` and `updated_at` set): the backend may keep
      it rather than copy it (values it does not own, such as lists, still need copying).

    What the built-in backends do for `create`, `read_versioned` and `replace_if` (the version
    tokens are theirs alone), and for `transact`:

    - `InMemoryBackend`: a per-entry counter, everything under the backend's lock; one process.
    - `SQLiteBackend`: `INSERT … ON CONFLICT DO NOTHING` plus the row count for `create`;
      `replace_if` compares inside `BEGIN IMMEDIATE`, so it holds across processes. The token
      is a digest of the row's id, content, meta and times (not `accessed_at`) in `entries`,
      the current row's id in `memories` (every change there is a new row). `transact` reads
      and writes inside one `BEGIN IMMEDIATE`.
    - `FileSystemBackend`: every write of a namespace takes an OS lock on the namespace's lock
      file (`fcntl.flock`, POSIX); the token is a SHA-256 of the file's bytes. `create` links
      a finished temporary file into place (`os.link`, which fails on an existing name);
      `transact` reads and writes under that lock. Without `fcntl` (Windows) the lock is only
      an in-process one: atomic between threads, not between processes.
    - PostgreSQL: `transact` locks the rows of its paths (`SELECT … FOR UPDATE`, those rows
      only) in one transaction; reads never lock a row, so they never wait for a writer.

    Where the built-in backends keep versions (all four offer `keep_versions` for every
    namespace): `InMemoryBackend` in a list per entry; `FileSystemBackend` in an append-only
    file per entry under the namespace's hidden `.versions/` directory (whose presence is the
    declaration); `SQLiteBackend` as rows of its `memories` table, named in
    `versioned_namespaces`; PostgreSQL as rows of `memory_versions`, recorded by a trigger for
    the namespaces named in `versioned_namespaces`.
    """

    def read(self, ns: str, path: str) -> StoredEntry | None: ...

    def write(self, ns: str, path: str, entry: StoredEntry) -> None: ...

    def delete(self, ns: str, path: str) -> bool: ...

    def list(self, ns: str, prefix: str = "") -> list[ListedEntry]: ...


@runtime_checkable
class AsyncStorageBackend(Protocol):
    """The async mirror of `StorageBackend`: the same methods, as coroutines."""

    async def read(self, ns: str, path: str) -> StoredEntry | None: ...

    async def write(self, ns: str, path: str, entry: StoredEntry) -> None: ...

    async def delete(self, ns: str, path: str) -> bool: ...

    async def list(self, ns: str, prefix: str = "") -> list[ListedEntry]: ...


def backend_supports(backend: object, capability: Capability, ns: str) -> bool:
    """Whether `backend` offers `capability` for namespace `ns`.

    Asks the backend's own `supports()` when it has one; otherwise a capability is present
    exactly when the method of that name exists.
    """
    supports = getattr(backend, "supports", None)
    if callable(supports):
        return bool(supports(capability, ns))
    return callable(getattr(backend, capability, None))
