"""Several processes on one database: concurrency, SIGKILL mid-transaction, backup under load.

Every worker prints the path of each write after it was acknowledged (committed); the tests
then check that every acknowledged write is in the database. Durations and process counts are
bounded so the whole file runs in a few seconds.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite import maintenance as mt
from contextchef.store.backends.sqlite.backup import backup

from .helpers import finish, start_worker

pytestmark = pytest.mark.slow

WRITERS = 4
SECONDS = "2.5"


def _open(db: Path) -> SQLiteBackend:
    return SQLiteBackend(db, project="test:reliability")


def test_concurrent_writers_and_readers_lose_nothing(tmp_path: Path) -> None:
    db, go = tmp_path / "context.db", tmp_path / "go"
    _open(db).close()
    workers = [
        start_worker("write_and_read", str(db), str(n), SECONDS, str(go)) for n in range(WRITERS)
    ]
    go.touch()
    outputs = [finish(w) for w in workers]  # a `database is locked` would fail the worker
    acked = {line["ack"] for out in outputs for line in out if "ack" in line}
    done = [line["done"] for out in outputs for line in out if "done" in line]
    assert len(done) == WRITERS and all(n > 0 for n in done)
    assert len(acked) == sum(done)
    with _open(db) as backend:
        assert {e.path for e in backend.list("notes")} == acked
        for n, count in enumerate(done):
            log = backend.read("archive", f"w{n}.log")
            batched = [i for i in range(count) if i % 10 == 9]
            assert (log.content if log else "") == "".join(f"{i}\n" for i in batched)
    assert mt.check(db).ok


def test_sigkill_mid_transaction_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    db = tmp_path / "context.db"
    acked = []
    with start_worker("write_then_hang", str(db)) as worker:
        assert worker.stdout is not None
        for raw in worker.stdout:
            line = json.loads(raw)
            if line.get("in_transaction"):
                break
            acked.append(line["ack"])
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    assert worker.returncode == -signal.SIGKILL
    assert len(acked) == 200
    assert mt.check(db).ok
    with _open(db) as backend:
        paths = {e.path for e in backend.list("notes")}
    assert paths == set(acked)


def _collect(worker: subprocess.Popen[str], into: list[dict[str, Any]]) -> threading.Thread:
    def read() -> None:
        assert worker.stdout is not None
        for raw in worker.stdout:
            into.append(json.loads(raw))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_backup_while_writers_run(tmp_path: Path) -> None:
    db, go = tmp_path / "context.db", tmp_path / "go"
    _open(db).close()
    workers = [start_worker("write_and_read", str(db), str(n), SECONDS, str(go)) for n in range(2)]
    lines: list[list[dict[str, Any]]] = [[], []]
    readers = [_collect(w, out) for w, out in zip(workers, lines, strict=True)]
    go.touch()
    give_up = time.monotonic() + 60
    while sum(len(out) for out in lines) < 50:
        assert time.monotonic() < give_up and all(w.poll() is None for w in workers)
        time.sleep(0.01)
    committed_before = {line["ack"] for out in lines for line in list(out) if "ack" in line}
    result = backup(db, tmp_path / "backup.db")
    for worker, reader in zip(workers, readers, strict=True):
        with worker:
            assert worker.wait(timeout=60) == 0
            reader.join(timeout=10)
    assert mt.check(result.path).ok
    with _open(result.path) as copy:
        in_backup = {e.path for e in copy.list("notes")}
    assert committed_before <= in_backup
    all_acked = {line["ack"] for out in lines for line in out if "ack" in line}
    assert in_backup <= all_acked and len(all_acked) > len(committed_before)
