"""Worker processes for `test_races.py` (a module of its own, so `spawn` children import it).

Each worker opens its own backend over the shared location, waits at the barrier so all of them
start together, runs its commands through the `context` tool (or the store), and puts what it
was told back on the queue: the model-facing acknowledgements are what must never be lost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contextchef import prompts
from contextchef.retrieval.context_tool import ContextTool
from contextchef.store import FileSystemBackend, Store
from contextchef.store.backends.sqlite import SQLiteBackend

URI = "context://notes/shared.md"


def open_backend(kind: str, location: str) -> Any:
    if kind == "sqlite":
        return SQLiteBackend(Path(location) / "context.db", project="test:races")
    return FileSystemBackend(Path(location) / ".context", fsync=False)


def create_paths(kind: str, location: str, paths: int, barrier: Any, out: Any, me: int) -> None:
    """Create every `notes/p<i>.md`; report the paths this worker was told it created."""
    tool = ContextTool(Store(open_backend(kind, location)))
    barrier.wait(120)
    won = []
    for index in range(paths):
        uri = f"context://notes/p{index}.md"
        reply = tool.run({"command": "create", "path": uri, "file_text": f"by {me}"})
        if reply == prompts.created(uri):
            won.append(index)
        else:
            assert reply == prompts.entry_exists(uri), reply
    out.put((me, won))


def insert_lines(kind: str, location: str, count: int, barrier: Any, out: Any, me: int) -> None:
    """Insert `count` lines at the top of the shared entry; report the acknowledged ones."""
    tool = ContextTool(Store(open_backend(kind, location)))
    barrier.wait(120)
    acknowledged = []
    for index in range(count):
        line = f"w{me}-{index}"
        reply = tool.run(
            {"command": "insert", "path": URI, "insert_line": 0, "insert_text": line + "\n"}
        )
        if reply == prompts.inserted(URI, 1, 1):
            acknowledged.append(line)
        else:
            assert reply == prompts.changed_concurrently(URI), reply
    out.put((me, acknowledged))


def replace_counter(kind: str, location: str, count: int, barrier: Any, out: Any, me: int) -> None:
    """Step this worker's own line `w<me>=<n>` of the shared entry `count` times with
    str_replace; report how many steps were acknowledged."""
    tool = ContextTool(Store(open_backend(kind, location)))
    barrier.wait(120)
    done = 0
    for _ in range(count):
        reply = tool.run(
            {
                "command": "str_replace",
                "path": URI,
                "old_str": f"w{me}={done}\n",
                "new_str": f"w{me}={done + 1}\n",
            }
        )
        if reply == prompts.edited(URI):
            done += 1
        else:
            assert reply == prompts.changed_concurrently(URI), reply
    out.put((me, done))


def append_lines(kind: str, location: str, count: int, barrier: Any, out: Any, me: int) -> None:
    """Append `count` lines to the shared entry through the store."""
    notes = Store(open_backend(kind, location)).namespace("notes")
    barrier.wait(120)
    for index in range(count):
        notes.append("shared.md", f"w{me}-{index}\n")
    out.put((me, count))
