"""Names the host or the model gets wrong (issue 26, item 3): `check_tool_call` refuses a call
with an empty or missing name; `allow_only` matches names case-insensitively and reports the
ones that match nothing instead of raising."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef.chef.tools import match_names
from tests.selection.pruner_fixtures import TOOLS, defined_names

NO_NAME = (
    "Error: this tool call has no tool name, so nothing was run. Call again with the name of "
    "one of your tools."
)


@pytest.mark.parametrize(
    "call",
    [
        "",
        "   ",
        {"function": {"name": "", "arguments": "{}"}},
        {"function": {"arguments": "{}"}},
        {"type": "tool_use", "input": {}},
        {"name": None, "args": {}},
        {},
    ],
    ids=["empty", "blank", "openai-empty", "openai-missing", "anthropic-missing", "none", "bare"],
)
def test_a_call_without_a_name_is_refused(call: Any) -> None:
    chef = ContextChef()
    chef.tools.register(TOOLS)
    check = chef.tools.check_tool_call(call)
    assert not check.allowed and check.reason == NO_NAME


def test_a_named_call_is_still_checked_against_the_blocklist_only() -> None:
    chef = ContextChef(pruner={"blocked": ["write_file"]})
    chef.tools.register(TOOLS)
    assert chef.tools.check_tool_call("read_file").allowed
    assert chef.tools.check_tool_call({"function": {"name": "read_file"}}).allowed
    assert not chef.tools.check_tool_call("write_file").allowed


@pytest.mark.parametrize(
    ("given", "chosen", "unknown"),
    [
        (["read_file"], ("read_file",), ()),
        (["READ_FILE", "Git_Status"], ("read_file", "git_status"), ()),
        (["read_file", "Read_File"], ("read_file",), ()),
        (["reed_file", "write_file"], ("write_file",), ("reed_file",)),
        (["nothing", "NOPE"], (), ("nothing", "NOPE")),
    ],
)
def test_match_names(given: list[str], chosen: tuple[str, ...], unknown: tuple[str, ...]) -> None:
    known = [tool["name"] for tool in TOOLS]
    assert match_names(given, known) == (chosen, unknown)


def test_an_exact_match_wins_over_another_spelling() -> None:
    assert match_names(["Tool", "TOOL"], ["tool", "Tool"]) == (("Tool", "tool"), ())


def test_allow_only_ignores_case_and_reports_unknown_names(
    caplog: pytest.LogCaptureFixture,
) -> None:
    chef = ContextChef()
    chef.tools.register(TOOLS)
    with caplog.at_level(logging.WARNING, logger="contextchef.chef.tools"):
        result = chef.tools.allow_only(["READ_FILE", "reed_file"])
    assert result.unknown == ("reed_file",)
    assert "read_file" in result.kept and "write_file" in result.removed
    assert "no tool is named 'reed_file'" in caplog.text
    names = defined_names(chef.set_history([{"role": "user", "content": "hi"}]).compile(), "openai")
    assert "read_file" in names and "write_file" not in names
    assert chef.tools.allow_only(["write_file"]).unknown == ()


def test_a_name_registered_later_is_selected_once_it_exists() -> None:
    chef = ContextChef()
    result = chef.tools.allow_only(["read_file"])  # before any tool is registered
    assert result.unknown == ("read_file",)
    chef.tools.register(TOOLS)
    assert chef.tools.selection().kept == ("read_file",)
