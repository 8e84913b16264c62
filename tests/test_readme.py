"""The README's quick start runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(section: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, re.S)


def test_quick_start_runs(capsys: object) -> None:
    (code,) = python_blocks("Quick start")
    assert len(code.splitlines()) <= 20
    exec(compile(code, str(README), "exec"), {})


def test_long_conversation_example_runs() -> None:
    (code,) = python_blocks("Keeping long conversations in the window")
    exec(compile(code, str(README), "exec"), {})


def test_context_store_example_runs() -> None:
    (code,) = python_blocks("The context store")
    exec(compile(code, str(README), "exec"), {})


def test_memory_and_scratchpad_example_runs() -> None:
    (code,) = python_blocks("Giving the model a memory and a scratchpad")
    exec(compile(code, str(README), "exec"), {})


def test_skills_example_runs() -> None:
    (code,) = python_blocks("Skills")
    exec(compile(code, str(README), "exec"), {})


def test_announcements_example_runs() -> None:
    (code,) = python_blocks("Announcements")
    exec(compile(code, str(README), "exec"), {})


def test_portable_snapshot_example_runs() -> None:
    (code,) = python_blocks("Async, events, snapshots")
    exec(compile(code, str(README), "exec"), {})


def test_tool_selection_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    (code,) = python_blocks("Choosing the tools the model sees")
    exec(compile(code, str(README), "exec"), {})
    assert "Loaded the browser toolkit" in capsys.readouterr().out


def test_prompt_caching_example_runs() -> None:
    (code,) = python_blocks("Prompt caching")
    exec(compile(code, str(README), "exec"), {})


def test_readme_names_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make test" in text and "make demo" in text


def test_every_test_the_reliability_table_names_exists() -> None:
    root = Path(__file__).resolve().parents[1]
    text = (root / "README.md").read_text(encoding="utf-8")
    table = text.split("## Reliability", 1)[1].split("\n## ", 1)[0]
    files = set(re.findall(r"`(tests/[\w/]+\.py)`", table))
    names = set(re.findall(r"`(test_\w+)`", table))
    assert files and names
    for file in files:
        assert (root / file).is_file(), file
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (root / "tests").rglob("*.py"))
    for name in names:
        assert f"def {name}(" in sources, name
