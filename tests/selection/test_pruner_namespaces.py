"""Namespaces: a group of tools compiles into one tool (`action` enum, `args` the `oneOf` of the
sub-tools' real schemas), and `resolve_namespace` turns the model's call, in each provider's own
shape, back into the original tool and arguments that validate against its schema."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import ToolUseBlock
from google.genai import types as genai
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from openai.types.chat import ChatCompletionMessageFunctionToolCall
from openai.types.responses import ResponseFunctionToolCall

from contextchef import AsyncContextChef, ContextChef, ToolCallError
from contextchef.errors import ToolCollisionError, UnknownToolNameError
from tests.selection.pruner_fixtures import (
    GIT,
    TARGETS,
    TOOLS,
    defined_names,
    defined_tools,
    tool_turn,
    validate,
)

ORIGINAL = {t["name"]: t["parameters"] for t in TOOLS}
CALLS = [
    ("git_commit", {"message": "Fix the parser"}),
    ("git_log", {"limit": 3}),
    ("git_status", {}),
]


def git_chef(chef_type: type[Any] = ContextChef, **pruner: Any) -> Any:
    chef = chef_type(pruner={"namespaces": GIT, **pruner})
    chef.tools.register(TOOLS)
    return chef.set_history([{"role": "user", "content": "Commit the fix."}])


def model_call(target: str, arguments: dict[str, Any], *, sdk: bool, name: str = "git") -> Any:
    """The call of the `name` tool as `target`'s SDK hands it to the host."""
    text = json.dumps(arguments)
    if target == "openai":
        function = {"name": name, "arguments": text}
        if sdk:
            return ChatCompletionMessageFunctionToolCall(
                id="c1", type="function", function=function
            )
        return {"id": "c1", "type": "function", "function": function}
    if target == "openai-responses":
        if sdk:
            return ResponseFunctionToolCall(
                arguments=text, call_id="c1", name=name, type="function_call"
            )
        return {"type": "function_call", "call_id": "c1", "name": name, "arguments": text}
    if target == "anthropic":
        if sdk:
            return ToolUseBlock(id="t1", input=arguments, name=name, type="tool_use")
        return {"type": "tool_use", "id": "t1", "name": name, "input": arguments}
    if sdk:
        return genai.FunctionCall(name=name, args=arguments)
    return {"name": name, "args": arguments}


@pytest.mark.parametrize("sdk", [False, True], ids=["dict", "sdk-object"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_namespace_call_round_trips_to_the_original_tool(target: str, sdk: bool) -> None:
    chef = git_chef()
    payload = chef.compile(target=target)
    validate(payload, target)
    schemas = defined_tools(payload, target)
    assert "git_status" not in schemas and "git" in schemas
    schema = schemas["git"]
    assert schema["properties"]["action"]["enum"] == ["git_status", "git_commit", "git_log"]
    branches = {b["title"]: b for b in schema["properties"]["args"]["oneOf"]}
    for action, arguments in CALLS:
        call = {"action": action, "args": arguments}
        Draft202012Validator(schema["properties"]["action"]).validate(action)
        branch = branches[action]  # the branch the action keys
        assert {k: v for k, v in branch.items() if k != "title"} == ORIGINAL[action]
        Draft202012Validator(branch).validate(arguments)

        name, resolved = chef.tools.resolve_namespace(model_call(target, call, sdk=sdk))

        assert (name, resolved) == (action, arguments)
        Draft202012Validator(ORIGINAL[name]).validate(resolved)


def test_the_namespace_stands_where_its_first_tool_was_and_lists_its_actions() -> None:
    chef = git_chef()
    payload = chef.compile(target="anthropic")
    names = defined_names(payload, "anthropic")
    expected = ["read_file", "write_file", "git", "run_tests", "open_page", "click"]
    assert names == [*expected, "send_email", "context"]
    git = next(t for t in payload["tools"] if t["name"] == "git")
    assert git["description"].startswith("Git commands.\n\n")
    assert "- git_commit: Record staged changes." in git["description"]
    assert git["input_schema"]["required"] == ["action", "args"]
    assert "oneOf" not in git["input_schema"]  # Anthropic refuses a top-level oneOf


def test_pruning_narrows_a_namespace_to_its_kept_actions() -> None:
    chef = git_chef()
    chef.tools.allow_only(["git_commit", "read_file"])
    schemas = defined_tools(chef.compile(target="openai"), "openai")
    assert list(schemas) == ["read_file", "git", "context"]
    assert schemas["git"]["properties"]["action"]["enum"] == ["git_commit"]
    chef.tools.allow_only(["git"])  # a namespace's name selects every action
    schemas = defined_tools(chef.compile(target="openai"), "openai")
    assert schemas["git"]["properties"]["action"]["enum"] == ["git_status", "git_commit", "git_log"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_sub_tool_called_by_its_own_name_stays_defined_flat(target: str) -> None:
    chef = git_chef()
    history = [{"role": "user", "content": "status?"}, *tool_turn("c1", "git_status")]
    payload = chef.set_history(history).compile(target=target)
    assert defined_names(payload, target)[2:4] == ["git", "git_status"]
    validate(payload, target)


def test_a_namespace_called_in_the_window_stays_defined_when_pruned() -> None:
    chef = git_chef()
    history = [
        {"role": "user", "content": "status?"},
        *tool_turn("c1", "git", {"action": "git_status", "args": {}}),
    ]
    chef.set_history(history)
    result = chef.tools.allow_only(["read_file"])
    schemas = defined_tools(chef.compile(target="openai"), "openai")
    assert list(schemas) == ["read_file", "git", "context"]
    assert result.reason("git_log") == "its namespace 'git' is called in the window"


def test_a_call_the_model_got_wrong_raises_with_the_text_to_send_back() -> None:
    chef = git_chef()
    with pytest.raises(ToolCallError) as caught:
        chef.tools.resolve_namespace("git", {"action": "git_push", "args": {}})
    assert caught.value.reply == (
        'Error: the action of the git tool is "git_push"; it must be one of: git_status, '
        'git_commit, git_log. Call again with one of them as "action".'
    )
    with pytest.raises(ToolCallError) as caught:
        chef.tools.resolve_namespace("git", '{"action": "git_log", "args": [3]}')
    assert caught.value.reply.startswith('Error: "args" of the git tool must be a JSON object')
    with pytest.raises(ToolCallError) as caught:
        chef.tools.resolve_namespace("git", "{not json")
    assert "not valid JSON" in caught.value.reply
    # args sent as a JSON string inside the JSON are read too
    assert chef.tools.resolve_namespace("git", {"action": "git_log", "args": '{"limit": 2}'}) == (
        "git_log",
        {"limit": 2},
    )


def test_any_other_call_comes_back_as_it_is() -> None:
    chef = git_chef()
    assert chef.tools.resolve_namespace("read_file", '{"path": "a.py"}') == (
        "read_file",
        {"path": "a.py"},
    )
    assert chef.tools.resolve_namespace({"name": "run_tests", "input": {}}) == ("run_tests", {})


def test_colliding_namespaces_are_refused_by_name_and_change_nothing() -> None:
    with pytest.raises(
        ToolCollisionError, match="'git_log' is in namespace 'git' and in namespace"
    ):
        ContextChef(pruner={"namespaces": {**GIT, "history": {"tools": ["git_log", "read_file"]}}})
    with pytest.raises(ToolCollisionError, match="namespace 'git_status' has the name of a tool"):
        ContextChef(pruner={"namespaces": {"git_status": {"tools": ["git_status"]}}})
    chef = ContextChef(pruner={"namespaces": {"read_file": {"tools": ["git_status"]}}})
    with pytest.raises(ToolCollisionError, match="namespace 'read_file' has the name of a"):
        chef.tools.register(TOOLS)
    assert chef.tools.definitions == []
    chef = ContextChef(pruner={"namespaces": {"git": {"tools": ["git_push"]}}})
    with pytest.raises(UnknownToolNameError, match="namespace 'git': unknown tool name"):
        chef.tools.register(TOOLS)
    assert chef.tools.definitions == []


async def test_the_async_chef_compiles_and_resolves_namespaces_alike() -> None:
    sync, achef = git_chef(), git_chef(AsyncContextChef)
    for target in TARGETS:
        assert json.dumps(await achef.compile(target=target)) == json.dumps(
            sync.compile(target=target)
        )
    call = {"name": "git", "input": {"action": "git_log", "args": {"limit": 1}}}
    assert (
        achef.tools.resolve_namespace(call)
        == sync.tools.resolve_namespace(call)
        == ("git_log", {"limit": 1})
    )


SCALARS = st.sampled_from(
    [({"type": "string"}, st.text(max_size=8)), ({"type": "integer"}, st.integers(-5, 5))]
)


@st.composite
def sub_tools(draw: st.DrawFn) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Two to four tools with random object schemas, and arguments valid for each."""
    out = []
    for index in range(draw(st.integers(2, 4))):
        fields = draw(st.lists(st.sampled_from(["a", "b", "path", "n"]), unique=True, max_size=3))
        properties, arguments = {}, {}
        for name in fields:
            schema, values = draw(SCALARS)
            properties[name] = schema
            arguments[name] = draw(values)
        required = [name for name in fields if draw(st.booleans())]
        definition = {
            "name": f"sub_{index}",
            "description": f"Sub-tool {index}.",
            "parameters": {"type": "object", "properties": properties, "required": required},
        }
        out.append((definition, arguments))
    return out


@settings(max_examples=25, deadline=None)
@given(tools=sub_tools(), target=st.sampled_from(TARGETS), pick=st.integers(0, 3))
def test_any_group_of_schemas_round_trips(
    tools: list[tuple[dict[str, Any], dict[str, Any]]], target: str, pick: int
) -> None:
    definitions = [definition for definition, _ in tools]
    names = [d["name"] for d in definitions]
    chef = ContextChef(pruner={"namespaces": {"group": {"tools": names}}})
    chef.tools.register(definitions)
    payload = chef.compile(target=target)
    validate(payload, target)
    schema = defined_tools(payload, target)["group"]
    definition, arguments = tools[pick % len(tools)]
    branch = next(
        b for b in schema["properties"]["args"]["oneOf"] if b["title"] == definition["name"]
    )
    Draft202012Validator(branch).validate(arguments)
    call = {"action": definition["name"], "args": arguments}
    wire = model_call(target, call, sdk=pick % 2 == 0, name="group")
    resolved = chef.tools.resolve_namespace(wire)
    assert resolved == (definition["name"], arguments)
    Draft202012Validator(definition["parameters"]).validate(resolved[1])
