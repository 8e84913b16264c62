"""The README's integration examples run as written (offline, against the real frameworks)."""

from __future__ import annotations

import pytest

from tests.test_readme import README, python_blocks


@pytest.mark.parametrize("section", ["pydantic-ai", "OpenAI Agents SDK", "LangGraph"])
def test_integration_example_runs(section: str) -> None:
    (code,) = python_blocks(section)
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
