"""Benchmark of the SQLite store: put, get and search at 10k and 100k entries.

The floor is measured in the same run: the same rows inserted into the same schema (FTS
triggers included) with plain `sqlite3` `executemany` in one transaction. Reported: batched put
per row (`backend.batch()`, 1000 writes a batch) and single put per row (one transaction
each), both against the floor's per-row cost; single append (one transaction each) and get in
µs; FTS search median in ms. Then a big entry: `Store.get` of a 10 MiB entry (the read plus the
access time it records) against a raw `sqlite3` SELECT of the same row, as a ratio.

Run: `.venv/bin/python benchmarks/store_sqlite.py [--sizes 10000 100000]`. Writes
`benchmarks/results/store_sqlite.json` (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from contextchef.store import Store
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite.migrations import open_database

RESULTS = Path(__file__).parent / "results" / "store_sqlite.json"
BATCH = 1000
SINGLE_PUTS = 2000
GETS = 20_000
SEARCHES = 200
BIG_BYTES = 10 * 1024 * 1024
BIG_GETS = 20


def make_rows(n: int, seed: int = 7) -> list[tuple[str, str]]:
    """`n` (path, content) pairs of ~40 words drawn from a 5000-word vocabulary."""
    rng = random.Random(seed)
    vocabulary = [f"w{rng.getrandbits(40):x}" for _ in range(5000)]
    return [
        (f"notes/{i // 1000:03d}/{i:07d}.md", " ".join(rng.choices(vocabulary, k=40)))
        for i in range(n)
    ]


def floor_per_row(db: Path, rows: list[tuple[str, str]]) -> float:
    conn = open_database(db)
    conn.execute("INSERT INTO projects(identity, created_at) VALUES ('bench:floor', 0)")
    now = time.time()
    params = [(1, "notes", p, c, "{}", now, now, len(c.encode())) for p, c in rows]
    start = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO entries(project_id, namespace, path, content, meta, created_at, updated_at, "
        "bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        params,
    )
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed / len(rows)


def bench(size: int, workdir: Path) -> dict[str, float]:
    rows = make_rows(size)
    floor = floor_per_row(workdir / f"floor-{size}.db", rows)
    backend = SQLiteBackend(workdir / f"store-{size}.db", project="bench:store")
    start = time.perf_counter()
    for offset in range(0, size, BATCH):
        with backend.batch():
            for path, content in rows[offset : offset + BATCH]:
                backend.write("notes", path, StoredEntry(content))
    batched = (time.perf_counter() - start) / size

    extra = make_rows(SINGLE_PUTS, seed=11)
    start = time.perf_counter()
    for path, content in extra:
        backend.write("vfs", path, StoredEntry(content))
    single = (time.perf_counter() - start) / SINGLE_PUTS

    start = time.perf_counter()
    for index, (path, _) in enumerate(extra):
        backend.append("vfs", extra[index % 100][0], f"line {index} of {path}\n")
    append = (time.perf_counter() - start) / SINGLE_PUTS

    rng = random.Random(3)
    keys = [rows[rng.randrange(size)][0] for _ in range(GETS)]
    start = time.perf_counter()
    for key in keys:
        backend.read("notes", key)
    get = (time.perf_counter() - start) / GETS

    timings = []
    for _ in range(SEARCHES):
        words = rng.choice(rows)[1].split()
        query = " ".join(rng.sample(words, k=rng.choice((1, 2))))
        start = time.perf_counter()
        hits = backend.search("notes", query, limit=10)
        timings.append(time.perf_counter() - start)
        assert hits, query
    backend.close()
    return {
        "entries": size,
        "floor_us_per_row": floor * 1e6,
        "batched_put_us_per_row": batched * 1e6,
        "batched_vs_floor": batched / floor,
        "single_put_us": single * 1e6,
        "single_vs_floor": single / floor,
        "append_us": append * 1e6,
        "get_us": get * 1e6,
        "search_median_ms": statistics.median(timings) * 1e3,
        "search_p95_ms": sorted(timings)[int(len(timings) * 0.95)] * 1e3,
    }


def bench_big_get(workdir: Path) -> dict[str, float]:
    """Median `Store.get` of a 10 MiB entry (read + touch) vs a raw SELECT of the same row."""
    db = workdir / "big.db"
    backend = SQLiteBackend(db, project="bench:big")
    clock = iter(range(1, 10**9))
    notes = Store(backend, clock=lambda: float(next(clock))).namespace("notes")
    notes.put("big.md", "x" * BIG_BYTES)
    raw = sqlite3.connect(db, isolation_level=None)
    select = "SELECT content, meta FROM entries WHERE namespace = 'notes' AND path = 'big.md'"
    gets, selects = [], []
    for _ in range(BIG_GETS):
        start = time.perf_counter()
        entry = notes.get("big.md")
        gets.append(time.perf_counter() - start)
        assert entry is not None and len(entry.content) == BIG_BYTES
        start = time.perf_counter()
        row = raw.execute(select).fetchone()
        selects.append(time.perf_counter() - start)
        assert len(row[0]) == BIG_BYTES
    raw.close()
    backend.close()
    get, floor = statistics.median(gets), statistics.median(selects)
    return {"big_get_ms": get * 1e3, "big_select_ms": floor * 1e3, "big_get_vs_select": get / floor}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            results.append(bench(size, Path(tmp)))
        big = bench_big_get(Path(tmp))
    columns = [
        ("entries", "entries", "{:.0f}"),
        ("floor µs/row", "floor_us_per_row", "{:.1f}"),
        ("batched µs/row", "batched_put_us_per_row", "{:.1f}"),
        ("× floor", "batched_vs_floor", "{:.2f}"),
        ("single put µs", "single_put_us", "{:.1f}"),
        ("× floor", "single_vs_floor", "{:.1f}"),
        ("append µs", "append_us", "{:.1f}"),
        ("get µs", "get_us", "{:.1f}"),
        ("search med ms", "search_median_ms", "{:.2f}"),
        ("search p95 ms", "search_p95_ms", "{:.2f}"),
    ]
    print(" | ".join(title for title, _, _ in columns))
    for row in results:
        print(" | ".join(fmt.format(row[key]).rjust(len(title)) for title, key, fmt in columns))
    print(
        f"get of a 10 MiB entry: {big['big_get_ms']:.1f} ms, raw SELECT {big['big_select_ms']:.1f}"
        f" ms, × {big['big_get_vs_select']:.2f}"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    payload = {"results": results, "big_entry": big, "at": time.time()}
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
