"""The static tool definitions: one frozen object each, the same on every call."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from contextchef.adapters.base import normalize_tool
from contextchef.retrieval import (
    COMMANDS,
    ContextTool,
    FrozenDict,
    FrozenList,
    deep_freeze,
    get_context_tool_definition,
    get_legacy_memory_tool_definitions,
    get_new_context_tool_definition,
    get_recall_tool_definition,
)
from contextchef.retrieval.context_tool import get_context_tool_definition as from_module
from contextchef.store import InMemoryBackend, Store

GETTERS = [
    get_context_tool_definition,
    get_new_context_tool_definition,
    get_recall_tool_definition,
    lambda: get_legacy_memory_tool_definitions()[0],
    lambda: get_legacy_memory_tool_definitions()[1],
    lambda: get_legacy_memory_tool_definitions(["b", "a"])[0],
]


def enums(value: Any) -> list[Any]:
    found = []
    if isinstance(value, dict):
        if "enum" in value:
            found.append(value["enum"])
        for item in value.values():
            found += enums(item)
    return found


@pytest.mark.parametrize("getter", GETTERS)
def test_every_call_returns_the_identical_frozen_object(getter: Any) -> None:
    tool = getter()
    assert getter() is tool
    assert isinstance(tool, dict) and isinstance(tool, FrozenDict)
    with pytest.raises(TypeError, match="frozen"):
        tool["name"] = "other"
    with pytest.raises(TypeError):
        tool["parameters"]["properties"].pop("x", None)
    with pytest.raises(TypeError):
        tool["parameters"]["required"].append("x")
    with pytest.raises(TypeError):
        tool.update(name="x")
    with pytest.raises(TypeError):
        tool["parameters"]["required"] += ["x"]
    assert normalize_tool(tool) == json.loads(json.dumps(tool))


def test_the_context_tool_schema() -> None:
    tool = get_context_tool_definition()
    assert from_module() is tool
    assert ContextTool(Store(InMemoryBackend())).definition() is tool
    assert tool["name"] == "context"
    parameters = tool["parameters"]
    assert parameters["required"] == ["command", "path"]
    assert sorted(parameters["properties"]) == [
        "command",
        "description",
        "file_text",
        "insert_line",
        "insert_text",
        "new_path",
        "new_str",
        "old_str",
        "path",
        "query",
        "view_range",
    ]
    assert enums(tool) == [list(COMMANDS)]  # one enum: the commands, never live keys
    assert parameters["properties"]["insert_line"]["type"] == "integer"
    assert parameters["properties"]["view_range"] == {
        "description": parameters["properties"]["view_range"]["description"],
        "items": {"type": "integer"},
        "type": "array",
    }


def test_legacy_memory_tools() -> None:
    create, modify = get_legacy_memory_tool_definitions()
    assert (create["name"], modify["name"]) == ("create_memory", "modify_memory")
    assert create["parameters"]["required"] == ["key", "value"]
    assert modify["parameters"]["required"] == ["action", "key"]
    assert enums(create) == []
    assert enums(modify) == [["update", "delete"]]
    limited = get_legacy_memory_tool_definitions(["user", "goal"])
    assert limited is get_legacy_memory_tool_definitions(("goal", "user", "goal"))
    assert enums(limited[0]) == [["goal", "user"]]
    assert enums(limited[1]) == [["update", "delete"], ["goal", "user"]]
    assert enums(get_legacy_memory_tool_definitions([])[0]) == []


def test_new_context_and_recall_tools() -> None:
    assert get_new_context_tool_definition()["parameters"] == {
        "properties": {},
        "required": [],
        "type": "object",
    }
    recall = get_recall_tool_definition()
    assert recall["name"] == "recall_context"
    assert recall["parameters"]["required"] == ["uri"]
    assert sorted(recall["parameters"]["properties"]) == ["uri", "view_range"]


def test_copies_are_plain_and_mutable() -> None:
    tool = get_context_tool_definition()
    deep = copy.deepcopy(tool)
    assert type(deep) is dict
    assert type(deep["parameters"]["required"]) is list
    deep["parameters"]["required"].append("x")
    shallow = copy.copy(tool)
    assert type(shallow) is dict
    shallow["name"] = "renamed"
    assert tool["name"] == "context"
    assert pickle.loads(pickle.dumps(tool)) == tool
    assert type(pickle.loads(pickle.dumps(tool))) is FrozenDict


def test_deep_freeze() -> None:
    frozen = deep_freeze({"a": [1, {"b": (2, 3)}]})
    assert frozen == {"a": [1, {"b": [2, 3]}]}
    assert isinstance(frozen["a"], FrozenList)
    assert isinstance(frozen["a"][1], FrozenDict)
    for mutate in (
        lambda: frozen["a"].sort(),
        lambda: frozen["a"].__setitem__(0, 2),
        lambda: frozen["a"][1].setdefault("c", 1),
        lambda: frozen.clear(),
    ):
        with pytest.raises(TypeError):
            mutate()
