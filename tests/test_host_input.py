"""Bad host input raises a typed error naming where it is, and leaves the chef as it was.

Each table row is one kind of bad input; the chef starts from a good state, the bad call must
raise the `ContextChefError` subclass of the row (with the message index and field, for
messages), and every target must then compile the same bytes as before. Duplicate tool-call ids
are the one input repaired instead: the payload is strict JSON and the repair is reported.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import typing
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from contextchef import (
    ConfigError,
    ContextChef,
    ContextChefError,
    MessageError,
    StoreError,
    ToolDefinitionError,
)
from contextchef._jsonvalue import MAX_DEPTH
from contextchef.errors import DynamicStateError

TARGETS = ("openai", "openai-responses", "anthropic", "gemini")
LIBRARY_TOOLS = ("context", "new_context", "create_memory", "modify_memory", "recall_context")
HUGE = 10 ** (sys.get_int_max_str_digits() + 10) if sys.get_int_max_str_digits() else None


class Task(BaseModel):
    goal: str


def call(arguments: str, call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "ls", "arguments": arguments}}


def asking(arguments: str) -> list[dict[str, Any]]:
    """A user turn, then an assistant calling `ls` with `arguments`, then its result."""
    return [
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": None, "tool_calls": [call(arguments)]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    ]


def user(**extra: Any) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "hi", **extra}]


def cyclic() -> list[dict[str, Any]]:
    message: dict[str, Any] = {"role": "user", "content": "hi"}
    message["self"] = message
    return [message]


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"n": value}
    return value


def deep_arguments(depth: int) -> str:
    return '{"a": ' + "[" * depth + "]" * depth + "}"


class Opaque:
    pass


# (id, history, the error class, the message index, the field (None: the message itself),
#  a fragment of the error text)
BAD_HISTORIES: list[tuple[str, Any, type[ContextChefError], int | None, str | None, str]] = [
    ("self_reference", cyclic(), MessageError, 0, "self", "contains itself"),
    ("deep_message", user(x=nested(MAX_DEPTH + 50)), MessageError, 0, None, "levels deep"),
    ("very_deep_message", user(x=nested(5000)), MessageError, 0, None, "levels deep"),
    (
        "deep_arguments",
        asking(deep_arguments(MAX_DEPTH + 5)),
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "levels deep",
    ),
    (
        "very_deep_arguments",
        asking(deep_arguments(100_000)),
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "levels deep",
    ),
    ("int_key", [{"role": "user", "content": "hi", 1: "x"}], MessageError, 0, None, "key 1"),
    ("nested_int_key", user(x={"a": {2: "b"}}), MessageError, 0, "x.a", "key 2"),
    ("nan_field", user(x=[1.0, float("nan")]), MessageError, 0, "x[1]", "nan"),
    ("inf_field", user(x={"y": float("-inf")}), MessageError, 0, "x.y", "-inf"),
    ("set_field", user(x={1, 2}), MessageError, 0, "x", "set"),
    ("object_field", user(x=Opaque()), MessageError, 0, "x", "Opaque"),
    (
        "nan_arguments",
        asking('{"a": NaN}'),
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "NaN",
    ),
    (
        "infinity_arguments",
        asking('{"a": [1, -Infinity]}'),
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "-Infinity",
    ),
    (
        "overflow_arguments",
        asking('{"a": 1e999}'),
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "1e999",
    ),
    (
        "huge_int_arguments",
        asking('{"a": ' + "7" * 5000 + "}"),
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "number",
    ),
    ("pinned_string", user(pinned="yes"), MessageError, 0, "pinned", "True or False"),
    ("pinned_none", user(pinned=None), MessageError, 0, "pinned", "True or False"),
    ("breakpoint_int", user(_cache_breakpoint=1), MessageError, 0, "_cache_breakpoint", "True"),
    (
        "dict_arguments",
        [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "ls", "arguments": {"a": 1.5}},
                    }
                ],
            },
        ],
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "JSON string",
    ),
    # issue 23: what used to escape as TypeError / ValueError, or fail every later compile
    ("role_list", [{"role": ["user"], "content": "hi"}], MessageError, 0, "role", "unknown role"),
    ("role_dict", [{"role": {"is": "user"}}], MessageError, 0, "role", "unknown role"),
    (
        "part_type_list",
        user(content=[{"type": ["text"], "text": "x"}]),
        MessageError,
        0,
        "content[0]",
        "unknown content part type ['text']",
    ),
    ("pinned_huge", user(pinned=10**5000), MessageError, 0, "pinned", "True or False"),
    ("surrogate_content", user(content="a\ud800b"), MessageError, 0, "content", "U+D800"),
    (
        "surrogate_part",
        user(content=[{"type": "text", "text": "\udfff"}]),
        MessageError,
        0,
        "content[0].text",
        "lone surrogate",
    ),
    ("surrogate_key", user(**{"k\udc00": 1}), MessageError, 0, None, "key that holds the lone"),
    ("surrogate_extra", user(x={"y": ["ok", "\ud800"]}), MessageError, 0, "x.y[1]", "U+D800"),
    (
        "surrogate_tool_result",
        [*asking("{}")[:2], {"role": "tool", "tool_call_id": "c1", "content": "\ud800"}],
        MessageError,
        2,
        "content",
        "lone surrogate",
    ),
    (
        "surrogate_escape_in_arguments",
        asking('{"path": "\\ud800"}'),
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "lone surrogate",
    ),
    (
        "invalid_arguments",
        asking("{"),
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "not valid JSON",
    ),
    (
        "array_arguments",
        asking("[1, 2]"),
        MessageError,
        1,
        "tool_calls[0].function.arguments",
        "must be a JSON object, got a JSON array",
    ),
    ("history_none", None, ConfigError, None, None, "list of messages"),
    ("history_int", 42, ConfigError, None, None, "list of messages"),
    ("history_one_dict", {"role": "user", "content": "hi"}, ConfigError, None, None, "single"),
]
if HUGE is not None:
    BAD_HISTORIES.append(("huge_int", user(x={"n": HUGE}), MessageError, 0, "x.n", "digits"))


def tool(parameters: Any, name: str = "probe") -> dict[str, Any]:
    return {"name": name, "description": "A probe.", "parameters": parameters}


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def cyclic_schema() -> dict[str, Any]:
    properties: dict[str, Any] = {"type": "object"}
    properties["properties"] = {"self": properties}
    return {"type": "object", "properties": {"a": properties}}


BAD_TOOLS: list[tuple[str, Any, str]] = [
    ("nan_default", [tool(schema(a={"type": "number", "default": float("nan")}))], "nan"),
    ("inf_maximum", [tool(schema(a={"type": "number", "maximum": float("inf")}))], "inf"),
    ("set_enum", [tool(schema(a={"type": "string", "enum": {"x", "y"}}))], "set"),
    ("int_key", [tool({"type": "object", "properties": {1: {"type": "string"}}})], "key 1"),
    ("deep", [tool(schema(a=nested(MAX_DEPTH + 5)))], "levels deep"),
    ("cyclic", [tool(cyclic_schema())], "contains itself"),
    ("object", [tool(schema(a={"type": "string", "default": Opaque()}))], "Opaque"),
    ("not_a_list", None, "list of tool definitions"),
    ("one_dict", tool(schema()), "not one dict"),
    *((f"library_{name}", [tool(schema(), name)], "reserved") for name in LIBRARY_TOOLS),
    ("huge_name", [{"name": 10**5000}], "is invalid"),
    ("huge_schema_type", [tool({"type": 10**5000})], "digits"),
    ("newline_name", [tool(schema(), "ls\n")], "is invalid"),
    ("surrogate_name", [tool(schema(), "ls\ud800")], "is invalid"),
    ("surrogate_description", [{**tool(schema()), "description": "a\udc00"}], "lone surrogate"),
    ("surrogate_schema", [tool(schema(a={"type": "string", "title": "\ud800"}))], "a.title"),
    ("surrogate_property", [tool(schema(**{"a\ud800": {"type": "string"}}))], "lone surrogate"),
    ("surrogate_tag", [{**tool(schema()), "tags": ["x\ud800"]}], "lone surrogate"),
]
if HUGE is not None:
    BAD_TOOLS.append(("huge_int", [tool(schema(a={"type": "integer", "maximum": HUGE}))], "digits"))


def good_chef(tools: str = "unified") -> ContextChef:
    chef = ContextChef(tools=tools, memory={})
    chef.set_system_prompt("Be brief.")
    chef.set_history([*asking('{"path": "."}'), {"role": "assistant", "content": "a.txt"}])
    chef.tools.register([tool(schema(path={"type": "string"}), "ls")])
    chef.set_dynamic_state(Task, {"goal": "list files"})
    return chef


def compiled(chef: ContextChef) -> dict[str, str]:
    """Every target's payload as strict JSON text (a non-strict payload fails here)."""
    return {t: json.dumps(chef.compile(target=t), allow_nan=False) for t in TARGETS}


def refused(chef: ContextChef, change: Callable[[ContextChef], Any], error: type[Exception]) -> Any:
    """Apply a bad `change`: it must raise `error`, and every payload must stay byte-identical."""
    before = compiled(chef)
    with pytest.raises(error) as caught:
        change(chef)
    assert compiled(chef) == before
    return caught.value


@pytest.mark.parametrize(
    ("history", "error", "index", "field", "text"),
    [row[1:] for row in BAD_HISTORIES],
    ids=[row[0] for row in BAD_HISTORIES],
)
def test_a_bad_history_is_refused_naming_the_message_and_field(
    history: Any, error: type[ContextChefError], index: int | None, field: str | None, text: str
) -> None:
    exc = refused(good_chef(), lambda chef: chef.set_history(history), error)
    assert text in str(exc)
    if isinstance(exc, MessageError):
        assert exc.index == index
        if field is not None:
            assert exc.field == field
        elif exc.field is not None:  # a path cut short after 10 steps
            assert "levels more" in exc.field


# (a fault in the role itself is no fault once the role is "system")
MESSAGE_ROWS = [row for row in BAD_HISTORIES if row[2] is MessageError and row[4] != "role"]


@pytest.mark.parametrize(
    ("history", "index"),
    [(row[1], row[3]) for row in MESSAGE_ROWS],
    ids=[row[0] for row in MESSAGE_ROWS],
)
def test_a_bad_system_prompt_or_after_assemble_result_is_refused_too(
    history: Any, index: int
) -> None:
    if index == 0:  # the same fault in a system prompt message
        system = [{**history[0], "role": "system"}]
        refused(good_chef(), lambda chef: chef.set_system_prompt(system), MessageError)
    chef = ContextChef().set_history([{"role": "user", "content": "hi"}])
    chef.use("after_assemble", lambda *_: history)
    with pytest.raises(MessageError) as caught:
        chef.compile()
    assert caught.value.index == index


@pytest.mark.parametrize(
    ("tools", "text"), [row[1:] for row in BAD_TOOLS], ids=[row[0] for row in BAD_TOOLS]
)
@pytest.mark.parametrize("mode", ["unified", "legacy"])
def test_a_bad_tool_is_refused_with_the_reason(tools: Any, text: str, mode: str) -> None:
    chef = good_chef(mode)
    exc = refused(chef, lambda chef: chef.tools.register(tools), ToolDefinitionError)
    assert text in str(exc)
    assert [t["name"] for t in chef.tools.definitions] == ["ls"]


class TypedTask(typing.TypedDict):
    goal: str
    steps: typing.NotRequired[list[str]]


@dataclasses.dataclass
class DataTask:
    goal: str


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (({"goal": "x"},), "a plain dict"),
        (({"type": "object", "properties": {"goal": {"type": "string"}}}, {"goal": "x"}), "JSON"),
    ],
    ids=["plain_dict", "json_schema"],
)
def test_a_dict_as_dynamic_state_schema_says_what_to_pass(args: Any, text: str) -> None:
    exc = refused(good_chef(), lambda chef: chef.set_dynamic_state(*args), DynamicStateError)
    assert text in str(exc)
    assert "pydantic model" in str(exc) and "TypedDict" in str(exc)


@pytest.mark.parametrize(
    "args",
    [
        (Task, {"goal": "x"}),
        (Task(goal="x"),),
        (TypedTask, {"goal": "x"}),
        (DataTask, {"goal": "x"}),
    ],
    ids=["model_class", "model_instance", "typeddict", "dataclass"],
)
def test_every_documented_dynamic_state_schema_is_accepted(args: Any) -> None:
    chef = good_chef().set_dynamic_state(*args)
    assert chef.prompt.dynamic_state is not None
    assert chef.prompt.dynamic_state.data["goal"] == "x"
    compiled(chef)


def test_a_typeddict_state_still_validates() -> None:
    with pytest.raises(DynamicStateError, match="goal"):
        good_chef().set_dynamic_state(TypedTask, {"steps": []})


@pytest.mark.parametrize(
    "meta",
    [{"description": "bad \ud800 text"}, {"tags": ["ok", "\udfff"]}, {"k\ud800": 1}],
    ids=["description", "nested", "key"],
)
def test_a_lone_surrogate_in_meta_is_refused_before_the_backend(meta: dict[str, Any]) -> None:
    store = ContextChef().store
    with pytest.raises(StoreError, match="lone surrogate"):
        store.namespace("notes").put("a.md", "text", meta)
    assert store.namespace("notes").get("a.md") is None


def test_a_lone_surrogate_in_a_memory_description_is_refused() -> None:
    chef = ContextChef(memory={})
    with pytest.raises(StoreError, match="lone surrogate"):
        chef.memory.set("goal", "ship", description="half \udc80 a pair")
    assert chef.memory.get("goal") is None


DUPLICATES = {
    "across_turns": [
        *asking("{}"),
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": None, "tool_calls": [call("{}")]},
        {"role": "tool", "tool_call_id": "c1", "content": "b.txt"},
    ],
    "in_one_message": [
        {"role": "user", "content": "list twice"},
        {"role": "assistant", "content": None, "tool_calls": [call("{}"), call('{"a": 1}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "tool", "tool_call_id": "c1", "content": "b.txt"},
    ],
}


@pytest.mark.parametrize("case", sorted(DUPLICATES))
@pytest.mark.parametrize("target", TARGETS)
def test_a_duplicate_tool_call_id_is_renamed_and_reported(case: str, target: str) -> None:
    chef = ContextChef().set_history(DUPLICATES[case])
    payload = chef.compile(target=target)
    text = json.dumps(payload, allow_nan=False)
    assert "c1_2" in text
    fixes = [fix for fix in payload.meta.repairs if fix.kind == "renamed_duplicate_call_id"]
    assert [fix.index for fix in fixes] == ([4, 5] if case == "across_turns" else [1, 3])
    history = chef.history
    ids = [c["id"] for m in history for c in m.get("tool_calls") or ()]
    results = [m["tool_call_id"] for m in history if m["role"] == "tool"]
    assert ids == ["c1", "c1_2"] and results == ["c1", "c1_2"]
    assert [m.get("content") for m in history if m["role"] == "tool"] == ["a.txt", "b.txt"]


def test_the_renamed_id_skips_ids_already_taken() -> None:
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("{}", "c1_2"), call("{}")]},
        {"role": "tool", "tool_call_id": "c1_2", "content": "x"},
        {"role": "tool", "tool_call_id": "c1", "content": "y"},
        {"role": "assistant", "content": None, "tool_calls": [call("{}")]},
        {"role": "tool", "tool_call_id": "c1", "content": "z"},
    ]
    chef = ContextChef().set_history(history)
    ids = [c["id"] for m in chef.history for c in m.get("tool_calls") or ()]
    assert ids == ["c1_2", "c1", "c1_3"]
    assert [m["tool_call_id"] for m in chef.history if m["role"] == "tool"] == [
        "c1_2",
        "c1",
        "c1_3",
    ]


def deep_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


# (id, set_dynamic_state's arguments, the error class, a fragment of the error text)
BAD_STATES: list[tuple[str, tuple[Any, ...], type[ContextChefError], str]] = [
    ("dataclass_instance", (DataTask(goal="x"),), DynamicStateError, "set_dynamic_state(DataTask"),
    ("huge_int_schema", (10**5000,), ConfigError, "digits"),
    ("huge_int_value", (dict[str, Any], {"n": 10**5000}), DynamicStateError, "value at n"),
    ("deep_list", (list[Any], deep_list(5000)), DynamicStateError, "levels deep"),
    ("deep_field", (dict[str, Any], {"a": deep_list(MAX_DEPTH)}), DynamicStateError, "deep"),
    ("surrogate_value", (Task, {"goal": "x\ud800"}), DynamicStateError, "goal holds the lone"),
    ("surrogate_key", (dict[str, str], {"k\udfff": "v"}), DynamicStateError, "lone surrogate"),
]


@pytest.mark.parametrize(
    ("args", "error", "text"), [row[1:] for row in BAD_STATES], ids=[row[0] for row in BAD_STATES]
)
def test_a_bad_dynamic_state_is_refused_with_a_typed_error(
    args: Any, error: type[ContextChefError], text: str
) -> None:
    exc = refused(good_chef(), lambda chef: chef.set_dynamic_state(*args), error)
    assert text in str(exc)


def waiting_chef() -> ContextChef:
    """A chef whose history ends with a call of `ls` (id c1) waiting for its result."""
    return good_chef().set_history(asking("{}")[:2])


# (id, the call, the error class, the message index, the field, a fragment of the error text):
# the setters that add to the history take the same intake as set_history
BAD_ADDITIONS: list[tuple[str, Callable[[ContextChef], Any], type[ContextChefError], Any]] = [
    (
        "append_surrogate",
        lambda chef: chef.append_history([{"role": "user", "content": "\ud800"}]),
        MessageError,
        (2, "content", "lone surrogate"),
    ),
    (
        "append_role_list",
        lambda chef: chef.append_history([{"role": ["user"]}]),
        MessageError,
        (2, "role", "unknown role"),
    ),
    (
        "response_invalid_arguments",
        lambda chef: chef.add_response(
            {"role": "assistant", "content": None, "tool_calls": [call('{"a": ', "c2")]}
        ),
        MessageError,
        (2, "tool_calls[0].function.arguments", "not valid JSON"),
    ),
    (
        "response_surrogate",
        lambda chef: chef.add_response({"role": "assistant", "content": "ok \udc80"}),
        MessageError,
        (2, "content", "lone surrogate"),
    ),
    (
        "tool_result_surrogate",
        lambda chef: chef.add_tool_result("c1", "a\ud800"),
        MessageError,
        (2, "content", "lone surrogate"),
    ),
    (
        "tool_result_part_surrogate",
        lambda chef: chef.add_tool_result("c1", [{"type": "text", "text": "\ud800"}]),
        MessageError,
        (2, "content[0].text", "lone surrogate"),
    ),
    (
        "tool_result_huge_id",
        lambda chef: chef.add_tool_result(10**5000, "x"),  # type: ignore[arg-type]
        ConfigError,
        (None, None, "digits"),
    ),
]


@pytest.mark.parametrize(
    ("change", "error", "where"),
    [row[1:] for row in BAD_ADDITIONS],
    ids=[row[0] for row in BAD_ADDITIONS],
)
def test_what_is_added_to_the_history_is_refused_like_a_history(
    change: Callable[[ContextChef], Any], error: type[ContextChefError], where: Any
) -> None:
    index, field, text = where
    exc = refused(waiting_chef(), change, error)
    assert text in str(exc)
    if isinstance(exc, MessageError):
        assert (exc.index, exc.field) == (index, field)


def test_text_outside_ascii_that_encodes_is_kept_as_it_is() -> None:
    """Paired surrogates (an emoji, escaped in arguments or not) and other non-ASCII text pass
    the checks, and every target's payload encodes as UTF-8."""
    history = [
        {"role": "user", "content": "café 👍 — 日本"},
        *asking('{"path": "\\ud83d\\udc4d.txt", "note": "é"}')[1:],
    ]
    chef = ContextChef().set_history(history)
    chef.tools.register([{**tool(schema(), "ls"), "description": "Lists 📁 files"}])
    chef.set_dynamic_state(Task, {"goal": "ship 🚀"})
    assert chef.history[0]["content"] == "café 👍 — 日本"
    for target in TARGETS:
        json.dumps(chef.compile(target=target), ensure_ascii=False).encode("utf-8")
