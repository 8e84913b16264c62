"""The contract suite runs every test here once per storage backend.

To plug a backend in, add one entry to BACKENDS: a name and a factory taking a fresh temporary
directory (persistent backends keep their files there) and returning the backend. Backends that
survive a reopen also appear in PERSISTENT, so reopen-and-read tests run against them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contextchef.store.sqlite import SQLiteBackend

BackendFactory = Callable[[Path], Any]

BACKENDS: dict[str, BackendFactory] = {}
PERSISTENT: set[str] = set()

BACKENDS["sqlite"] = lambda tmp: SQLiteBackend(tmp / "context.db", project="test:contract")
PERSISTENT.add("sqlite")


@pytest.fixture(params=sorted(BACKENDS))
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend(backend_name: str, tmp_path: Path) -> Any:
    return BACKENDS[backend_name](tmp_path)
