"""Fixtures for the SQLite store tests: a database file in a temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from contextchef.store.backends.sqlite import SQLiteBackend


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "context.db"


@pytest.fixture
def backend(db_path: Path) -> Iterator[SQLiteBackend]:
    with SQLiteBackend(db_path, project="test:unit") as opened:
        yield opened
