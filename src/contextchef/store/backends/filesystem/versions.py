"""The versions `FileSystemBackend` keeps for a versioned namespace, in hidden files.

A namespace is versioned when the store declares it so (`keep_versions`); the declaration is the
hidden directory `.versions/` in the namespace's directory, so every later backend over the same
root (another process, a reopen) keeps versioning it without being told again.

`.versions/` mirrors the namespace's directories: the versions of entry `a/b/c.md` are in
`.versions/a/b/.v_c.md` (for a name too long to take the prefix, `.h_<sha256 of the name>`).
Listing skips hidden names (ours and the TypeScript reference's alike) and no entry name may
start with a dot, so these files never show up as entries nor clash with one, and the temporary
file sweep (`.tmp_…`) never matches them. Each file is append-only, one JSON object per line:

- `{"content": …, "meta": {…}, "recorded_at": t}`: a version, as `read` returned it just after
  the write that made it (meta in the backend's Python form, without `bytes` and `accessed_at`);
- `{"deleted_at": t}`: the entry was deleted while the version before was the current one.

A line is appended (`O_APPEND`, flushed like the entries) under the namespace's write lock,
after the write or delete it records. A crash between the two leaves the history a step behind,
and a line torn by a crash is skipped when read; `with_current` then shows the current file as
the last version when it differs from the last one recorded (also true of an entry rewritten
by a writer that keeps no versions, such as the TypeScript reference).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from contextchef.errors import StoreCapabilityError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.filesystem.fileio import (
    hard_link_refused,
    read_regular,
    translate_errors,
    write_all,
)

__all__ = [
    "VERSIONS_DIR",
    "DirOpener",
    "VersionFiles",
    "append_line",
    "deleted_line",
    "history_name",
    "needs_record",
    "parse_history",
    "version_line",
    "with_current",
]

logger = logging.getLogger("contextchef.store.backends.filesystem.versions")

VERSIONS_DIR = ".versions"
"""The hidden directory, in a namespace's directory, that holds its versions."""

_NOT_KEPT = frozenset({"bytes", "accessed_at"})
_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
_NAME_MAX = 255


class DirOpener(Protocol):
    """`FileSystemBackend._dirs`: the handles of a namespace's directory and of `parents` below
    it (made when `create`), never following a link; None when one is missing."""

    def __call__(
        self, ns: str, parents: list[str], *, create: bool
    ) -> AbstractContextManager[list[int] | None]: ...


Split = Callable[[str, str], tuple[list[str], str]]
"""`(ns, path) -> (parent directories, file name)` of an entry (the backend's layout rules)."""


class VersionFiles:
    """The version files of one backend: which namespaces are versioned, reading and appending
    (writers hold the namespace lock)."""

    def __init__(
        self, dirs: DirOpener, ns_dir: Callable[[str], Path], split: Split, *, fsync: bool
    ) -> None:
        self._dirs = dirs
        self._ns_dir = ns_dir
        self._split = split
        self._fsync = fsync
        self._kept: set[str] = set()

    def is_versioned(self, ns: str) -> bool:
        """Declared here, or by anyone before over this root (the `.versions/` directory)."""
        if ns in self._kept:
            return True
        try:
            st = (self._ns_dir(ns) / VERSIONS_DIR).lstat()
        except OSError:
            return False
        if stat.S_ISDIR(st.st_mode):
            self._kept.add(ns)
            return True
        return False

    def declare(self, ns: str) -> None:
        """Make `ns` versioned: its `.versions/` directory exists from now on."""
        with self._dirs(ns, [VERSIONS_DIR], create=True):
            self._kept.add(ns)

    def read(self, ns: str, path: str) -> list[StoredEntry]:
        """The recorded versions of `ns/path` (see `parse_history`)."""
        parents, name = self._split(ns, path)
        with (
            translate_errors(ns, path, "read the versions of"),
            self._dirs(ns, [VERSIONS_DIR, *parents], create=False) as fds,
        ):
            found = None if fds is None else read_regular(fds[-1], history_name(name), path)
        return [] if found is None else parse_history(found[0])

    def adopt(self, ns: str, entries: Iterable[tuple[str, StoredEntry]]) -> None:
        """Declare `ns` versioned; each of its current `entries` not yet recorded (written
        before, or by a writer that keeps no versions) becomes a version."""
        self.declare(ns)
        now = time.time()
        for path, entry in entries:
            if needs_record(self.read(ns, path), entry):
                self.append(ns, path, version_line(entry, now))

    def record(self, ns: str, path: str, entry: StoredEntry | None) -> None:
        """Record `entry`, just written at `ns/path`, as a new version (None: it was deleted),
        if `ns` is versioned."""
        if self.is_versioned(ns):
            now = time.time()
            self.append(ns, path, deleted_line(now) if entry is None else version_line(entry, now))

    def history(self, ns: str, path: str, current: StoredEntry | None) -> list[StoredEntry]:
        """Every version of `ns/path` (whose entry is now `current`), oldest first."""
        if not self.is_versioned(ns):
            raise StoreCapabilityError(ns, ["history"])
        return with_current(self.read(ns, path), current)

    def append(self, ns: str, path: str, line: bytes) -> None:
        """Append `line` to the version file of `ns/path`."""
        parents, name = self._split(ns, path)
        with (
            translate_errors(ns, path, "record a version of"),
            self._dirs(ns, [VERSIONS_DIR, *parents], create=True) as fds,
        ):
            assert fds is not None
            append_line(fds[-1], history_name(name), line, fsync=self._fsync)


def history_name(name: str) -> str:
    """The file holding the versions of the entry file `name` (in the mirrored directory)."""
    readable = f".v_{name}"
    if len(readable.encode("utf-8")) <= _NAME_MAX:
        return readable
    return ".h_" + hashlib.sha256(name.encode("utf-8")).hexdigest()


def _kept_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in meta.items() if key not in _NOT_KEPT}


def version_line(entry: StoredEntry, recorded_at: float) -> bytes:
    """The line recording `entry` as a new version."""
    record = {"content": entry.content, "meta": _kept_meta(entry.meta), "recorded_at": recorded_at}
    return _line(record)


def deleted_line(at: float) -> bytes:
    """The line recording that the current version was deleted at `at`."""
    return _line({"deleted_at": at})


def _line(record: Mapping[str, Any]) -> bytes:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"  # JSON escapes every newline inside a string


def append_line(dfd: int, name: str, line: bytes, *, fsync: bool) -> None:
    """Append `line` to file `name` in directory `dfd` (created 0600, never through a link)."""
    fd = os.open(name, _APPEND_FLAGS, 0o600, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if st.st_nlink > 1:  # a hard link planted here: never append to a file outside the root
            raise hard_link_refused(name, st)
        write_all(fd, line, fsync=fsync)
    finally:
        os.close(fd)


def parse_history(data: bytes) -> list[StoredEntry]:
    """The versions recorded in a history file's bytes, oldest first, with `recorded_at`,
    `superseded_at` and `deleted_at` in their meta (see the module docstring)."""
    versions: list[dict[str, Any]] = []
    contents: list[str] = []
    for raw in data.split(b"\n"):
        if not raw:
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            logger.warning("skipping a torn line in a version file")
            continue
        if not isinstance(record, dict):
            continue
        if "deleted_at" in record:
            if versions and _live(versions[-1]):
                versions[-1]["deleted_at"] = record["deleted_at"]
            continue
        content, meta = record.get("content"), record.get("meta")
        recorded = record.get("recorded_at")
        if not isinstance(content, str) or not isinstance(meta, dict):
            continue
        if versions and _live(versions[-1]):
            versions[-1]["superseded_at"] = recorded
        meta["recorded_at"] = recorded
        versions.append(meta)
        contents.append(content)
    return [_entry(content, meta) for content, meta in zip(contents, versions, strict=True)]


def _live(meta: Mapping[str, Any]) -> bool:
    return "superseded_at" not in meta and "deleted_at" not in meta


def _entry(content: str, meta: dict[str, Any]) -> StoredEntry:
    meta["bytes"] = len(content.encode("utf-8"))
    return StoredEntry(content, meta)


def needs_record(versions: list[StoredEntry], current: StoredEntry) -> bool:
    """Whether `current` (the entry as read now) is not the live last version of `versions`."""
    if not versions or not _live(versions[-1].meta):
        return True
    last = versions[-1]
    recorded = {k: v for k, v in last.meta.items() if k != "recorded_at"}
    return last.content != current.content or _kept_meta(recorded) != _kept_meta(current.meta)


def with_current(versions: list[StoredEntry], current: StoredEntry | None) -> list[StoredEntry]:
    """`versions`, ending with `current` when the history has not recorded it (its
    `recorded_at` is then its `updated_at`)."""
    if current is None or not needs_record(versions, current):
        return versions
    meta = dict(current.meta)
    meta.pop("accessed_at", None)
    updated = meta.get("updated_at")
    meta["recorded_at"] = updated if isinstance(updated, int | float) else None
    if versions and _live(versions[-1].meta):
        last = versions[-1]
        superseded = {**last.meta, "superseded_at": meta["recorded_at"]}
        versions[-1] = StoredEntry(last.content, superseded)
    return [*versions, StoredEntry(current.content, meta)]
