"""`contextchef mcp` latency: a `view` of a 1 MB entry over stdio, with the SDK's own client.

The store is a fresh SQLite file holding one 1 MB entry (13k lines). A `contextchef mcp`
subprocess serves it; the client times `view` of the first page and of a page near the end
(`view_range`), round trip included. The floor is the same call through `handle_tool` in this
process on the same file, measured in the same run, so the ratio shows what MCP and the process
boundary add. The issue's bar: at most 50 ms for the view over stdio.

(Not named mcp.py: a script of that name would shadow the `mcp` package it imports.)

Usage: python benchmarks/mcp_stdio.py [--repeats 50]
Writes benchmarks/results/mcp.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from contextchef import ContextChef, SQLiteBackend

RESULTS = Path(__file__).parent / "results"
PROJECT = "bench:mcp"
LINE = "the parser returns tokens for each line of input and the test checks them"
LINES = 1024 * 1024 // (len(LINE) + 7)


def entry() -> str:
    """1 MB (to a line) of numbered lines."""
    return "".join(f"{index:05d} {LINE}\n" for index in range(LINES))


def calls() -> dict[str, dict[str, Any]]:
    return {
        "view_first_page": {"command": "view", "path": "context://notes/big.txt"},
        "view_near_end": {
            "command": "view",
            "path": "context://notes/big.txt",
            "view_range": [LINES - 400, -1],
        },
    }


def in_process(store: Path, repeats: int) -> dict[str, float]:
    backend = SQLiteBackend(store, project=PROJECT)
    chef = ContextChef(store=backend, memory={})
    out = {}
    for name, arguments in calls().items():
        chef.handle_tool("context", arguments)
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            chef.handle_tool("context", arguments)
            samples.append(time.perf_counter() - start)
        out[name] = statistics.median(samples) * 1000
    backend.close()
    return out


async def over_stdio(store: Path, home: Path, repeats: int) -> dict[str, float]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "contextchef", "mcp", "--store", str(store), "--project", PROJECT],
        env={"CONTEXTCHEF_HOME": str(home)},
    )
    out: dict[str, float] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, arguments in calls().items():
            result = await session.call_tool("context", arguments)
            assert not result.is_error, result
            samples = []
            for _ in range(repeats):
                start = time.perf_counter()
                await session.call_tool("context", arguments)
                samples.append(time.perf_counter() - start)
            out[name] = statistics.median(samples) * 1000
            out[f"{name}_min"] = min(samples) * 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        os.environ["CONTEXTCHEF_HOME"] = str(root / "home")
        store = root / "bench.db"
        backend = SQLiteBackend(store, project=PROJECT)
        ContextChef(store=backend).store.namespace("notes").put("big.txt", entry())
        backend.close()
        floor = in_process(store, args.repeats)
        stdio = anyio.run(over_stdio, store, root / "home", args.repeats)
    report: dict[str, Any] = {"entry_bytes": len(entry().encode()), "floor_ms": floor}
    report["stdio_ms"] = stdio
    for name in calls():
        ratio = stdio[name] / floor[name]
        report[f"{name}_over_floor"] = ratio
        print(
            f"{name:16} over stdio {stdio[name]:6.2f} ms (min {stdio[name + '_min']:.2f}), "
            f"in process {floor[name]:6.2f} ms, x{ratio:.2f}; bar 50 ms"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mcp.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
