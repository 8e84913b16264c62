"""What repair and restore claim about the files they replaced, written down for `check` to verify.

`repair` and `restore` replace the database file and keep the one they replaced: restore moves
it into `<db>.before-restore-<time>/`, repair into `<db>.corrupt-backup-<time>/`. Both claim that
no process was using it, so the file they put aside is final: nothing is written to it after.
If that claim were false (a process that kept the old file open, out of reach of the lock), its
writes would go on landing in the file put aside, acknowledged, yet absent from the database.

So each writes `receipt.json` into its directory, recording the size and modification time
(ns) of every file it put aside that holds data (the database and its `-wal`; the `-shm` is an
index that any reader may rewrite), and `check` verifies the receipts of the database: a recorded
file that changed since, or that some process still has open (Linux, by device and inode; see
openers.py), is a problem `check` reports, naming the file that holds the missing writes.

A receipt that cannot be read is reported too (it can no longer vouch for anything). Deleting a
maintenance directory, or its receipt, after inspecting it ends the verification.
"""

from __future__ import annotations

import glob
import json
import time
from pathlib import Path
from typing import Any

from contextchef.store.backends.sqlite.openers import file_id, openers
from contextchef.store.backends.sqlite.private import create_private_file

__all__ = ["RECEIPT_FORMAT", "RECEIPT_NAME", "receipt_problems", "write_receipt"]

RECEIPT_FORMAT = "contextchef-maintenance-receipt/1"
RECEIPT_NAME = "receipt.json"
MAINTENANCE_DIRS = ("before-restore", "corrupt-backup")
"""The labels of the directories repair and restore keep the replaced files in."""


def _stamp(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def write_receipt(directory: Path, *, command: str, database: Path, files: list[Path]) -> Path:
    """Record, in `directory/receipt.json` (0600), the state of the `files` put aside there."""
    receipt = directory / RECEIPT_NAME
    data: dict[str, Any] = {
        "format": RECEIPT_FORMAT,
        "command": command,
        "database": str(database),
        "at": time.time(),
        "files": {file.name: _stamp(file) for file in files if not file.name.endswith("-shm")},
    }
    create_private_file(receipt)
    receipt.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return receipt


def _receipts(db_path: Path) -> list[Path]:
    pattern = glob.escape(db_path.name)
    found: list[Path] = []
    for label in MAINTENANCE_DIRS:
        found += db_path.parent.glob(f"{pattern}.{label}-*/{RECEIPT_NAME}")
    return sorted(found)


def _read(receipt: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(receipt.read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and data.get("format") == RECEIPT_FORMAT
    return data if ok and isinstance(data.get("files"), dict) else None


def _when(data: dict[str, Any]) -> str:
    at = data.get("at")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)) if isinstance(at, float) else "?"
    return f"`{data.get('command')}` at {stamp}"


def receipt_problems(db_path: Path) -> list[str]:
    """What the receipts of `db_path`'s repairs and restores no longer vouch for (reads only)."""
    problems: list[str] = []
    kept: list[tuple[Path, str]] = []
    for receipt in _receipts(db_path):
        data = _read(receipt)
        if data is None:
            problems.append(
                f"maintenance: {receipt} cannot be read, so whether the files put aside there "
                "stayed untouched cannot be verified; delete it once you have inspected them"
            )
            continue
        for name, recorded in data["files"].items():
            file = receipt.parent / str(name)
            try:
                changed = _stamp(file) != recorded
            except OSError:
                continue  # removed by the user: nothing left to verify
            if changed:
                problems.append(
                    f"maintenance: {file} changed after {_when(data)} put it aside: a process "
                    "kept the replaced file open and wrote to it; those writes are there, not in "
                    "the database. Inspect it, then delete its receipt"
                )
            else:
                kept.append((file, _when(data)))
    ids = {fid: entry for entry in kept if (fid := file_id(entry[0])) is not None}
    if not openers(*ids):
        return problems  # one scan for all; attributed file by file only when someone has one
    for fid, (file, when) in ids.items():
        pids = openers(fid)
        if pids:
            problems.append(
                f"maintenance: process {', '.join(map(str, pids))} still has {file} open, the "
                f"file {when} replaced; what it writes goes there, not into the database"
            )
    return problems
