"""Provider options the pruner passes through where the SDK takes them: OpenAI's `tool_choice`
"allowed_tools" (every definition stays, so the cached tools prefix survives a new selection)
and Anthropic's `defer_loading` on a tool definition. The payloads pass the SDKs' own types."""

from __future__ import annotations

import json

import pytest

from contextchef import ContextChef
from tests.adapters.sdk_anthropic import validate_request
from tests.selection.pruner_fixtures import NAMES, TARGETS, TOOLS, defined_names, tool, validate


def allowed_chef() -> ContextChef:
    chef = ContextChef(pruner={"use_allowed_tools": True})
    chef.tools.register(TOOLS)
    return chef.set_history([{"role": "user", "content": "Run the tests."}])


def test_openai_chat_keeps_every_definition_and_restricts_calls_by_name() -> None:
    chef = allowed_chef()
    before = chef.compile(target="openai")
    chef.tools.allow_only(["read_file", "run_tests"])
    after = chef.compile(target="openai")
    assert after["tools"] == before["tools"]  # the cached prefix is untouched
    assert after["tool_choice"] == {
        "allowed_tools": {
            "mode": "auto",
            "tools": [
                {"function": {"name": name}, "type": "function"}
                for name in ("read_file", "run_tests", "context")
            ],
        },
        "type": "allowed_tools",
    }
    assert "tool_choice" not in before
    validate(after, "openai")


def test_openai_responses_takes_its_own_allowed_tools_shape() -> None:
    chef = allowed_chef()
    chef.tools.prune_by_task("run the tests")
    payload = chef.compile(target="openai-responses")
    assert defined_names(payload, "openai-responses") == [*NAMES, "context"]
    assert payload["tool_choice"] == {
        "mode": "auto",
        "tools": [
            {"name": "run_tests", "type": "function"},
            {"name": "context", "type": "function"},
        ],
        "type": "allowed_tools",
    }
    validate(payload, "openai-responses")


@pytest.mark.parametrize("target", ["anthropic", "gemini"])
def test_targets_without_allowed_tools_drop_the_pruned_definitions(target: str) -> None:
    chef = allowed_chef()
    chef.tools.allow_only(["run_tests"])
    payload = chef.compile(target=target)
    assert defined_names(payload, target) == ["run_tests", "context"]
    assert "tool_choice" not in json.dumps(payload)
    validate(payload, target)


def test_nothing_pruned_sends_no_tool_choice() -> None:
    chef = allowed_chef()
    chef.tools.allow_only(NAMES)
    assert "tool_choice" not in chef.compile(target="openai")


def test_defer_loading_reaches_anthropic_only() -> None:
    deferred = {
        **tool("search_docs", "Search the docs.", {"q": {"type": "string"}}),
        "defer_loading": True,
    }
    chef = ContextChef()
    chef.tools.register([*TOOLS, deferred])
    chef.set_history([{"role": "user", "content": "hi"}])
    payload = chef.compile(target="anthropic")
    sent = next(t for t in payload["tools"] if t["name"] == "search_docs")
    assert sent["defer_loading"] is True
    assert list(sent) == sorted(sent)  # byte-stable key order
    validate_request(payload)
    for target in TARGETS:
        if target != "anthropic":
            payload = chef.compile(target=target)
            assert "defer_loading" not in json.dumps(payload)
            validate(payload, target)


def test_a_bad_defer_loading_is_refused() -> None:
    from contextchef import ToolDefinitionError

    with pytest.raises(ToolDefinitionError, match="tool 'x': defer_loading must be True or False"):
        ContextChef().tools.register([{**tool("x", "d"), "defer_loading": "yes"}])
