"""Worker processes for the reliability tests, run as `python workers.py MODE ARGS…`.

Each mode prints JSON lines on stdout so the test can tell exactly which writes were
acknowledged (committed) before anything happened to the process.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def _wait_for(go: Path) -> None:
    while not go.exists():
        time.sleep(0.005)


def write_and_read(db: str, worker: str, seconds: str, go: str) -> None:
    """Write entries and read others' for a bounded time; print every acknowledged path."""
    from contextchef.store.backend import StoredEntry
    from contextchef.store.backends.sqlite import SQLiteBackend

    backend = SQLiteBackend(db, project="test:reliability")
    _wait_for(Path(go))
    deadline = time.monotonic() + float(seconds)
    count = reads = 0
    while time.monotonic() < deadline:
        path = f"w{worker}/{count:06d}"
        if count % 10 == 9:
            with backend.batch():
                backend.write("notes", path, StoredEntry(f"worker {worker} entry {count}"))
                backend.append("archive", f"w{worker}.log", f"{count}\n")
        else:
            backend.write("notes", path, StoredEntry(f"worker {worker} entry {count}"))
        print(json.dumps({"ack": path}), flush=True)
        count += 1
        reads += len(backend.list("notes", "w"))
        backend.search("notes", f"worker {worker}", limit=5)
    print(json.dumps({"done": count, "reads": reads}), flush=True)


def write_then_hang(db: str) -> None:
    """Acknowledge committed writes, then stop inside an open batch and wait to be killed."""
    from contextchef.store.backend import StoredEntry
    from contextchef.store.backends.sqlite import SQLiteBackend

    backend = SQLiteBackend(db, project="test:reliability")
    for i in range(200):
        backend.write("notes", f"acked/{i:04d}", StoredEntry(f"committed {i}" * 20))
        print(json.dumps({"ack": f"acked/{i:04d}"}), flush=True)
    with backend.batch():
        for i in range(500):
            backend.write("notes", f"pending/{i:04d}", StoredEntry("never committed" * 50))
        print(json.dumps({"in_transaction": True}), flush=True)
        time.sleep(60)


def migrate(db: str, go: str) -> None:
    """Wait for the go file, then migrate; print the steps this process applied."""
    from contextchef.store.backends.sqlite.connection import connect
    from contextchef.store.backends.sqlite.migrations import apply_migrations

    conn = connect(db)
    _wait_for(Path(go))
    applied = apply_migrations(conn, location=db)
    print(json.dumps({"applied": applied}), flush=True)


def hold_open(db: str, stop: str) -> None:
    """Open a backend, write once, say so, and keep it open until `stop` exists (30 s at most)."""
    from contextchef.store.backend import StoredEntry
    from contextchef.store.backends.sqlite import SQLiteBackend

    with SQLiteBackend(db, project="test:holder") as backend:
        backend.write("notes", "holder", StoredEntry("held open"))
        print(json.dumps({"ready": True}), flush=True)
        deadline = time.monotonic() + 30
        while not Path(stop).exists() and time.monotonic() < deadline:
            time.sleep(0.01)


def create_until(db: str, stop: str) -> None:
    """Create entries one by one until `stop` exists (60 s at most); print each acknowledged one.

    A refused create (the entry exists) is a failure: every path is new.
    """
    from contextchef.store.backend import StoredEntry
    from contextchef.store.backends.sqlite import SQLiteBackend

    with SQLiteBackend(db, project="test:identity") as backend:
        print(json.dumps({"ready": True}), flush=True)
        deadline = time.monotonic() + 60
        count = 0
        while not Path(stop).exists() and time.monotonic() < deadline:
            path = f"c/{count:06d}"
            if not backend.create("notes", path, StoredEntry(f"created {count}")):
                raise SystemExit(f"{path} already existed")
            print(json.dumps({"ack": path}), flush=True)
            count += 1
        print(json.dumps({"done": count}), flush=True)


def _store_only() -> None:
    """Import `contextchef`'s subpackages without running its `__init__` (the chef and the
    adapters): a worker that only opens a database starts in half the time."""
    import importlib.util
    import types

    spec = importlib.util.find_spec("contextchef")
    assert spec is not None and spec.submodule_search_locations is not None
    package = types.ModuleType("contextchef")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["contextchef"] = package


def old_build(db: str, version: str, stop: str) -> None:
    """Open `db` as a build whose newest schema is `version` (the chain cut there), say so, and
    hold it open until `stop` exists (30 s at most). A refusal is printed instead.

    Only opening is simulated: today's backend code needs today's schema to read or write.
    """
    _store_only()
    from contextchef.errors import ContextChefError
    from contextchef.store.backends.sqlite import migrations

    migrations.LATEST_SCHEMA_VERSION = int(version)
    migrations.MIGRATIONS = migrations.MIGRATIONS[: int(version)]
    from contextchef.store.backends.sqlite import SQLiteBackend

    try:
        backend = SQLiteBackend(db, project="test:old-build")
    except ContextChefError as exc:
        print(json.dumps({"refused": type(exc).__name__, "message": str(exc)}), flush=True)
        return
    with backend:
        print(json.dumps({"ready": True, "pid": os.getpid()}), flush=True)
        deadline = time.monotonic() + 30
        while not Path(stop).exists() and time.monotonic() < deadline:
            time.sleep(0.01)


if __name__ == "__main__":
    modes = {"write_and_read": write_and_read, "write_then_hang": write_then_hang}
    modes["migrate"] = migrate
    modes["hold_open"] = hold_open
    modes["create_until"] = create_until
    modes["old_build"] = old_build
    modes[sys.argv[1]](*sys.argv[2:])
