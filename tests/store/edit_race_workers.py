"""Worker processes for `test_edit_races.py` (a module of its own, so `spawn` children import
it without pytest or the test module).

Each worker opens its own backend over the shared location (a directory, or a PostgreSQL
schema), waits at the barrier so all of them start together, runs its commands through the
`context` tool and puts what it was told back on the queue: the acknowledgements are what must
never be lost, and no command may be refused for contention.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from contextchef import prompts
from contextchef.retrieval.context_tool import ContextTool
from contextchef.store import FileSystemBackend, Store
from contextchef.store.backends.sqlite import SQLiteBackend

DSN = os.environ.get(
    "CONTEXTCHEF_TEST_PG_DSN",
    "postgresql://postgres@127.0.0.1:5432/test?options=-c%20synchronous_commit%3Doff",
)
"""`tests.contract.pg.DSN`, which this module cannot import (it imports pytest)."""
PROJECT = "test:edit-races"
URI = "context://notes/shared.md"
RENAMED = ("context://notes/a.md", "context://notes/b.md")


def open_backend(kind: str, location: str) -> Any:
    if kind == "sqlite":
        return SQLiteBackend(Path(location) / "context.db", project=PROJECT)
    if kind == "filesystem":
        return FileSystemBackend(Path(location) / ".context", fsync=False)
    from contextchef.store.backends.postgres import PostgresBackend

    return PostgresBackend(DSN, schema=location, project=PROJECT, pool_size=1)


def step_counter(kind: str, location: str, count: int, barrier: Any, out: Any, me: int) -> None:
    """Step this worker's own line `w<me>=<n>` of the shared entry `count` times with
    str_replace; report (steps acknowledged, replies that were anything else)."""
    backend = open_backend(kind, location)
    tool = ContextTool(Store(backend))
    barrier.wait(120)
    done, other = 0, []
    for _ in range(count):
        old, new = f"w{me}={done}\n", f"w{me}={done + 1}\n"
        reply = tool.run({"command": "str_replace", "path": URI, "old_str": old, "new_str": new})
        if reply == prompts.edited(URI):
            done += 1
        else:
            other.append(reply)
    getattr(backend, "close", lambda: None)()
    out.put((me, (done, other)))


def rename_back_and_forth(
    kind: str, location: str, count: int, barrier: Any, out: Any, me: int
) -> None:
    """Rename a.md to b.md and back, `count` times; report the replies that were not
    `renamed` (there must be none: nobody else moves or deletes the entry)."""
    backend = open_backend(kind, location)
    tool = ContextTool(Store(backend))
    barrier.wait(120)
    other = []
    for index in range(count):
        old, new = RENAMED if index % 2 == 0 else RENAMED[::-1]
        reply = tool.run({"command": "rename", "path": old, "new_path": new})
        if reply != prompts.renamed(old, new):
            other.append(reply)
    getattr(backend, "close", lambda: None)()
    out.put((me, (count, other)))


def insert_wherever(kind: str, location: str, count: int, barrier: Any, out: Any, me: int) -> None:
    """Insert `count` lines at the top of the renamed entry, at whichever name it has now;
    report the acknowledged lines."""
    backend = open_backend(kind, location)
    tool = ContextTool(Store(backend))
    barrier.wait(120)
    acknowledged, other = [], []
    for index in range(count):
        line = f"e{me}-{index}"
        for uri in RENAMED * 50:  # the entry moves under us: try its names until one holds it
            arguments = {"command": "insert", "path": uri, "insert_line": 0, "insert_text": line}
            reply = tool.run(arguments)
            if reply == prompts.inserted(uri, 1, 1):
                acknowledged.append(line)
                break
            if not reply.startswith("Error: nothing is stored at"):
                other.append(reply)
                break
    getattr(backend, "close", lambda: None)()
    out.put((me, (acknowledged, other)))
