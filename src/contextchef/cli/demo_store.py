"""Where `contextchef demo` keeps what its agent stores, and how the user gets rid of it.

The embedded default database (under the demo's own project identity, so a real project's
memory is never touched), a SQLite file the user names, or `:memory:` (nothing written).
A `--store` that is a folder or a file of something else is refused before anything is
created next to it; `forget_demo` deletes the demo's entries and nothing else.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from contextchef.cli._common import how_to_run
from contextchef.errors import ForeignDatabaseError, StoreError
from contextchef.memory.turns import TURN_NAMESPACE
from contextchef.store import StorageBackend
from contextchef.store.backends import InMemoryBackend, SQLiteBackend

DEMO_PROJECT = "demo:contextchef"
"""The project identity the demo writes under, so it never touches a real project's memory."""


@dataclass(frozen=True)
class DemoStore:
    """The backend the demo runs on, and how to describe it, explore it and remove it.

    `explore` and `removal` are shell commands printed for the user to type as they are (None
    for `:memory:`, where nothing is kept); `explore` lists what the demo stored.
    """

    backend: StorageBackend
    where: str
    removal: str | None
    explore: str | None = None

    def close(self) -> None:
        """Close a SQLite backend (an in-memory one has nothing to close)."""
        if isinstance(self.backend, SQLiteBackend):
            self.backend.close()


def open_demo_store(spec: str | None) -> DemoStore:
    """The embedded default database (None), `:memory:` (nothing written), or a SQLite file."""
    if spec == ":memory:":
        return DemoStore(InMemoryBackend(), "in memory (:memory:): nothing is written", None)
    if spec is not None:
        _refuse_non_database(Path(spec))
    backend = SQLiteBackend(spec, project=DEMO_PROJECT)
    path = backend.path
    contextchef = how_to_run()
    explore = f"{contextchef} store ls --project {DEMO_PROJECT}"
    if spec is None:
        # the default database holds the user's other projects too: forget only the demo's
        removal = f"{contextchef} demo --forget (the demo's entries only; your projects stay)"
        where = f"the default database {path} (project {DEMO_PROJECT})"
        return DemoStore(backend, where, removal, explore)
    quoted = shlex.quote(str(path))
    removal = "rm -f " + " ".join(
        shlex.quote(f"{path}{suffix}") for suffix in ("", "-wal", "-shm", ".lock")
    )
    explore += f" --store {quoted}"
    return DemoStore(backend, f"the database {path} (project {DEMO_PROJECT})", removal, explore)


_SQLITE_HEADER = b"SQLite format 3\x00"


def _refuse_non_database(path: Path) -> None:
    """Refuse, before anything is opened or created next to it, a `--store` that is a folder
    or a file of something other than SQLite (the user's file stays as it was)."""
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    if path.is_file() and path.stat().st_size > 0:
        with path.open("rb") as handle:
            if handle.read(len(_SQLITE_HEADER)) != _SQLITE_HEADER:
                raise ForeignDatabaseError(f"{path} is not a SQLite database; it was left as is")


DEMO_NAMESPACES = ("memory", "notes", "vfs", "archive", TURN_NAMESPACE)
"""The namespaces the demo writes (memory's turn counter included): `forget_demo` empties them
for the demo's project."""


def forget_demo(store: DemoStore) -> int:
    """Delete every entry the demo stored (its project only); how many were deleted."""
    deleted = 0
    for ns in DEMO_NAMESPACES:
        for listed in store.backend.list(ns):
            deleted += bool(store.backend.delete(ns, listed.path))
    return deleted


__all__ = ["DEMO_NAMESPACES", "DEMO_PROJECT", "DemoStore", "forget_demo", "open_demo_store"]
