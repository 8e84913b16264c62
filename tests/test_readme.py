"""The README's examples run as written: the agent loop it opens with against the real
Anthropic SDK on a loopback server, the others offline."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from contextchef import prompts
from tests.agent_loop import Call, anthropic_reply
from tests.loopback import loopback_server

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(section: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, re.S)


def first_code_block() -> str:
    match = re.search(r"```(\w*)\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert match is not None and match.group(1) == "python"
    return match.group(2)


def test_the_readme_opens_with_an_agent_loop_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first code block, as written: the real `anthropic.Anthropic()` client finds the
    loopback server through ANTHROPIC_BASE_URL, and the model asks for two files at once."""
    code = first_code_block()
    for step in ("chef.compile()", "chef.add_response(reply)", "chef.add_tool_result(call.id"):
        assert step in code
    (tmp_path / "test_parser.py").write_text("def test_sum():\n    assert parse('1+2') == 3\n")
    (tmp_path / "parser.py").write_text("def parse(text):\n    return int(text)\n")
    monkeypatch.chdir(tmp_path)
    answer = "parse() calls int() on the whole text, so '1+2' raises ValueError."
    replies = [
        anthropic_reply(
            0,
            "Let me read the test and the parser.",
            [
                Call("toolu_01", "read_file", {"path": "test_parser.py"}),
                Call("toolu_02", "read_file", {"path": "parser.py"}),
            ],
        ),
        anthropic_reply(1, answer, []),
    ]
    turns = iter(replies)

    def model(body: Any) -> Any:
        del body
        return next(turns)

    with loopback_server(model) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        exec(compile(code, str(README), "exec"), {})
    assert capsys.readouterr().out == answer + "\n"
    first, second = (request.body for request in server.requests)
    assert [m["content"][0]["text"] for m in first["messages"]] == ["Why does test_parser.py fail?"]
    results = second["messages"][-1]["content"]
    assert [(block["tool_use_id"], block["content"]) for block in results] == [
        ("toolu_01", (tmp_path / "test_parser.py").read_text()),
        ("toolu_02", (tmp_path / "parser.py").read_text()),
    ]
    assert prompts.NO_TOOL_RESULT not in json.dumps(second)
    assert prompts.CONVERSATION_CONTINUES not in json.dumps(second)


def test_quick_start_runs(capsys: object) -> None:
    (code,) = python_blocks("Quick start")
    assert len(code.splitlines()) <= 20
    exec(compile(code, str(README), "exec"), {})


def test_long_conversation_example_runs() -> None:
    (code,) = python_blocks("Keeping long conversations in the window")
    exec(compile(code, str(README), "exec"), {})


def test_context_store_examples_run() -> None:
    blocks = python_blocks("The context store")
    assert len(blocks) == 2  # the store, and manual offload
    for code in blocks:
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
