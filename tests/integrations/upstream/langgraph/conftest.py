"""Marks the vendored LangGraph tests listed in ../NOT_APPLICABLE.md (its `langgraph` section)
as skipped with the reason written there, and gives the tests pytest-mock's `mocker.stub` and
`mocker.spy` (the only parts they use), so neither the test files nor the list repeat it, and
upstream's `fake_embeddings` fixture (from its PostgreSQL `tests/conftest.py`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integrations.upstream.langgraph._factory import MockerFixture
from tests.integrations.upstream.langgraph.embed_test_utils import CharacterEmbeddings

_LIST = Path(__file__).parent.parent / "NOT_APPLICABLE.md"
_ENTRY = re.compile(r"^- `langgraph/(?P<test>[^`]+)`: (?P<reason>.+)$")


def _not_applicable() -> dict[str, str]:
    section = _LIST.read_text(encoding="utf-8").split("\n## langgraph\n", 1)[1].split("\n## ")[0]
    found = {}
    for line in section.splitlines():
        match = _ENTRY.match(line)
        if match:
            found[match["test"]] = match["reason"]
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    listed = _not_applicable()
    here = Path(__file__).parent
    for item in items:
        path = Path(str(item.path))
        if here not in path.parents:
            continue
        name = f"{path.name}::{item.name.split('[')[0]}"
        if isinstance(item, pytest.Function) and item.cls is not None:
            name = f"{path.name}::{item.cls.__name__}::{item.name.split('[')[0]}"
        if name in listed:
            item.add_marker(pytest.mark.skip(reason=f"not applicable: {listed[name]}"))


@pytest.fixture
def mocker() -> Iterator[MockerFixture]:
    fixture = MockerFixture()
    yield fixture
    fixture.stopall()


@pytest.fixture
def fake_embeddings() -> CharacterEmbeddings:
    """Upstream's: character embeddings of 500 numbers (a test module may define its own)."""
    return CharacterEmbeddings(dims=500)
