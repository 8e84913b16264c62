"""The README is a landing page: it opens with an agent loop that runs against the real Anthropic
SDK on a loopback server, names the two commands, stays short and links into the docs, whose
pages all have a place in the site. (Every code block of the README and of the docs runs in
tests/test_docs_examples.py; the reliability table's tests exist.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from contextchef import prompts
from tests.agent_loop import Call, anthropic_reply
from tests.docs_pages import DOCS, README, ROOT, python_blocks, section_text
from tests.loopback import loopback_server


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


def test_the_quick_start_is_short_and_runs() -> None:
    (code,) = python_blocks("getting-started.md", "Quick start")
    assert len(code.splitlines()) <= 20
    exec(compile(code, "docs/getting-started.md", "exec"), {})


def test_readme_names_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make test" in text and "make demo" in text


def test_the_readme_is_a_landing_page_whose_links_lead_somewhere() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text)
    assert len(links) >= 20
    for link in links:
        assert (ROOT / link).is_file(), link
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in sorted(DOCS.rglob("*.md")):
        assert str(page.relative_to(DOCS)) in nav, f"{page} is in no section of the site"


def test_every_test_the_reliability_table_names_exists() -> None:
    root = ROOT
    table = section_text("reliability.md")
    files = set(re.findall(r"`(tests/[\w/]+\.py)`", table))
    names = set(re.findall(r"`(test_\w+)`", table))
    assert files and names
    for file in files:
        assert (root / file).is_file(), file
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (root / "tests").rglob("*.py"))
    for name in names:
        assert f"def {name}(" in sources, name
