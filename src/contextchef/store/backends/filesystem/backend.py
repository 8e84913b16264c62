"""`FileSystemBackend`: one directory per namespace, crash-safe, confined to its root.

Layout (see `layout`) matches the TypeScript reference 4.2.1: `<root>/<ns>/<path>`, JSON
`{content, meta}` envelopes by default, raw files for `vfs/` and `archive/`. A directory written
by either implementation opens in the other.

Guarantees:

- **Atomic writes.** An entry is written to a temporary file in its own directory
  (`.tmp_<pid>_…`, invisible to listing), flushed with `fsync`, renamed over the target with
  `os.replace`, and the directory is fsynced. A crash leaves the old entry or the new one, never
  a torn one. `fsync=False` keeps the atomicity (a killed process cannot tear a file) but gives
  up durability across power loss, for speed.
- **Confinement.** Every operation walks from the namespace directory one segment at a time with
  `O_NOFOLLOW` directory handles (see `dirs`), so no symbolic link below the namespace directory
  is ever followed (a planted link raises `InvalidPathError`) and no race can swap one in midway.
  A hard link (a file with a second name, which may be outside the root) is refused the same
  way: reading it raises, listing skips it, writing replaces the name, never the file.
  `get_physical_path` additionally resolves the path and refuses anything outside.
- **Hygiene.** Directories are made on demand, missing parents of the root included, 0700
  whatever the umask, and again if something removed them; files are 0600. Opening a backend
  sweeps the temporary files a crashed writer left (our own name pattern only; a few seconds
  old when their writer's pid is gone, else an hour; see `sweep`). Listing is recursive and
  skips temporary files, dotfiles, links and names the path rules reject. Access times for
  least-recently-read eviction are logged by `touch` in the namespace's `.accessed` file (see
  `access`), so their order survives a restart; the backend's own reads leave files' atimes
  alone (`O_NOATIME`), which still stand in for entries never touched.
- **Atomic commands across processes.** Every write of a namespace (write, delete, append,
  create, replace_if, transact) holds the namespace lock (see `locking`: `flock` on the namespace
  directory on POSIX; in-process only where that is impossible, e.g. Windows). `append` is
  read, add, atomic replace under that lock (never `O_APPEND`: JSON envelopes cannot grow in
  place, and the replace keeps appends crash-safe). `create` links a finished temporary file
  into place, failing on an existing name. `read_versioned` hands out a SHA-256 of the file's
  bytes as the version; `replace_if` re-reads and compares it under the lock; `transact`
  reads, computes and writes under it, so concurrent edits (and a `rename`) queue.
- **Versions.** A versioned namespace (`keep_versions`) keeps every version of each entry in
  append-only hidden files under its `.versions/` directory, recorded under the namespace lock
  after each write and delete (see `versions`).

A path is either an entry or a directory: writing `a` while `a/b` exists (or the reverse)
raises `EntryExistsError`. On a case- or normalisation-insensitive filesystem (macOS, Windows)
two keys that differ only in case share one file; nothing escapes, but the second write
replaces the first.
"""

from __future__ import annotations

import builtins
import hashlib
import itertools
import os
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from contextchef.errors import (
    ConfigError,
    InvalidPathError,
    StoreError,
)
from contextchef.store.backend import ListedEntry, SearchHit, StoredEntry, Transaction, Version
from contextchef.store.backends.filesystem.access import AccessLog
from contextchef.store.backends.filesystem.dirs import NamespaceDirs
from contextchef.store.backends.filesystem.fileio import (
    atomic_replace,
    entry_stat,
    exclusive_create,
    refuse_hard_link,
    translate_errors,
)
from contextchef.store.backends.filesystem.layout import (
    Format,
    Layout,
    encode_entry,
)
from contextchef.store.backends.filesystem.locking import namespace_lock
from contextchef.store.backends.filesystem.sweep import sweep_temp_files
from contextchef.store.backends.filesystem.vectors import change_vectors, load_vectors
from contextchef.store.backends.filesystem.versions import VersionFiles
from contextchef.store.backends.filesystem.walk import decode_file, read_file, walk_dir
from contextchef.store.entries import appended
from contextchef.store.paths import validate_prefix
from contextchef.store.search import scan
from contextchef.store.vectors import VectorSet

__all__ = ["FileSystemBackend"]


_RETRIES = 3


class FileSystemBackend:
    """A `StorageBackend` that keeps each namespace in a directory under `root`."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        layouts: Mapping[str, Layout | Format] | None = None,
        fsync: bool = True,
    ) -> None:
        if not isinstance(root, str | os.PathLike):
            raise ConfigError(f"root must be a path, got {root!r}")
        self._root = Path(root).absolute()
        self._places = NamespaceDirs(self._root, layouts, fsync=fsync)
        self._fsync = fsync
        self._token = secrets.token_hex(4)
        self._versions = VersionFiles(
            self._places.dirs, self._places.ns_dir, self._places.spot, fsync=fsync
        )
        self._access = AccessLog(fsync=fsync)
        self._counter = itertools.count()
        swept = {self._root}
        swept.update(
            Path(lay.directory).absolute() for lay in self._places.layouts.values() if lay.directory
        )
        for directory in swept:
            sweep_temp_files(directory)

    def __repr__(self) -> str:
        return f"FileSystemBackend({self._root!r})"

    @property
    def root(self) -> Path:
        """The absolute root directory."""
        return self._root

    # -- required -------------------------------------------------------------------------

    def read(self, ns: str, path: str) -> StoredEntry | None:
        with self._places.located(ns, path, "read") as spot:
            entry = None if spot is None else read_file(*spot, ns, path)
        return None if entry is None else self._with_access(ns, path, entry)

    def _with_access(
        self, ns: str, path: str, entry: StoredEntry, times: Mapping[str, float] | None = None
    ) -> StoredEntry:
        """`entry` with its logged read time, when it has one (see `access`)."""
        at = (self._access.times(self._places.ns_dir(ns)) if times is None else times).get(path)
        if at is None:
            return entry
        return StoredEntry(entry.content, {**entry.meta, "accessed_at": at})

    def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        with self._locked(ns):
            self._put(ns, path, entry, exclusive=False)
            self._record(ns, path)

    def _put(self, ns: str, path: str, entry: StoredEntry, *, exclusive: bool) -> bool:
        """Write (or, `exclusive`, create) the file under the namespace lock the caller holds."""
        body = encode_entry(self._places.layout(ns), entry)
        put = exclusive_create if exclusive else atomic_replace
        for attempt in range(_RETRIES):
            try:
                with self._places.located(ns, path, "write", create=True) as spot:
                    assert spot is not None
                    _, dfd, name = spot
                    temp = self._temp_name()
                    return put(dfd, name, body, temp, fsync=self._fsync, where=path) is not False
            except StoreError as exc:
                # The directory was removed under us (another process, a temp cleaner): redo.
                if not isinstance(exc.__cause__, FileNotFoundError) or attempt == _RETRIES - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _temp_name(self) -> str:
        return f".tmp_{os.getpid()}_{self._token}_{next(self._counter)}"

    @contextmanager
    def _locked(self, ns: str, *, create: bool = True) -> Iterator[int | None]:
        """Hold the namespace's write lock (see `locking`); `create` makes the directory.
        Yields the namespace directory's handle (None when it does not exist)."""
        with translate_errors(ns, "", "lock"):
            top = self._places.open_ns_dir(ns, create=create)
        try:
            with (
                translate_errors(ns, "", "lock"),
                namespace_lock(str(self._places.ns_dir(ns)), top),
            ):
                yield top
        finally:
            if top is not None:
                os.close(top)

    def delete(self, ns: str, path: str) -> bool:
        with self._locked(ns, create=False) as top:
            deleted = self._delete(ns, path)
            if deleted:
                self._versions.record(ns, path, None)
                if top is not None and path in self._access.times(self._places.ns_dir(ns)):
                    self._access.forget(top, path)
            return deleted

    def _delete(self, ns: str, path: str) -> bool:
        with self._places.located(ns, path, "delete") as spot:
            if spot is None:
                return False
            _, dfd, name = spot
            try:
                os.unlink(name, dir_fd=dfd)
            except (FileNotFoundError, IsADirectoryError):
                return False
            if self._fsync:
                os.fsync(dfd)
            return True

    def list(self, ns: str, prefix: str = "") -> list[ListedEntry]:
        return [ListedEntry(path, entry.meta) for path, entry in self._walk(ns, prefix, False)]

    # -- optional capabilities ------------------------------------------------------------

    def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]:
        return dict(self._walk(ns, prefix, True))

    def exists(self, ns: str, path: str) -> bool:
        with self._places.located(ns, path, "stat") as spot:
            return spot is not None and entry_stat(spot[1], spot[2]) is not None

    def append(self, ns: str, path: str, content: str) -> None:
        with self._locked(ns):
            self._put(ns, path, appended(self.read(ns, path), content), exclusive=False)
            self._record(ns, path)

    def create(self, ns: str, path: str, entry: StoredEntry) -> bool:
        with self._locked(ns):
            created = self._put(ns, path, entry, exclusive=True)
            if created:
                self._record(ns, path)
            return created

    def read_versioned(self, ns: str, path: str) -> tuple[StoredEntry, Version] | None:
        with self._places.located(ns, path, "read") as spot:
            found = None if spot is None else decode_file(*spot, ns, path)
        if found is None:
            return None
        return self._with_access(ns, path, found[0]), hashlib.sha256(found[1]).hexdigest()

    def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> bool:
        with self._locked(ns):
            current = self.read_versioned(ns, path)
            if current is None or current[1] != expected:
                return False
            self._put(ns, path, entry, exclusive=False)
            self._record(ns, path)
            return True

    def transact(
        self, ns: str, paths: Sequence[str], change: Transaction
    ) -> Mapping[str, StoredEntry | None]:
        """Read `paths`, apply `change`, write its answer (new entries first, then deletes),
        all under the namespace lock: every other writer of `ns` waits."""
        with self._locked(ns):
            written = change({path: self.read(ns, path) for path in paths})
            for path, entry in written.items():
                if entry is not None:
                    self._put(ns, path, entry, exclusive=False)
                    self._record(ns, path)
            for path, entry in written.items():
                if entry is None and self._delete(ns, path):
                    self._versions.record(ns, path, None)
            return written

    def search(
        self, ns: str, query: str, *, prefix: str = "", limit: int | None = None
    ) -> builtins.list[SearchHit]:
        return scan(self._walk(ns, prefix, True), query, limit)

    def snapshot(self, ns: str) -> dict[str, StoredEntry]:
        return self.read_all(ns)

    def restore(self, ns: str, snapshot: Mapping[str, StoredEntry]) -> None:
        """Make the namespace hold exactly `snapshot` (entry by entry, not as one transaction)."""
        for listed in self.list(ns):
            if listed.path not in snapshot:
                self.delete(ns, listed.path)
        for path, entry in snapshot.items():
            self.write(ns, path, entry)

    def touch(self, ns: str, path: str, accessed_at: float) -> None:
        """Log `path`'s read time in the namespace's `.accessed` (see `access`). A time logged
        for an entry that is gone (deleted since the read) lists nowhere, and is dropped when
        the log is compacted."""
        self._places.spot(ns, path)  # the path rules, as for every operation
        with translate_errors(ns, path, "touch"), self._places.ns_handle(ns, create=False) as top:
            full = top is not None and self._access.append(top, path, accessed_at)
        if full:
            with self._locked(ns, create=False) as locked, translate_errors(ns, "", "compact"):
                if locked is not None:
                    present = partial(self.exists, ns)
                    self._access.compact(locked, present, self._temp_name())

    def get_physical_path(self, ns: str, path: str) -> str | None:
        """The file's absolute path; refuses one that resolves outside the namespace directory."""
        parents, name = self._places.split(self._places.layout(ns), path)
        directory = self._places.ns_dir(ns)
        candidate = directory.joinpath(*parents, name)
        if directory.is_symlink():
            raise InvalidPathError(
                f"the namespace directory {directory} is a symbolic link", namespace=ns, path=path
            )
        base = directory.resolve()
        resolved = candidate.resolve()
        if resolved != base and base not in resolved.parents:
            raise InvalidPathError(
                f"{path!r} resolves to {resolved}, outside the namespace directory {base}",
                namespace=ns,
                path=path,
            )
        self._refuse_hard_link(ns, path)
        return str(candidate)

    def _refuse_hard_link(self, ns: str, path: str) -> None:
        """A hard link's physical path could hand out a file outside the root: refused."""
        with self._places.located(ns, path, "locate") as spot:
            if spot is not None:
                refuse_hard_link(spot[1], spot[2], path)

    def supports(self, capability: str, ns: str) -> bool:
        """Every capability it has a method for; `history` for the versioned namespaces;
        `vectors` (in the namespace's `.vectors.json`, see `vectors`)."""
        if capability == "history":
            return self._versions.is_versioned(ns)
        return capability == "vectors" or callable(getattr(self, capability, None))

    # -- vectors (see `vectors`) ----------------------------------------------------------

    def put_vectors(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> None:
        self._change_vectors(ns, lambda found: found.put(vectors), create=True)

    def delete_vectors(self, ns: str, paths: Sequence[str] | None = None) -> None:
        self._change_vectors(ns, lambda found: found.delete(paths), create=False)

    def _change_vectors(self, ns: str, change: Callable[[VectorSet], None], create: bool) -> None:
        with (
            self._locked(ns, create=create),
            translate_errors(ns, "", "index"),
            self._places.ns_handle(ns, create=create) as dfd,
        ):
            if dfd is not None:
                change_vectors(dfd, ns, change, self._temp_name(), fsync=self._fsync)

    def nearest(
        self,
        ns: str,
        vector: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> builtins.list[tuple[str, float]]:
        with translate_errors(ns, "", "search"), self._places.ns_handle(ns, create=False) as dfd:
            found = load_vectors(dfd, ns)
        return found.nearest(vector, metric=metric, prefix=prefix, limit=limit)

    # -- versions (see `versions`) --------------------------------------------------------

    def keep_versions(self, ns: str) -> None:
        """Keep every version of `ns` from now on (its `.versions/` directory says so to every
        later backend); its current entries are the first versions."""
        with self._locked(ns), translate_errors(ns, "", "keep versions of"):
            self._versions.adopt(ns, self._walk(ns, "", True))

    def history(self, ns: str, path: str) -> builtins.list[StoredEntry]:
        """Every version of `ns/path`, oldest first (see `StorageBackend`)."""
        return self._versions.history(ns, path, self.read(ns, path))

    def _record(self, ns: str, path: str) -> None:
        """Record the entry just written as a version (the caller holds the namespace lock)."""
        if self._versions.is_versioned(ns):
            self._versions.record(ns, path, self.read(ns, path))

    # -- walking --------------------------------------------------------------------------

    def _walk(self, ns: str, prefix: str, content: bool) -> Iterator[tuple[str, StoredEntry]]:
        """Entries under `prefix`, depth-first in name order; reads files only when needed."""
        layout = self._places.layout(ns)
        validate_prefix(prefix)
        start = prefix.split("/")[:-1]
        stat_only = layout.format == "raw" and not content
        with (
            translate_errors(ns, prefix, "list"),
            self._places.dirs(ns, start, create=False) as fds,
        ):
            if fds is None:
                return
            base = "".join(f"{segment}/" for segment in start)
            times = self._access.times(self._places.ns_dir(ns))
            for path, entry in walk_dir(ns, layout, fds[-1], base, prefix, stat_only):
                yield path, self._with_access(ns, path, entry, times)
