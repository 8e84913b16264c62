"""Online backups and restores of a database file.

`backup` copies a live database with the SQLite backup API while other processes keep writing:
the source connection pins one read snapshot for the whole copy, so the copy is consistent,
holds every transaction committed before it started, and never restarts. The copy is made a
standalone rollback-journal file, integrity-checked, and described by a sidecar manifest
(`<backup>.manifest.json`) carrying its schema version and sha256.

`restore` takes the sidecar lock exclusively (locking.py), so it refuses while any other
process has the database open (or waits for them, given `wait`): one that kept it open would go
on writing to the file moved aside. It refuses a backup newer than this build (the manifest is
read first, then the file itself), a manifest it cannot make sense of, a backup or a current
file that is not a contextchef database; then it checks the backup's integrity and digest,
moves the current database and its `-wal`/`-shm` aside into `<db>.before-restore-<time>/` (with
a receipt that `check` verifies: receipts.py), and puts the backup in place. Through a symlink,
the file it points to is replaced and the link is kept.

Backups, manifests and restored files are created 0600 (private.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextchef.errors import SchemaTooNewError, StoreCorruptError, StoreError
from contextchef.store.backends.sqlite.connection import translate_errors
from contextchef.store.backends.sqlite.locking import exclusive, real_path
from contextchef.store.backends.sqlite.maintenance import (
    foreign_error,
    foreign_reason,
    new_timestamped_dir,
    read_only,
    require_ours,
    side_files,
)
from contextchef.store.backends.sqlite.migrations import (
    LATEST_SCHEMA_VERSION,
    Progress,
    schema_version,
)
from contextchef.store.backends.sqlite.private import (
    create_private_file,
    make_private_dirs,
    private_sidecars,
)
from contextchef.store.backends.sqlite.receipts import write_receipt

__all__ = [
    "MANIFEST_FORMAT",
    "BackupResult",
    "RestoreResult",
    "backup",
    "backup_destination",
    "copy_pages",
    "manifest_path",
    "restore",
]

log = logging.getLogger("contextchef.store.backends.sqlite.backup")

MANIFEST_FORMAT = "contextchef-sqlite-backup/1"
_PAGES_PER_STEP = 256


def manifest_path(backup_file: Path) -> Path:
    """Where the sidecar manifest of `backup_file` lives."""
    return backup_file.with_name(backup_file.name + ".manifest.json")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def copy_pages(source: sqlite3.Connection, target: Path, progress: Progress | None) -> None:
    """Copy `source` page by page into a fresh standalone (0600) file at `target`."""
    create_private_file(target)
    dest = sqlite3.connect(target, isolation_level=None)
    try:

        def step(status: int, remaining: int, total: int) -> None:
            del status
            if progress is not None:
                progress(total - remaining, total)

        source.backup(dest, pages=_PAGES_PER_STEP, progress=step)
        dest.execute("PRAGMA journal_mode = DELETE")
        result = [row[0] for row in dest.execute("PRAGMA integrity_check(20)")]
    finally:
        dest.close()
    private_sidecars(target)
    if result != ["ok"]:
        raise StoreCorruptError(f"the copy at {target} failed integrity_check: {result}")


@dataclass(frozen=True, slots=True)
class BackupResult:
    """A finished backup: the file, its manifest and the schema version it holds."""

    path: Path
    manifest: Path
    schema_version: int
    bytes: int


def backup_destination(source: Path, dest: Path | str) -> Path:
    """Where a backup of `source` to `dest` goes; a `dest` naming a directory is created.

    `dest` names a directory when one exists there or when, given as text, it ends in a path
    separator (`backups/`): `Path` drops that separator, and without it a missing `backups/`
    would silently become a file named `backups`. A missing directory is created with its
    parents (0700). The backup inside it is `<source stem>-<YYYYmmdd-HHMMSS>.db`
    (`context-20250101-093000.db`): names that sort by time and are safe on every filesystem.
    """
    text = str(dest)
    separators = tuple(sep for sep in (os.sep, os.altsep) if sep)
    path = Path(dest)
    if text.endswith(separators) or path.is_dir():
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path} is a file, not a directory; cannot put a backup in it")
        try:
            make_private_dirs(path)
        except OSError as exc:
            raise StoreError(f"cannot create the directory {path}: {exc.strerror or exc}") from exc
        return path / f"{source.stem}-{time.strftime('%Y%m%d-%H%M%S')}.db"
    return path


def backup(source: Path, dest: Path | str, *, progress: Progress | None = None) -> BackupResult:
    """Copy the database at `source` to `dest`: a new file, or a directory to put it in.

    A directory is one that exists or a text `dest` ending in a path separator, created when
    missing (see `backup_destination`). Refuses (`ForeignDatabaseError`) a file that is not a
    contextchef database, before anything is created.
    """
    if source.is_file():
        require_ours(source, doing="back up")  # a foreign file would be copied as "schema 0"
    dest = backup_destination(source, dest)
    if dest.exists():
        raise StoreError(f"{dest} already exists; refusing to overwrite it")
    partial = dest.with_name(dest.name + ".partial")
    partial.unlink(missing_ok=True)
    with read_only(source) as conn, translate_errors(f"backing up {source}"):
        conn.execute("BEGIN")  # one read snapshot for the whole copy: consistent, no restarts
        version = schema_version(conn)
        try:
            copy_pages(conn, partial, progress)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        finally:
            conn.execute("ROLLBACK")
    partial.replace(dest)
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "schema_version": version,
        "written_by_supported_version": LATEST_SCHEMA_VERSION,
        "created_at": time.time(),
        "source": str(source),
        "bytes": dest.stat().st_size,
        "sha256": _sha256(dest),
        "integrity_check": "ok",
    }
    sidecar = manifest_path(dest)
    try:
        create_private_file(sidecar)
        sidecar.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        raise StoreError(f"cannot write the manifest {sidecar}: {exc.strerror or exc}") from exc
    log.info("backed up %s (schema %d) to %s", source, version, dest)
    return BackupResult(dest, manifest_path(dest), version, int(manifest["bytes"]))


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """A finished restore: where the previous files went, and the restored schema version."""

    path: Path
    moved_aside: Path | None
    schema_version: int


def _read_manifest(backup_file: Path) -> dict[str, Any] | None:
    sidecar = manifest_path(backup_file)
    if not sidecar.is_file():
        return None
    try:
        data = json.loads(sidecar.read_text())
    except (OSError, ValueError) as exc:
        raise StoreError(_bad_manifest(sidecar, str(exc))) from exc
    if not isinstance(data, dict):
        raise StoreError(_bad_manifest(sidecar, "it is not a JSON object"))
    if data.get("format") != MANIFEST_FORMAT:
        raise StoreError(_bad_manifest(sidecar, f"format {data.get('format')!r}"))
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise StoreError(_bad_manifest(sidecar, f"schema_version {version!r}"))
    digest = data.get("sha256")
    if digest is not None and not isinstance(digest, str):
        raise StoreError(_bad_manifest(sidecar, f"sha256 {digest!r}"))
    return data


def _bad_manifest(sidecar: Path, why: str) -> str:
    return (
        f"the backup manifest {sidecar} is not valid ({why}); nothing was changed. Make a new "
        "backup with `contextchef db backup`, or move the manifest away to restore from the "
        "file alone (its integrity is still checked)"
    )


def _verify_backup(backup_file: Path) -> int:
    """The backup's schema version, after the fence, digest and integrity checks."""
    manifest = _read_manifest(backup_file)
    location = f"the backup {backup_file}"
    if manifest is not None:
        found = int(manifest["schema_version"])
        if found > LATEST_SCHEMA_VERSION:
            raise SchemaTooNewError(found, LATEST_SCHEMA_VERSION, location=location)
        expected = manifest.get("sha256")
        if expected and expected != _sha256(backup_file):
            raise StoreCorruptError(f"{location} does not match the sha256 in its manifest")
    require_ours(backup_file, doing="restore from")
    with read_only(backup_file) as conn, translate_errors(f"reading {location}"):
        version = schema_version(conn)
        if version > LATEST_SCHEMA_VERSION:
            raise SchemaTooNewError(version, LATEST_SCHEMA_VERSION, location=location)
        result = [row[0] for row in conn.execute("PRAGMA integrity_check(20)")]
    if result != ["ok"]:
        raise StoreCorruptError(f"{location} failed integrity_check: {result}")
    return version


def restore(
    backup_file: Path, db_path: Path, *, progress: Progress | None = None, wait: float = 0.0
) -> RestoreResult:
    """Replace the database at `db_path` with `backup_file`, keeping the current files aside.

    Refuses (`StoreInUseError`) while other processes have the database open, unless they
    close within `wait` seconds.
    """
    if not backup_file.is_file():
        raise StoreError(f"no backup at {backup_file}; list them with `ls {backup_file.parent}`")
    version = _verify_backup(backup_file)
    make_private_dirs(db_path.parent)
    with exclusive(db_path, command="restore", wait=wait, replaces=True):
        real = real_path(db_path)  # through a symlink: the file itself is replaced, in its place
        _refuse_foreign_target(real)
        partial = real.with_name(real.name + ".restoring")
        partial.unlink(missing_ok=True)
        with read_only(backup_file) as conn, translate_errors(f"copying {backup_file}"):
            try:
                copy_pages(conn, partial, progress)
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
        current = side_files(real)
        aside: Path | None = None
        if current:
            aside = new_timestamped_dir(real, "before-restore")
            for file in current:
                shutil.move(file, aside / file.name)
            moved = [aside / file.name for file in current]
            write_receipt(aside, command="restore", database=real, files=moved)
        partial.replace(real)
    log.info("restored %s from %s; previous files in %s", db_path, backup_file, aside)
    return RestoreResult(db_path, aside, version)


def _refuse_foreign_target(db_path: Path) -> None:
    """Refuse to move aside a file that is clearly someone else's; a damaged one of ours goes."""
    if not db_path.is_file():
        return
    try:
        reason = foreign_reason(db_path)
    except sqlite3.DatabaseError:
        return  # damaged beyond telling: restoring over it is what restore is for
    except OSError as exc:
        raise StoreError(f"cannot read {db_path}: {exc.strerror or exc}") from exc
    if reason is not None and reason != "it is an empty file":
        raise foreign_error(db_path, reason, doing="restore over")
