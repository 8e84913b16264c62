"""Racing writers: no command the model was told succeeded may be lost or duplicated.

Across processes (4 `spawn`ed workers on one SQLite file or one filesystem root, a few dozen
operations each) and inside one process (`asyncio.gather` over `AsyncContextChef`, with a
synchronous backend in worker threads and with the async-native in-memory backend).
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contextchef import AsyncContextChef, prompts
from contextchef.store import FileSystemBackend, InMemoryBackend, Store
from contextchef.store.backends.inmemory import AsyncInMemoryBackend
from contextchef.store.backends.sqlite import SQLiteBackend
from tests.store import race_workers

PROCESSES = 4
URI = race_workers.URI


def _race(worker: Callable[..., None], kind: str, location: Path, amount: int) -> dict[int, Any]:
    """Run `worker` in PROCESSES spawned processes at once; their reports by worker number."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    out = ctx.Queue()
    procs = [
        ctx.Process(target=worker, args=(kind, str(location), amount, barrier, out, me))
        for me in range(PROCESSES)
    ]
    for proc in procs:
        proc.start()
    try:
        reports = dict(out.get(timeout=180) for _ in procs)
    finally:
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
    assert all(proc.exitcode == 0 for proc in procs), [proc.exitcode for proc in procs]
    return reports


def _content(kind: str, location: Path) -> str:
    entry = (
        Store(race_workers.open_backend(kind, str(location))).namespace("notes").get("shared.md")
    )
    assert entry is not None
    return entry.content


KINDS = ("sqlite", "filesystem")


@pytest.mark.parametrize("kind", KINDS)
def test_racing_creates_have_exactly_one_winner_per_path(kind: str, tmp_path: Path) -> None:
    paths = 30
    reports = _race(race_workers.create_paths, kind, tmp_path, paths)
    winners = sorted(index for won in reports.values() for index in won)
    assert winners == list(range(paths))  # each path won once, by exactly one process
    notes = Store(race_workers.open_backend(kind, str(tmp_path))).namespace("notes")
    for me, won in reports.items():
        for index in won:
            assert notes.get(f"p{index}.md").content == f"by {me}"


@pytest.mark.parametrize("kind", KINDS)
def test_racing_inserts_lose_no_acknowledged_line(kind: str, tmp_path: Path) -> None:
    Store(race_workers.open_backend(kind, str(tmp_path))).namespace("notes").put("shared.md", "")
    reports = _race(race_workers.insert_lines, kind, tmp_path, 15)
    lines = _content(kind, tmp_path).splitlines()
    acknowledged = [line for done in reports.values() for line in done]
    assert acknowledged, "no insert succeeded at all"
    assert sorted(lines) == sorted(acknowledged)


@pytest.mark.parametrize("kind", KINDS)
def test_racing_str_replaces_lose_no_acknowledged_edit(kind: str, tmp_path: Path) -> None:
    start = "".join(f"w{me}=0\n" for me in range(PROCESSES))
    Store(race_workers.open_backend(kind, str(tmp_path))).namespace("notes").put("shared.md", start)
    reports = _race(race_workers.replace_counter, kind, tmp_path, 12)
    assert any(reports.values()), "no str_replace succeeded at all"
    assert _content(kind, tmp_path) == "".join(f"w{me}={reports[me]}\n" for me in range(PROCESSES))


@pytest.mark.parametrize("kind", KINDS)
def test_racing_appends_lose_no_line(kind: str, tmp_path: Path) -> None:
    reports = _race(race_workers.append_lines, kind, tmp_path, 25)
    expected = sorted(f"w{me}-{index}" for me, count in reports.items() for index in range(count))
    assert sorted(_content(kind, tmp_path).splitlines()) == expected


# -- one process, many tasks -----------------------------------------------------------------


BACKENDS: dict[str, Callable[[Path], Any]] = {
    "sqlite-threads": lambda tmp: SQLiteBackend(tmp / "context.db", project="test:races"),
    "filesystem-threads": lambda tmp: FileSystemBackend(tmp / ".context", fsync=False),
    "memory-threads": lambda tmp: InMemoryBackend(),
    "async-native-memory": lambda tmp: AsyncInMemoryBackend(),
}


@pytest.fixture(params=sorted(BACKENDS))
def chef(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncContextChef:
    return AsyncContextChef(store=BACKENDS[str(request.param)](tmp_path), tools="unified")


async def test_gathered_creates_have_one_winner(chef: AsyncContextChef) -> None:
    replies = await asyncio.gather(
        *(
            chef.handle_tool("context", {"command": "create", "path": URI, "file_text": f"{i}"})
            for i in range(12)
        )
    )
    assert replies.count(prompts.created(URI)) == 1
    assert replies.count(prompts.entry_exists(URI)) == 11


async def test_gathered_inserts_and_str_replaces_lose_nothing(chef: AsyncContextChef) -> None:
    start = "".join(f"c{me}=0\n" for me in range(4))
    await chef.handle_tool("context", {"command": "create", "path": URI, "file_text": start})

    async def insert(index: int) -> str | None:
        arguments = {"command": "insert", "path": URI, "insert_line": 0, "insert_text": f"i{index}"}
        reply = await chef.handle_tool("context", arguments)
        if reply == prompts.inserted(URI, 1, 1):
            return f"i{index}"
        assert reply == prompts.changed_concurrently(URI), reply
        return None

    async def count(me: int) -> int:
        done = 0
        for _ in range(8):
            old, new = f"c{me}={done}\n", f"c{me}={done + 1}\n"
            arguments = {"command": "str_replace", "path": URI, "old_str": old, "new_str": new}
            reply = await chef.handle_tool("context", arguments)
            if reply == prompts.edited(URI):
                done += 1
            else:
                assert reply == prompts.changed_concurrently(URI), reply
        return done

    results = await asyncio.gather(*(insert(i) for i in range(40)), *(count(me) for me in range(4)))
    inserted = [line for line in results[:40] if isinstance(line, str)]
    counts = results[40:]
    view = await chef.handle_tool("context", {"command": "view", "path": URI})
    assert inserted and any(counts)
    body = [row.split("\t", 1)[-1] for row in view.splitlines()[1:]]
    for line in inserted:
        assert line in body, line
    for me, done in enumerate(counts):
        assert f"c{me}={done}" in body
    assert len([row for row in body if row.startswith("i")]) == len(inserted)


@pytest.mark.parametrize("kind", ["sqlite-threads", "filesystem-threads", "async-native-memory"])
async def test_gathered_memory_edits_lose_nothing(kind: str, tmp_path: Path) -> None:
    chef = AsyncContextChef(store=BACKENDS[kind](tmp_path), tools="unified", memory={})
    uri = "context://memory/log"
    await chef.handle_tool("context", {"command": "create", "path": uri, "file_text": "start\n"})

    async def insert(index: int) -> str | None:
        arguments = {"command": "insert", "path": uri, "insert_line": 0, "insert_text": f"m{index}"}
        reply = await chef.handle_tool("context", arguments)
        if reply == prompts.inserted(uri, 1, 1):
            return f"m{index}"
        assert reply == prompts.changed_concurrently(uri), reply
        return None

    done = [line for line in await asyncio.gather(*(insert(i) for i in range(24))) if line]
    entry = await chef.memory.get("log")
    assert entry is not None and done
    assert sorted(entry.value.splitlines()) == sorted([*done, "start"])
    assert entry.update_count == 1 + len(done)
