"""Import the files of the TypeScript library's 4.1 stores into a `Store`.

Before 4.2, each module of the TypeScript reference kept its own files, in a layout that the
4.2 `.context` store does not read (`store import DIR` takes a 4.2 store directory as it is):

- `VFSMemoryStore` (default directory `.context_memory/`): one file per key, named
  `<base64url(key)>.mem` (unpadded, as Node writes it), holding the bare `MemoryStoreEntry` as
  JSON: `{"value": …, "description"?, "createdAt", "updatedAt", "updateCount", "importance"?,
  "expiresAt"?, "expiresAtTurn"?}`, times in milliseconds. Beside them, `_index.json` (the key
  list 4.1 answered `keys()` from) and `.tmp_…` scratch files of interrupted writes.
- the Offloader's `FileSystemAdapter` (default directory `.context_vfs/`): raw text files, flat
  `vfs_<ms>_<hex>.txt` (4.1) or `vfs_<hash16>.txt` (4.2) names, plus `archive_…` spans.

`import_from_41` writes each `.mem` entry to `<memory_namespace>/<key>`: the value is the
content; `createdAt`/`updatedAt` become the store's `created_at`/`updated_at` (seconds); every
other field is kept under its own name, which is the meta the 4.2 filesystem layout yields for
the same entry (the memory layer reads that style). Each VFS file goes to `vfs/<relative path>`
(`archive/…` for `archive_…` names), subdirectories included; its `created_at` is the time in a
4.1 name, else the file's modification time, as is its `updated_at`.

Idempotent: an entry the store already holds with the same content and meta is counted as
`unchanged` and not written; one that differs is overwritten only when the file is newer
(`updated_at`), else kept and the file reported as skipped. Nothing is ever deleted, from the
store or from the 4.1 directories, which are only read (symbolic links are not followed).
Everything the import does not take is reported as skipped with the reason: a malformed `.mem`
file, a name that is not a key's encoding, scratch files, non-UTF-8 content, a key or path the
store's path rules refuse.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from contextchef.errors import ContextChefError, StoreError
from contextchef.store.backend import StoredEntry
from contextchef.store.paths import format_uri, validate_entry_path
from contextchef.store.store import Store

__all__ = ["ImportedEntry", "LegacyImport", "SkippedFile", "import_from_41"]

MEMORY_DIR = ".context_memory"
VFS_DIR = ".context_vfs"
VFS_NAMESPACE = "vfs"
ARCHIVE_NAMESPACE = "archive"

_INDEX = "_index.json"
_LEGACY_VFS_NAME = re.compile(r"^vfs_(\d+)_[0-9a-f]+\.txt$")
_TIMES = {"createdAt": "created_at", "updatedAt": "updated_at"}
_NOT_COMPARED = frozenset({"created_at", "updated_at", "accessed_at", "bytes"})
_TOLERANCE_S = 1e-3

Action = Literal["created", "updated", "unchanged"]


@dataclass(frozen=True, slots=True)
class ImportedEntry:
    """One entry the import found: where it came from, its URI and what was done."""

    source: Path
    uri: str
    action: Action


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file the import did not take, and why."""

    source: Path
    reason: str


@dataclass(frozen=True, slots=True)
class LegacyImport:
    """What `import_from_41` did: every entry found and every file skipped, in path order."""

    entries: list[ImportedEntry] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)

    def count(self, action: Action) -> int:
        """How many entries were `created`, `updated` or left `unchanged`."""
        return sum(1 for entry in self.entries if entry.action == action)


class _Malformed(Exception):
    """A file that cannot be imported; the message is the reason reported."""


def _key_of(name: str) -> str | None:
    """The key a `.mem` file name encodes, or None when the name is not an encoding."""
    stem = name[: -len(".mem")]
    try:
        key = base64.urlsafe_b64decode(stem + "=" * (-len(stem) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    encoded = base64.urlsafe_b64encode(key.encode("utf-8")).decode("ascii").rstrip("=")
    return key if encoded == stem and key else None


def _seconds(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _Malformed(f"{what} is {value!r}, not a time in milliseconds")
    if value < 0:
        raise _Malformed(f"{what} is negative ({value})")
    return float(value) / 1000


def _mem_entry(file: Path) -> StoredEntry:
    """The stored form of one `.mem` file (see the module docstring)."""
    try:
        data = json.loads(file.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _Malformed("not UTF-8 text") from exc
    except ValueError as exc:
        raise _Malformed(f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _Malformed(f"holds a JSON {type(data).__name__}, not an entry object")
    value = data.get("value")
    if not isinstance(value, str):
        raise _Malformed("has no string `value`")
    mtime = file.stat().st_mtime
    meta: dict[str, Any] = {}
    for key, item in data.items():
        if key == "value":
            continue
        if key in _TIMES:
            meta[_TIMES[key]] = _seconds(item, key)
        else:
            meta[key] = item
    meta.setdefault("created_at", mtime)
    meta.setdefault("updated_at", meta["created_at"])
    return StoredEntry(value, meta)


def _vfs_entry(file: Path) -> StoredEntry:
    try:
        content = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Malformed("not UTF-8 text (the store keeps text only)") from exc
    mtime = file.stat().st_mtime
    legacy = _LEGACY_VFS_NAME.match(file.name)
    created = int(legacy.group(1)) / 1000 if legacy else mtime
    return StoredEntry(content, {"created_at": created, "updated_at": mtime})


def _free(meta: dict[str, Any] | Any) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k not in _NOT_COMPARED}


def _newer(entry: StoredEntry, existing: StoredEntry) -> bool:
    """Whether the file's entry was updated after the store's (a store entry without a time
    counts as older)."""
    mine: float = entry.meta["updated_at"]  # always set by `_mem_entry` / `_vfs_entry`
    theirs = existing.meta.get("updated_at")
    if not isinstance(theirs, int | float) or isinstance(theirs, bool):
        return True
    return mine > float(theirs) + _TOLERANCE_S


class _Importer:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.report = LegacyImport()
        self._present: dict[str, set[str]] = {}

    def skip(self, source: Path, reason: str) -> None:
        self.report.skipped.append(SkippedFile(source, reason))

    def _existing(self, ns: str, path: str) -> StoredEntry | None:
        if ns not in self._present:
            self._present[ns] = {item.path for item in self.store.namespace(ns).list()}
        if path not in self._present[ns]:
            return None
        return self.store.namespace(ns).entries(path).get(path)  # `entries` records no read

    def put(self, source: Path, ns: str, path: str, entry: StoredEntry) -> None:
        try:
            validate_entry_path(path)
            existing = self._existing(ns, path)
            if existing is not None:
                same = existing.content == entry.content
                if same and _free(existing.meta) == _free(entry.meta):
                    self.report.entries.append(
                        ImportedEntry(source, format_uri(ns, path), "unchanged")
                    )
                    return
                if not _newer(entry, existing):
                    self.skip(
                        source,
                        f"{format_uri(ns, path)} already holds a different entry that is as new "
                        "or newer; it was kept",
                    )
                    return
            self.store.namespace(ns).put(path, entry.content, dict(entry.meta))
        except ContextChefError as exc:
            self.skip(source, f"the store refused it: {exc}")
            return
        action: Action = "created" if existing is None else "updated"
        self.report.entries.append(ImportedEntry(source, format_uri(ns, path), action))

    def memory_dir(self, directory: Path, ns: str) -> None:
        for file in sorted(directory.iterdir()):
            name = file.name
            if name == _INDEX:
                continue  # 4.1's key list: the files themselves are the source of truth
            if name.startswith("."):
                self.skip(file, "a scratch file of an unfinished write, not an entry")
            elif file.is_symlink() or not file.is_file():
                self.skip(file, "not a regular file (symbolic links and directories are skipped)")
            elif not name.endswith(".mem"):
                self.skip(file, "not a `.mem` entry file")
            elif (key := _key_of(name)) is None:
                self.skip(file, "its name is not the base64url encoding of a key")
            else:
                try:
                    entry = _mem_entry(file)
                except _Malformed as exc:
                    self.skip(file, f"malformed: {exc}")
                    continue
                self.put(file, ns, key, entry)

    def vfs_dir(self, directory: Path) -> None:
        for root, dirs, files in os.walk(directory):  # never follows symbolic links
            here = Path(root)
            dirs.sort()
            for name in [d for d in dirs if d.startswith(".")]:
                dirs.remove(name)
                self.skip(here / name, "a hidden directory, not part of the store")
            for name in sorted(files):
                file = here / name
                if name.startswith("."):
                    self.skip(file, "a scratch file of an unfinished write, not an entry")
                    continue
                if file.is_symlink() or not file.is_file():
                    self.skip(file, "not a regular file (symbolic links are not followed)")
                    continue
                ns = (
                    ARCHIVE_NAMESPACE if name.startswith(f"{ARCHIVE_NAMESPACE}_") else VFS_NAMESPACE
                )
                try:
                    entry = _vfs_entry(file)
                except _Malformed as exc:
                    self.skip(file, f"malformed: {exc}")
                    continue
                self.put(file, ns, file.relative_to(directory).as_posix(), entry)


def _has(directory: Path, pattern: str) -> bool:
    return any(directory.glob(pattern))


def import_from_41(
    store: Store,
    directory: str | os.PathLike[str],
    *,
    memory_namespace: str,
    memory_dir: str | os.PathLike[str] | None = None,
    vfs_dir: str | os.PathLike[str] | None = None,
) -> LegacyImport:
    """Copy the 4.1 memory and VFS files found in `directory` into `store` (see the module).

    `directory` is the working directory the 4.1 app ran in, holding `.context_memory/` and
    `.context_vfs/`, or one of those two directories itself. `memory_dir` / `vfs_dir` name
    directories configured elsewhere in 4.1 (`new VFSMemoryStore(dir)`, `vfs.storageDir`).
    The `.mem` entries go to `memory_namespace` (the memory layer reads `"memory"`:
    `contextchef.memory.entry.MEMORY_NAMESPACE`).
    Raises `StoreError` when there is no 4.1 data to import; otherwise reports every file.
    """
    root = Path(directory).expanduser()
    if not root.is_dir():
        raise StoreError(f"{root} is not a directory; name the directory the 4.1 app ran in")
    mem = Path(memory_dir).expanduser() if memory_dir is not None else root / MEMORY_DIR
    vfs = Path(vfs_dir).expanduser() if vfs_dir is not None else root / VFS_DIR
    if memory_dir is None and vfs_dir is None and not mem.is_dir() and not vfs.is_dir():
        if _has(root, "*.mem") or (root / _INDEX).is_file():
            mem = root
        elif _has(root, "vfs_*") or _has(root, f"{ARCHIVE_NAMESPACE}_*"):
            vfs = root
    found = [d for d in (mem, vfs) if d.is_dir() and not d.is_symlink()]
    if not found:
        raise StoreError(
            f"no 4.1 data in {root}: expected {MEMORY_DIR}/ (memory `.mem` files) or {VFS_DIR}/ "
            "(offloaded output); name them with memory_dir / vfs_dir if they live elsewhere"
        )
    importer = _Importer(store)
    if mem in found:
        importer.memory_dir(mem, memory_namespace)
    if vfs in found:
        importer.vfs_dir(vfs)
    return importer.report
