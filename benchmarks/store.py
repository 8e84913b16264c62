"""Store benchmark: put / get / list / search at 1k and 10k entries, per backend, in µs per op.

For the filesystem backend the floor is measured in the same run: the same bytes written with a
plain `open().write()` + `os.replace` (and, as a second floor, the same plus the `fsync` of file
and directory that a durable write needs). Targets from the issue: FileSystemBackend put within
1.5x its floor; InMemoryBackend get within 2 µs; InMemoryBackend put (a small entry, through
`Store`) within 5 µs.

The in-memory hot paths are also timed on their own (`hot_paths`): `Store.put` / `Store.get` of a
small entry against a floor measured in the same run (a plain dict assignment of a copy of the
meta, and a plain dict lookup), as medians of interleaved rounds.

Run: python benchmarks/store.py [--sizes 1000 10000] [--hot-only] [--rounds 15]
         [--out benchmarks/results/store.json]
     python benchmarks/store.py --offload   (only the 10 MiB offload, ours and the reference's;
     writes benchmarks/results/store_offload.json)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contextchef.store import FileSystemBackend, InMemoryBackend, Store, StoredEntry
from contextchef.store.backends.filesystem.layout import Layout, encode_entry

CONTENT_BYTES = 1024
NEEDLE_EVERY = 100  # one entry in a hundred holds the search term


def content_for(index: int) -> str:
    rng = random.Random(index)
    words = ["alpha", "beta", "gamma", "delta", "tool", "output", "line", "error", "ok"]
    text = " ".join(rng.choice(words) for _ in range(CONTENT_BYTES // 5))
    if index % NEEDLE_EVERY == 0:
        text = "NeedleToken " + text
    return text[:CONTENT_BYTES]


def best_per_op(count: int, run: Callable[[], object], rounds: int) -> float:
    """µs per operation of `run` (which performs `count` operations): the best of `rounds`."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best / count * 1e6


class Floor:
    """The same bytes, written the plain way: open().write() + os.replace (+ optional fsyncs)."""

    def __init__(self, root: Path, paths: list[str], bodies: list[bytes], *, fsync: bool) -> None:
        self.targets = [root / path for path in paths]
        self.bodies = bodies
        self.fsync = fsync
        for directory in {target.parent for target in self.targets}:
            directory.mkdir(parents=True, exist_ok=True)

    def write(self, index: int) -> None:
        target = self.targets[index]
        temp = target.with_name(f".tmp_{target.name}")
        with open(temp, "wb") as handle:
            handle.write(self.bodies[index])
            if self.fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temp, target)
        if self.fsync:
            fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
            os.fsync(fd)
            os.close(fd)


CHUNK = 10  # puts and floor writes alternate in chunks, so both see the same disk weather


def bench(backend: Any, n: int, now: float, floor: Floor | None) -> dict[str, float]:
    store = Store(backend, clock=lambda: now)
    notes = store.namespace("notes")
    paths = [f"dir{i % 10}/entry{i:05d}.md" for i in range(n)]
    contents = [content_for(i) for i in range(n)]
    order = list(range(n))
    random.Random(7).shuffle(order)

    put_time = floor_time = 0.0
    ratios: list[float] = []
    for number, first in enumerate(range(0, n, CHUNK)):
        chunk = range(first, min(first + CHUNK, n))

        def put_chunk(chunk: range = chunk) -> float:
            start = time.perf_counter()
            for i in chunk:
                notes.put(paths[i], contents[i])
            return time.perf_counter() - start

        def floor_chunk(chunk: range = chunk) -> float:
            start = time.perf_counter()
            for i in chunk:
                floor.write(i)  # type: ignore[union-attr]
            return time.perf_counter() - start

        if floor is None:
            put_time += put_chunk()
            continue
        # Alternate which goes first, so neither always meets the disk's flushes.
        if number % 2:
            ours, theirs = put_chunk(), floor_chunk()
        else:
            theirs, ours = floor_chunk(), put_chunk()
        put_time += ours
        floor_time += theirs
        ratios.append(ours / theirs)
    result = {"put": put_time / n * 1e6}
    if floor is not None:
        result["floor"] = floor_time / n * 1e6
        result["put_vs_floor"] = statistics.median(ratios)

    def get() -> None:
        for i in order:
            notes.get(paths[i])

    def read() -> None:
        for i in order:
            backend.read("notes", paths[i])

    fast = isinstance(backend, InMemoryBackend)
    result["get"] = best_per_op(n, get, 15 if fast else 3)
    result["backend_read"] = best_per_op(n, read, 15 if fast else 3)
    result["list"] = best_per_op(1, notes.list, 10 if fast else 3)
    result["search"] = best_per_op(1, lambda: notes.search("needletoken"), 10 if fast else 3)
    hits = len(notes.search("needletoken"))
    assert hits == (n + NEEDLE_EVERY - 1) // NEEDLE_EVERY, hits
    return result


HOT_PATHS = 500
"""Distinct paths the hot-path loops cycle through (a warm namespace, every put a replace)."""

SMALL_META = {"kind": "note", "turn": 3}
"""The meta of a "small entry" with meta: two flat keys, what memory and offload write."""


def hot_paths(rounds: int) -> dict[str, float]:
    """µs per in-memory `Store.put` / `Store.get` of a small entry (64 characters), with and
    without meta, replacing an entry (`put`, `put_meta`) or creating one (`put_new`), and the
    floors beside them; medians of `rounds` interleaved rounds."""
    backend = InMemoryBackend()
    notes = Store(backend).namespace("notes")
    paths = [f"dir{i % 10}/entry{i:05d}.md" for i in range(HOT_PATHS)]
    content = "small tool output line, sixty-four characters long, give or take"
    for path in paths:
        notes.put(path, content)
    plain: dict[str, dict[str, Any]] = {}
    fresh = iter(
        [
            [f"dir{i % 10}/b{batch}-entry{i:05d}.md" for i in range(HOT_PATHS)]
            for batch in range(rounds * 3)
        ]
    )

    def put_new() -> None:
        """Puts that create their entries: new paths (first validation), a new backend."""
        batch = Store(InMemoryBackend()).namespace("notes")
        for path in next(fresh):
            batch.put(path, content)

    def put_bare() -> None:
        for path in paths:
            notes.put(path, content)

    def put_meta() -> None:
        for path in paths:
            notes.put(path, content, SMALL_META)

    def get() -> None:
        for path in paths:
            notes.get(path)

    def floor_put() -> None:
        for path in paths:
            plain[path] = dict(SMALL_META)

    def floor_get() -> None:
        for path in paths:
            plain.get(path)

    least = _Least(plain)

    def method_put() -> None:
        for path in paths:
            least.put(path, content)

    def method_get() -> None:
        for path in paths:
            least.get(path)

    runs = {
        "put": put_bare,
        "put_new": put_new,
        "put_meta": put_meta,
        "get": get,
        "floor_put": floor_put,
        "floor_get": floor_get,
        "method_put": method_put,
        "method_get": method_get,
    }
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for number in range(rounds):
        names = list(runs) if number % 2 == 0 else list(reversed(runs))
        for name in names:
            gc.collect()  # no run pays for the garbage of the one before
            samples[name].append(best_per_op(HOT_PATHS, runs[name], 3))
    result = {name: statistics.median(values) for name, values in samples.items()}
    result["put_vs_floor"] = result["put"] / result["floor_put"]
    result["put_meta_vs_floor"] = result["put_meta"] / result["floor_put"]
    result["get_vs_floor"] = result["get"] / result["floor_get"]
    result["put_vs_method"] = result["put"] / result["method_put"]
    result["get_vs_method"] = result["get"] / result["method_get"]
    return result


class _Least:
    """The least a store method can do (the physical floor beside the dict's): one Python
    method call each, `put` timestamping an immutable entry and `get` noting the read time
    (what eviction needs), no validation, no copy, no lock."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data
        self._seen: dict[str, float] = {}

    def put(self, path: str, content: str) -> None:
        now = time.time()
        self._data[path] = (content, {"created_at": now, "updated_at": now})

    def get(self, path: str) -> Any:
        found = self._data.get(path)
        if found is not None:
            self._seen[path] = time.time()
        return found


def print_hot(hot: dict[str, float]) -> None:
    print(
        f"memory hot paths (µs/op, median): put {hot['put']:.2f}, put+meta {hot['put_meta']:.2f},"
        f" put of a new entry {hot['put_new']:.2f}"
        f" (floor: dict assignment of a meta copy {hot['floor_put']:.2f}); get {hot['get']:.2f}"
        f" (floor: dict lookup {hot['floor_get']:.3f})"
    )
    print(
        f"  ratios to the floors: put {hot['put_vs_floor']:.1f}x, put+meta"
        f" {hot['put_meta_vs_floor']:.1f}x, get {hot['get_vs_floor']:.1f}x"
        f" (load average {os.getloadavg()[0]:.1f})"
    )
    print(
        f"  the least method (one call, a timestamp; µs/op): put {hot['method_put']:.2f}"
        f" = {hot['method_put'] / hot['floor_put']:.1f}x the dict, get {hot['method_get']:.2f}"
        f" = {hot['method_get'] / hot['floor_get']:.1f}x the dict; ours to it: put"
        f" {hot['put_vs_method']:.1f}x, get {hot['get_vs_method']:.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--hot-only", action="store_true", help="time only the hot paths")
    parser.add_argument("--rounds", type=int, default=15, help="hot-path rounds (median)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/store.json"))
    parser.add_argument("--offload", action="store_true", help="only the 10 MiB offload")
    args = parser.parse_args()
    if args.offload:
        offload_10mib(args.out.with_name("store_offload.json"))
        return
    hot = hot_paths(args.rounds)
    print_hot(hot)
    if args.hot_only:
        return
    now = time.time()
    rows: list[dict[str, Any]] = []
    print_header()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        base = Path(tmp)
        for n in args.sizes:
            paths = [f"dir{i % 10}/entry{i:05d}.md" for i in range(n)]
            meta = {"created_at": now, "updated_at": now}
            layout = Layout("json")
            bodies = [encode_entry(layout, StoredEntry(content_for(i), meta)) for i in range(n)]
            runs: list[tuple[str, Callable[[Path], Any], bool | None]] = [
                ("memory", lambda _: InMemoryBackend(), None),
                ("filesystem", FileSystemBackend, True),
                (
                    "filesystem(fsync=False)",
                    lambda root: FileSystemBackend(root, fsync=False),
                    False,
                ),
            ]
            for number, (name, make, fsync) in enumerate(runs):
                # Each backend alone: the previous one's objects would slow this one's GC, and
                # its write-back would land in this one's timings.
                gc.collect()
                os.sync()
                floor = None
                if fsync is not None:
                    floor = Floor(base / f"floor-{name}-{n}", paths, bodies, fsync=fsync)
                backend = make(base / f"backend-{number}-{n}")
                row = {"backend": name, "n": n, **bench(backend, n, now, floor)}
                del backend
                if floor is not None:
                    row["floor_kind"] = "write+replace" + ("+fsync" if fsync else "")
                rows.append(row)
                print_row(row)
    summary = summarize(rows)
    summary["memory Store.put, small entry (µs)"] = hot["put"]
    summary["memory Store.put, small entry with meta (µs)"] = hot["put_meta"]
    summary["memory Store.put, new small entry (µs)"] = hot["put_new"]
    summary["memory Store.get, small entry (µs)"] = hot["get"]
    for key, value in summary.items():
        print(f"{key}: {value:.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "summary": summary,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "content_bytes": CONTENT_BYTES,
        "unit": "µs/op (list and search: per call over the whole namespace)",
        "rows": rows,
        "hot_paths": hot,
    }
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


def summarize(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The figures the issue sets targets for, at the largest size measured."""
    n = max(row["n"] for row in rows)
    by_name = {row["backend"]: row for row in rows if row["n"] == n}
    durable, plain = by_name["filesystem"], by_name["filesystem(fsync=False)"]
    return {
        f"n={n} filesystem put / durable floor (x)": durable["put_vs_floor"],
        f"n={n} filesystem put / plain floor, totals (x)": durable["put"] / plain["floor"],
        f"n={n} filesystem(fsync=False) put / plain floor (x)": plain["put_vs_floor"],
        f"n={n} memory Store.get (µs)": by_name["memory"]["get"],
        f"n={n} memory backend read (µs)": by_name["memory"]["backend_read"],
    }


def print_header() -> None:
    print(
        f"{'backend':<24}{'n':>7}{'put':>9}{'floor':>9}{'put/floor':>10}{'get':>8}{'read':>8}"
        f"{'list':>11}{'search':>11}"
    )


def print_row(row: dict[str, Any]) -> None:
    floor = f"{row['floor']:.1f}" if "floor" in row else "-"
    ratio = f"{row['put_vs_floor']:.2f}x" if "put_vs_floor" in row else "-"
    print(
        f"{row['backend']:<24}{row['n']:>7}{row['put']:>9.1f}{floor:>9}{ratio:>10}"
        f"{row['get']:>8.2f}{row['backend_read']:>8.2f}{row['list']:>11.0f}{row['search']:>11.0f}"
    )


def log_output(size: int) -> str:
    """A deterministic build/test log of `size` characters, an error line every ~5000 lines."""
    lines: list[str] = []
    total, number = 0, 0
    while total < size:
        number += 1
        if number % 5000 == 0:
            line = f"FAILED tests/test_module_{number}.py::test_case - AssertionError: 3 != 4"
        else:
            line = f"[{number:07d}] compiled src/module_{number % 500}.py in {number % 97} ms: ok"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def offload_10mib(out: Path, repeats: int = 7) -> None:
    """A 10 MiB tool output offloaded to the in-memory store, and the reference's equivalent.

    Ours: `chef.store.offload(content)` on a fresh chef (the store put, content-addressed, and
    the preview with head 500, tail 2000 and error lines), the like of theirs:
    `chef.offload(content, {headChars: 500, tailChars: 2000})` on a fresh chef over an
    `InMemoryBackend` (ts_reference.mjs `offload`). Also shown, not compared: a fresh chef's
    compile of a history ending in that tool result, with and without offloading (the
    difference is not the offload's cost: without it, the compile handles 10 MiB inline).
    """
    from ts_bridge import node_command, reference_package, run_json

    from contextchef import ContextChef

    content = log_output(10 * 2**20)
    function = {"name": "run_tests", "arguments": "{}"}
    call = {"id": "call_1", "type": "function", "function": function}
    history = [
        {"role": "user", "content": "Run the tests."},
        {"role": "assistant", "content": "Running them.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": content},
    ]

    def compile_ms(vfs: dict[str, Any] | None) -> float:
        chef = ContextChef(offload=vfs).set_history(history)
        start = time.perf_counter()
        payload = chef.compile(target="openai")
        elapsed = (time.perf_counter() - start) * 1000
        assert ("context://vfs/" in payload["messages"][-1]["content"]) == (vfs is None)
        return elapsed

    def offload_ms() -> float:
        chef = ContextChef()  # a fresh store each time: offloading again stores nothing
        start = time.perf_counter()
        marker = chef.store.offload(content).marker
        elapsed = (time.perf_counter() - start) * 1000
        assert "context://vfs/" in marker and "FAILED" in marker
        return elapsed

    offloads: list[float] = []
    with_offload: list[float] = []
    without: list[float] = []
    for number in range(repeats + 1):  # alternating; the first round is a warm-up
        trio = (offload_ms(), compile_ms(None), compile_ms({"threshold": None}))
        if number:
            offloads.append(trio[0])
            with_offload.append(trio[1])
            without.append(trio[2])
    row: dict[str, Any] = {
        "content_chars": len(content),
        "offload_ms": statistics.median(offloads),
        "offload_min_ms": min(offloads),
        "compile_with_offload_ms": statistics.median(with_offload),
        "compile_without_offload_ms": statistics.median(without),
        "load_average_1min": os.getloadavg()[0],
    }
    node = node_command()
    if node is not None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "output.log"
            path.write_text(content, encoding="utf-8")
            command = [*node, "offload", reference_package(), str(path), str(repeats)]
            theirs = run_json(command, tmp)
        if theirs is not None:
            row["ts_offload_ms"] = theirs["offload_ms"]
            row["offload_over_ts"] = row["offload_ms"] / theirs["offload_ms"]
    print(f"offload of a 10 MiB tool output, in-memory store (medians of {repeats}):")
    for key, value in row.items():
        print(f"  {key}: {value:.2f}" if isinstance(value, float) else f"  {key}: {value}")
    if "offload_over_ts" in row:
        verdict = "met" if row["offload_over_ts"] <= 1.0 else "NOT met"
        print(f"  target (issues 16 and 24), offload <= the reference's: {verdict}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(row, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
