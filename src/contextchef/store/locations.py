"""The places `copy_store` copies between: a SQLite file, a PostgreSQL schema, a directory.

`open_location(spec)` reads what a user types after `--from` / `--to`:

- `postgresql://…` (or `postgres://…`): a PostgreSQL database; the URI's
  `contextchef_schema=` parameter chooses the schema (default `contextchef`).
- a path to a SQLite file: an existing file, or a new one named `*.db`, `*.sqlite` or
  `*.sqlite3`.
- any other path: a directory. A directory written by `db copy` holds one sub-directory per
  project (named after its identity) and a `contextchef-projects.json` manifest mapping each
  sub-directory to its identity; every namespace there is stored as JSON envelopes, so the
  meta of `vfs/` and `archive/` entries survives too (open one project with
  `FileSystemBackend(dir / sub, layouts={"vfs": "json", "archive": "json"})`). A directory
  without the manifest is read as one `FileSystemBackend` root (its own layouts) holding the
  project `plain_project` (default: the working directory's project); it cannot be a target
  unless it is empty.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextchef.errors import ConfigError, InvalidPathError, StoreError
from contextchef.store.backend import StorageBackend
from contextchef.store.backends.filesystem.fileio import make_private_dirs
from contextchef.store.copy import Location
from contextchef.store.paths import validate_namespace

__all__ = [
    "MANIFEST",
    "DirectoryLocation",
    "PostgresLocation",
    "SQLiteLocation",
    "open_location",
]

MANIFEST = "contextchef-projects.json"
"""The file naming the project of each sub-directory of a directory written by `db copy`."""

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_SQLITE_MAGIC = b"SQLite format 3\x00"
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def open_location(spec: str, *, plain_project: str | None = None) -> Location:
    """The location `spec` names (see the module docstring); `ConfigError` when it names none."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError("a location must be a PostgreSQL DSN or a path")
    if spec.startswith(("postgresql://", "postgres://")):
        return PostgresLocation(spec)
    if "://" in spec:
        from contextchef.store.backends.postgres._common import redact

        raise ConfigError(f"{redact(spec)!r} is neither a postgresql:// DSN nor a path")
    path = Path(spec).expanduser()
    if path.is_file():
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
        if head not in (b"", _SQLITE_MAGIC):
            raise ConfigError(f"{path} is a file but not a SQLite database")
        return SQLiteLocation(path)
    if not path.exists() and path.suffix in SQLITE_SUFFIXES:
        return SQLiteLocation(path)
    return DirectoryLocation(path, plain_project=plain_project)


class SQLiteLocation:
    """Every project of one SQLite database file (created when it is a target)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = str(path)
        self._cache: dict[str, list[str]] | None = None

    def _inventory(self) -> dict[str, list[str]]:
        if self._cache is None:
            self._cache = self._read_inventory()
        return self._cache

    def _read_inventory(self) -> dict[str, list[str]]:
        if not self.path.is_file():
            raise StoreError(f"no SQLite database at {self.path}")
        from contextchef.store.backends.sqlite import SQLiteBackend

        backend = SQLiteBackend(self.path, project="contextchef:inventory")
        try:
            with backend.connection(f"listing the projects of {self.path}") as conn:
                rows = conn.execute(
                    "SELECT p.identity, e.namespace FROM entries AS e "
                    "JOIN projects AS p ON p.id = e.project_id GROUP BY 1, 2 "
                    "UNION SELECT p.identity, m.namespace FROM memories AS m "
                    "JOIN projects AS p ON p.id = m.project_id "
                    "WHERE m.superseded_by IS NULL AND m.deleted_at IS NULL GROUP BY 1, 2"
                ).fetchall()
        finally:
            backend.close()
        return _grouped(rows)

    def projects(self) -> list[str]:
        return sorted(self._inventory())

    def namespaces(self, project: str) -> list[str]:
        return self._inventory().get(project, [])

    @contextmanager
    def open(self, project: str) -> Iterator[StorageBackend]:
        from contextchef.store.backends.sqlite import SQLiteBackend

        backend = SQLiteBackend(self.path, project=project)
        try:
            yield backend
        finally:
            backend.close()


class PostgresLocation:
    """Every project of one PostgreSQL schema."""

    def __init__(self, dsn: str) -> None:
        from contextchef.store.backends.postgres._common import redact, split_dsn

        if "project" in split_dsn(dsn)[1]:
            raise ConfigError(
                "a copy takes every project of the schema: drop contextchef_project from the "
                "DSN (choose projects with --project)"
            )
        self.dsn = dsn
        self.description = redact(dsn)
        self._cache: dict[str, list[str]] | None = None

    def _inventory(self) -> dict[str, list[str]]:
        if self._cache is None:
            with self._backend("contextchef:inventory") as backend:
                self._cache = _grouped(backend.inventory())
        return self._cache

    def projects(self) -> list[str]:
        return sorted(self._inventory())

    def namespaces(self, project: str) -> list[str]:
        return self._inventory().get(project, [])

    @contextmanager
    def _backend(self, project: str) -> Iterator[Any]:
        from contextchef.store.backends.postgres import PostgresBackend

        backend = PostgresBackend(self.dsn, project=project, pool_size=1)
        try:
            yield backend
        finally:
            backend.close()

    def open(self, project: str) -> Any:
        return self._backend(project)


class DirectoryLocation:
    """Projects as sub-directories under a manifest, or one plain `FileSystemBackend` root."""

    def __init__(self, root: Path, *, plain_project: str | None = None) -> None:
        self.root = root
        self.description = str(root)
        self._plain_project = plain_project

    @property
    def _manifest(self) -> Path:
        return self.root / MANIFEST

    def _projects(self) -> dict[str, str] | None:
        """Identity -> sub-directory name, from the manifest; None for a plain root."""
        try:
            data = json.loads(self._manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read the manifest {self._manifest}: {exc}") from exc
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            raise StoreError(f"{self._manifest} is not a contextchef project manifest")
        return {str(identity): str(sub) for identity, sub in projects.items()}

    def _plain(self) -> bool:
        if self._projects() is not None:
            return False
        if not self.root.is_dir():
            if self.root.exists():
                raise ConfigError(f"{self.root} is not a directory")
            return False
        return any(not child.name.startswith(".") for child in self.root.iterdir())

    def _plain_identity(self) -> str:
        from contextchef.store.backends.postgres._common import project_identity

        return project_identity(self._plain_project)

    def projects(self) -> list[str]:
        if not self.root.is_dir():
            raise StoreError(f"no directory at {self.root}")
        if self._plain():
            return [self._plain_identity()]
        return sorted(self._projects() or {})

    def namespaces(self, project: str) -> list[str]:
        directory = self._directory(project, create=False)
        if directory is None or not directory.is_dir():
            return []
        found = []
        for child in sorted(directory.iterdir()):
            if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
                try:
                    found.append(validate_namespace(child.name))
                except InvalidPathError:
                    continue  # not a namespace the store could have written
        return found

    def _directory(self, project: str, *, create: bool) -> Path | None:
        if self._plain():
            if project == self._plain_identity():
                return self.root
            if create:
                raise ConfigError(
                    f"{self.root} is a plain FileSystemBackend directory (no {MANIFEST}) of "
                    f"project {self._plain_identity()}, not {project}; copy into a new or "
                    "empty directory instead"
                )
            return None
        projects = self._projects() or {}
        if project in projects:
            return self.root / projects[project]
        if not create:
            return None
        projects[project] = _slug(project, set(projects.values()))
        make_private_dirs(self.root.absolute())  # 0700, missing parents too, whatever the umask
        manifest = {"format": 1, "projects": dict(sorted(projects.items()))}
        temporary = self._manifest.with_name(f".{MANIFEST}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", "utf-8")
        temporary.replace(self._manifest)
        return self.root / projects[project]

    @contextmanager
    def open(self, project: str) -> Iterator[StorageBackend]:
        from contextchef.store.backends.filesystem import FileSystemBackend

        plain = self._plain()
        directory = self._directory(project, create=True)
        assert directory is not None
        layouts: dict[str, Any] = {} if plain else {"vfs": "json", "archive": "json"}
        yield FileSystemBackend(directory, layouts=layouts)


def _slug(identity: str, taken: set[str]) -> str:
    """A directory name for `identity`: its readable characters, unique among `taken`."""
    base = _SLUG.sub("_", identity).strip("._") or "project"
    name = base[:80]
    if name in taken:
        name = f"{name[:70]}-{hashlib.sha256(identity.encode()).hexdigest()[:8]}"
    return name


def _grouped(rows: Any) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {}
    for project, ns in rows:
        found.setdefault(str(project), set()).add(str(ns))
    return {project: sorted(names) for project, names in found.items()}
