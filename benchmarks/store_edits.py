"""Benchmark of concurrent edits and of the single-operation hot paths they must not slow down.

Two parts, both through `Store` / the `context` tool as an application uses them:

- **single**: one `put`, `get` and `append` of a small entry on SQLite and on PostgreSQL, in µs
  per operation (median of interleaved rounds, each round timing the three in turn), so a
  change to the write paths can be compared with the code before it, run the same way.
- **edits**: 6 spawned processes × 120 `str_replace` commands of the `context` tool on one
  shared entry (each process steps its own counter line), on SQLite, the filesystem and
  PostgreSQL: edits per second over the wall time, how many were refused (`changed
  concurrently`) and whether the final text holds every acknowledged edit (`lost`).

Run: `.venv/bin/python benchmarks/store_edits.py [--part single edits] [--rounds 7]
[--dsn DSN]`. To compare with another checkout, run it with `PYTHONPATH=<that>/src` as well,
alternately. Writes `benchmarks/results/store_edits.json` (git-ignored); every PostgreSQL
schema it makes is dropped.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextchef import prompts
from contextchef.retrieval.context_tool import ContextTool
from contextchef.store import FileSystemBackend, Store
from contextchef.store.backends.sqlite import SQLiteBackend

RESULTS = Path(__file__).parent / "results" / "store_edits.json"
DSN = os.environ.get("CONTEXTCHEF_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")
URI = "context://notes/shared.md"
PROCESSES = 6
EDITS = 120
OPS = 300  # per operation per round in the single part


def open_backend(kind: str, location: str) -> Any:
    if kind == "sqlite":
        return SQLiteBackend(Path(location) / "context.db", project="bench:edits")
    if kind == "filesystem":
        return FileSystemBackend(Path(location) / ".context", fsync=False)
    from contextchef.store.backends.postgres import PostgresBackend

    return PostgresBackend(DSN, schema=location, project="bench:edits", pool_size=2)


@contextmanager
def location(kind: str) -> Iterator[str]:
    """A fresh place for `kind`: a temporary directory, or a PostgreSQL schema dropped after."""
    if kind != "postgres":
        with tempfile.TemporaryDirectory() as tmp:
            yield tmp
        return
    import psycopg

    schema = f"bench_edits_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        yield schema
    finally:
        with psycopg.connect(DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


# -- single operations ---------------------------------------------------------------------


def per_op(run: Callable[[int], object]) -> float:
    start = time.perf_counter()
    for index in range(OPS):
        run(index)
    return (time.perf_counter() - start) / OPS * 1e6


def single(kind: str, rounds: int) -> dict[str, float]:
    """Median µs per put / get / append over `rounds` interleaved rounds."""
    times: dict[str, list[float]] = {"put": [], "get": [], "append": []}
    with location(kind) as where:
        backend = open_backend(kind, where)
        notes = Store(backend).namespace("notes")
        body = "x" * 200
        for index in range(OPS):
            notes.put(f"p{index}.md", body)
        for _ in range(rounds):
            times["put"].append(per_op(lambda i: notes.put(f"p{i}.md", body)))
            times["get"].append(per_op(lambda i: notes.get(f"p{i}.md")))
            times["append"].append(per_op(lambda i: notes.append(f"a{i % 20}.md", "line\n")))
        backend.close()
    return {name: round(statistics.median(values), 1) for name, values in times.items()}


# -- concurrent edits ----------------------------------------------------------------------


def edit_worker(kind: str, where: str, barrier: Any, out: Any, me: int) -> None:
    backend = open_backend(kind, where)
    tool = ContextTool(Store(backend))
    barrier.wait(120)
    done = refused = 0
    for _ in range(EDITS):
        old, new = f"w{me}={done}\n", f"w{me}={done + 1}\n"
        reply = tool.run({"command": "str_replace", "path": URI, "old_str": old, "new_str": new})
        if reply == prompts.edited(URI):
            done += 1
        else:
            assert reply == prompts.changed_concurrently(URI), reply
            refused += 1
    getattr(backend, "close", lambda: None)()
    out.put((me, done, refused))


def edits(kind: str) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    with location(kind) as where:
        setup = open_backend(kind, where)
        notes = Store(setup).namespace("notes")
        notes.put("shared.md", "".join(f"w{me}=0\n" for me in range(PROCESSES)))
        barrier = ctx.Barrier(PROCESSES + 1)
        out = ctx.Queue()
        procs = [
            ctx.Process(target=edit_worker, args=(kind, where, barrier, out, me))
            for me in range(PROCESSES)
        ]
        for proc in procs:
            proc.start()
        barrier.wait(120)
        start = time.perf_counter()
        reports = {
            me: (done, refused) for me, done, refused in (out.get(timeout=600) for _ in procs)
        }
        wall = time.perf_counter() - start
        for proc in procs:
            proc.join(30)
        entry = notes.get("shared.md")
        getattr(setup, "close", lambda: None)()
    expected = "".join(f"w{me}={reports[me][0]}\n" for me in range(PROCESSES))
    acknowledged = sum(done for done, _ in reports.values())
    return {
        "acknowledged": acknowledged,
        "refused": sum(refused for _, refused in reports.values()),
        "lost": entry is None or entry.content != expected,
        "seconds": round(wall, 2),
        "edits_per_s": round(acknowledged / wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", nargs="+", default=["single", "edits"])
    parser.add_argument("--kinds", nargs="+", default=["sqlite", "filesystem", "postgres"])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    results: dict[str, Any] = {}
    if "single" in args.part:
        for kind in (k for k in args.kinds if k != "filesystem"):
            results[f"single/{kind}"] = single(kind, args.rounds)
            print(f"single {kind}: {results[f'single/{kind}']} µs/op", flush=True)
    if "edits" in args.part:
        for kind in args.kinds:
            results[f"edits/{kind}"] = edits(kind)
            print(f"edits {kind}: {results[f'edits/{kind}']}", flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
