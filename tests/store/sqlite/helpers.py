"""Shared helpers of the SQLite tests: running worker processes, comparing schemas."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

WORKERS = Path(__file__).with_name("workers.py")


def start_worker(*args: str) -> subprocess.Popen[str]:
    """Start `workers.py` with `args`; its stdout is a pipe of JSON lines."""
    return subprocess.Popen(
        [sys.executable, str(WORKERS), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(worker: subprocess.Popen[str], timeout: float = 60) -> list[dict[str, Any]]:
    """Wait for a worker, fail on a non-zero exit, return its JSON lines."""
    out, err = worker.communicate(timeout=timeout)
    assert worker.returncode == 0, err
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def schema_of(conn: sqlite3.Connection) -> list[tuple[str, str, str, str]]:
    """`sqlite_master` as sorted (type, name, table, whitespace-normalised sql) rows."""
    rows = conn.execute("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master")
    return sorted((t, n, tb, re.sub(r"\s+", " ", sql).strip()) for t, n, tb, sql in rows)
