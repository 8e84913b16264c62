"""Every retrieval test that takes `store` runs once per backend of the contract suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextchef.memory import Memory
from contextchef.retrieval import ContextTool, Dispatcher
from contextchef.store import Store
from tests.contract.conftest import BACKENDS
from tests.contract.helpers import Clock

T0 = 1_700_000_000.0


@pytest.fixture(params=sorted(BACKENDS))
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def store(backend_name: str, tmp_path: Path, clock: Clock) -> Store:
    return Store(BACKENDS[backend_name](tmp_path), clock=clock)


@pytest.fixture
def memory(store: Store, clock: Clock) -> Memory:
    return Memory(store, clock=clock)


@pytest.fixture
def tool(store: Store, memory: Memory) -> ContextTool:
    return ContextTool(store, memory=memory)


@pytest.fixture
def run(tool: ContextTool) -> Any:
    """`run(command, path, **arguments)` → the tool's result text."""

    def call(command: str, path: str | None = None, **arguments: Any) -> str:
        if path is not None:
            arguments["path"] = path
        return tool.run({"command": command, **arguments})

    return call


@pytest.fixture
def dispatcher(tool: ContextTool) -> Dispatcher:
    return Dispatcher(tool)
