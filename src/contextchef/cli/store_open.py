"""Which store a `contextchef store …` command works on, and which namespaces it holds.

`--store PATH` is told apart by what is there:

- nothing given: the machine's default database (`context.db` in the data directory). A
  command that only reads gets an empty store when that file does not exist yet, so looking
  never creates it;
- an existing file: an SQLite context database (anything else is refused, untouched);
- an existing directory: a filesystem store (`<root>/<namespace>/<path>`, the layout the
  TypeScript reference writes), when it is empty or its visible entries are all namespace
  directories, at least one of them a standard one (memory, notes, vfs, archive). A directory
  of something else is refused: nothing is written into a source tree by mistake;
- a path that does not exist: refused for reading; created as an SQLite database by the
  commands that write (`put`, `import`).

`--project DIR` (a directory or an identity such as `git:abc…`) picks the project inside a
database; a filesystem store has no projects.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from contextchef.cli._common import fail
from contextchef.store.paths import validate_namespace

if TYPE_CHECKING:  # the backends load when a store is opened, not when the CLI starts
    from contextchef.store.store import Store

__all__ = [
    "STANDARD_NAMESPACES",
    "JsonOption",
    "OpenedStore",
    "ProjectOption",
    "StoreOption",
    "known_namespace",
    "looks_like_store",
    "namespaces",
    "opened_store",
]

STANDARD_NAMESPACES = ("archive", "memory", "notes", "vfs")
STORE_HINT = (
    "point --store at a context database file or at a store directory whose subdirectories are "
    "namespaces (memory/, notes/, vfs/, archive/)"
)


@dataclass(frozen=True, slots=True)
class OpenedStore:
    """A store, its backend, and how to name it to the user."""

    store: Store
    backend: Any
    description: str
    kind: str
    """`sqlite`, `filesystem`, or `empty` (the default database, not created yet)."""


def _valid_namespace(name: str) -> bool:
    try:
        validate_namespace(name)
    except Exception:
        return False
    return True


def looks_like_store(directory: Path) -> str | None:
    """Why `directory` is not a filesystem store, or None when it is one (or empty)."""
    visible = sorted(child for child in directory.iterdir() if not child.name.startswith("."))
    if not visible:
        return None
    files = [child.name for child in visible if not child.is_dir()]
    if files:
        return f"it holds files at the top ({', '.join(files[:3])}), not namespace directories"
    if not any(child.name in STANDARD_NAMESPACES for child in visible):
        names = ", ".join(child.name for child in visible[:3])
        return f"none of its directories ({names}) is a standard namespace"
    odd = [child.name for child in visible if not _valid_namespace(child.name)]
    if odd:
        return f"{odd[0]!r} is not a valid namespace name"
    return None


def _sqlite(path: Path, project: str | None) -> OpenedStore:
    from contextchef.store.backends.sqlite import SQLiteBackend
    from contextchef.store.store import Store

    backend = SQLiteBackend(path, project=project)
    return OpenedStore(Store(backend), backend, f"database {path}", "sqlite")


def _check_database(path: Path) -> None:
    from contextchef.store.backends.sqlite.maintenance import foreign_reason

    try:
        reason = foreign_reason(path)
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}", "check its permissions")
    except Exception:
        return  # SQLite but damaged: opening it reports the damage
    if reason is not None:
        fail(f"{path} is not a context database ({reason}); nothing was changed", STORE_HINT)


def _open(path: Path | None, project: str | None, *, create: bool) -> OpenedStore:
    from contextchef.store.backends.filesystem import FileSystemBackend
    from contextchef.store.backends.inmemory import InMemoryBackend
    from contextchef.store.datadir import default_database_path
    from contextchef.store.store import Store

    if path is None:
        default = default_database_path()
        if not default.exists() and not create:
            nothing = InMemoryBackend()
            empty = f"the default database {default} (not created yet: empty)"
            return OpenedStore(Store(nothing), nothing, empty, "empty")
        if default.exists():
            _check_database(default)
        return _sqlite(default, project)
    path = path.expanduser()
    if path.is_dir():
        problem = looks_like_store(path)
        if problem is not None:
            fail(f"{path} is a directory but not a context store: {problem}", STORE_HINT)
        if project is not None:
            fail(
                "--project applies to a database; a directory store has no projects",
                "drop --project, or point --store at a database file",
            )
        files = FileSystemBackend(path)
        return OpenedStore(Store(files), files, f"store directory {path}", "filesystem")
    if path.exists():
        _check_database(path)
        return _sqlite(path, project)
    if not create:
        fail(f"no store at {path}", f"check the path; {STORE_HINT}")
    if not path.parent.is_dir():
        fail(f"cannot create a database at {path}: {path.parent} does not exist")
    return _sqlite(path, project)


@contextmanager
def opened_store(
    path: Path | None, project: str | None = None, *, create: bool = False
) -> Iterator[OpenedStore]:
    """The store `--store`/`--project` name, closed on exit (see the module docstring)."""
    opened = _open(path, project, create=create)
    try:
        yield opened
    finally:
        close = getattr(opened.backend, "close", None)
        if callable(close):
            close()


def namespaces(opened: OpenedStore) -> list[str]:
    """The standard namespaces and every other one the store holds entries in, sorted."""
    from contextchef.store.backends.filesystem import FileSystemBackend
    from contextchef.store.backends.sqlite import SQLiteBackend

    found = set(STANDARD_NAMESPACES)
    backend = opened.backend
    if isinstance(backend, SQLiteBackend):
        pid = backend.project.id
        with backend.connection("listing namespaces") as conn:
            rows = conn.execute(
                "SELECT DISTINCT namespace FROM entries WHERE project_id = ?", (pid,)
            ).fetchall()
        found.update(str(row[0]) for row in rows)
    elif isinstance(backend, FileSystemBackend):
        root = Path(backend.root)
        if root.is_dir():
            found.update(
                child.name
                for child in root.iterdir()
                if child.is_dir()
                and not child.name.startswith(".")
                and _valid_namespace(child.name)
            )
    return sorted(found)


def known_namespace(opened: OpenedStore, ns: str, *, create: bool = False) -> str:
    """`ns` when the store knows it (or `create` allows a new one); else a one-line error
    naming the namespaces it knows, so a typo never creates a namespace."""
    known = namespaces(opened)
    if ns not in known and not create:
        fail(
            f"unknown namespace {ns!r} in {opened.description}",
            f"known: {', '.join(known)}",
        )
    return ns


StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="A context database file or a store directory (default: the machine's database).",
    ),
]
ProjectOption = Annotated[
    str | None,
    typer.Option(
        "--project",
        help="The project inside the database: a directory, or an identity such as git:<sha>.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
