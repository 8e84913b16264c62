"""Maintenance sees a database's users however they named it (a symlink, a hard link): it refuses
while a writer runs, and every acknowledged write survives the refusal."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextchef.cli import app
from contextchef.errors import StoreError, StoreInUseError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite import maintenance as mt
from contextchef.store.backends.sqlite.backup import backup, restore
from contextchef.store.backends.sqlite.locking import exclusive, lock_path
from contextchef.store.backends.sqlite.repair import repair

from .helpers import start_worker

runner = CliRunner()

ACKS_BEFORE = 30
"""Creates acknowledged before maintenance is attempted (the writer is then mid-stream)."""


def _layout(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """(the name the writer uses, the name maintenance is given) for one database file."""
    data = tmp_path / "data"
    data.mkdir()
    real = data / "context.db"
    with SQLiteBackend(real, project="test:identity") as backend:
        backend.write("notes", "seed", StoredEntry("seed"))
    other = tmp_path / ("link.db" if kind.startswith("symlink") else "alias.db")
    if kind.startswith("symlink"):
        other.symlink_to(real)
    else:
        os.link(real, other)
    return (other, real) if kind == "symlink-writer" else (real, other)


@contextmanager
def _writer(db: Path, stop: Path) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """A process creating entries in `db`, already `ACKS_BEFORE` acknowledged creates in."""
    worker = start_worker("create_until", str(db), str(stop))
    assert worker.stdout is not None
    assert json.loads(worker.stdout.readline()) == {"ready": True}
    acked = [json.loads(worker.stdout.readline())["ack"] for _ in range(ACKS_BEFORE)]
    try:
        yield worker, acked
    finally:
        stop.touch()


def _acknowledged(worker: subprocess.Popen[str], before: list[str]) -> set[str]:
    assert worker.stdout is not None and worker.stderr is not None
    with worker:  # closes the pipes
        rest = worker.stdout.read()  # through the reader's buffer: `communicate` would skip it
        errors = worker.stderr.read()
    assert worker.wait(timeout=60) == 0, errors
    lines = [json.loads(line) for line in rest.splitlines() if line.strip()]
    done = [line["done"] for line in lines if "done" in line]
    acked = {*before, *(line["ack"] for line in lines if "ack" in line)}
    assert done == [len(acked)]  # the writer never failed
    return acked


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["symlink-writer", "symlink-maintenance", "hardlink"])
def test_maintenance_under_another_name_is_refused_and_loses_nothing(
    tmp_path: Path, kind: str
) -> None:
    writer_name, maintenance_name = _layout(tmp_path, kind)
    good = backup(maintenance_name, tmp_path / "good.db").path
    with _writer(writer_name, tmp_path / "stop") as (worker, before):
        attempts: list[Callable[[], object]] = [
            lambda: repair(maintenance_name),
            lambda: restore(good, maintenance_name),
        ]
        for attempt in attempts:
            with pytest.raises(StoreInUseError, match=rf"pid {worker.pid}\) has it open") as err:
                attempt()
            assert err.value.holders == 1
        with (
            pytest.raises(StoreInUseError, match="migrate"),
            exclusive(maintenance_name, command="migrate"),
        ):
            pytest.fail("migrate ran while a writer had the database open")
        result = runner.invoke(app, ["db", "repair", "--db", str(maintenance_name)])
        assert result.exit_code == 1 and str(worker.pid) in result.output
    acked = _acknowledged(worker, before)
    with SQLiteBackend(maintenance_name, project="test:identity") as backend:
        assert {e.path for e in backend.list("notes", "c/")} == acked
    assert mt.check(maintenance_name).ok
    assert not list(tmp_path.glob("**/*backup*")) and not list(tmp_path.glob("**/*restore-*"))


def test_a_symlink_and_its_target_share_one_lock(tmp_path: Path) -> None:
    _, real = _layout(tmp_path, "symlink-writer")
    link = tmp_path / "link.db"
    assert lock_path(link) == lock_path(real) == real.with_name("context.db.lock")
    with SQLiteBackend(link, project="test:identity"), pytest.raises(StoreInUseError):
        repair(real)
    assert not (tmp_path / "link.db.lock").exists()


def test_repair_through_a_symlink_repairs_the_file_and_keeps_the_link(tmp_path: Path) -> None:
    _, real = _layout(tmp_path, "symlink-writer")
    link = tmp_path / "link.db"
    report = repair(link)
    assert report.lossless
    assert link.is_symlink() and link.resolve() == real
    with SQLiteBackend(link, project="test:identity") as backend:
        assert backend.read("notes", "seed") is not None


def test_repair_and_restore_refuse_a_file_with_several_names(tmp_path: Path) -> None:
    real, alias = _layout(tmp_path, "hardlink")
    good = backup(real, tmp_path / "good.db").path
    before = real.read_bytes()
    for attempt in (lambda: repair(alias), lambda: restore(good, real)):
        with pytest.raises(StoreError, match="2 names") as err:
            attempt()
        assert not isinstance(err.value, StoreInUseError)
    assert real.read_bytes() == alias.read_bytes() == before
    assert os.stat(real).st_ino == os.stat(alias).st_ino  # still one file under two names
    assert not list(tmp_path.glob("**/*backup*")) and not list(tmp_path.glob("**/*restore-*"))
