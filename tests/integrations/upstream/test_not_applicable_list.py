"""NOT_APPLICABLE.md names only tests that exist in the vendored files, so a skip can never
outlive the test it was for, and a typo cannot silently leave a failing test running."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.integrations.upstream.not_applicable import listed

HERE = Path(__file__).parent
SECTIONS = {"openai-agents": HERE / "openai_agents", "pydantic-ai": HERE / "pydantic_ai"}


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_every_listed_test_exists_and_has_a_reason(section: str) -> None:
    entries = listed(section)
    assert entries
    for (file, test), reason in entries.items():
        assert test in _tests_in(SECTIONS[section] / file), f"{file}::{test} is not a test there"
        assert len(reason) > 40
