"""Namespaces: a group of tools compiled into one tool, and its calls resolved back.

The `git` namespace over `git_status` and `git_commit` becomes one tool `git` whose arguments
are `{"action": "git_commit", "args": {...}}`: `action` is an enum of the sub-tools' names and
`args` is the union of their real JSON Schemas, a `oneOf` whose branches are the sub-tools'
schemas titled with the action that selects them. (The union sits inside `args`, not at the top
of the schema: Anthropic refuses a top-level `oneOf`.) `resolve_call` turns the model's call
back into the sub-tool's name and its arguments, so the host runs the tool it always had.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contextchef import prompts
from contextchef.errors import ToolCallError
from contextchef.prompts.tool_selection import (
    NAMESPACE_ACTION_PARAMETER,
    NAMESPACE_ARGS_PARAMETER,
    namespace_action_unknown,
    namespace_args_not_object,
    namespace_description,
    namespace_not_json,
)

if TYPE_CHECKING:
    from contextchef.messages import ToolDefinition

__all__ = ["Namespace", "call_parts", "namespace_tool", "parse_call_arguments", "resolve_call"]


@dataclass(frozen=True, slots=True)
class Namespace:
    """A named group of registered tools, shown to the model as one tool."""

    name: str
    tools: tuple[str, ...]
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"description": self.description, "tools": list(self.tools)}


def namespace_tool(namespace: Namespace, members: Sequence[ToolDefinition]) -> ToolDefinition:
    """The one tool that stands for `members` (the namespace's tools still shown, in order).

    Built with its keys in sorted order, like every normalised tool (members' schemas already
    are), so the payload is byte-stable.
    """
    branches = [
        dict(sorted({**member.get("parameters", _EMPTY), "title": member["name"]}.items()))
        for member in members
    ]
    actions = [member["name"] for member in members]
    parameters = {
        "properties": {
            "action": {
                "description": NAMESPACE_ACTION_PARAMETER,
                "enum": actions,
                "type": "string",
            },
            "args": {"description": NAMESPACE_ARGS_PARAMETER, "oneOf": branches, "type": "object"},
        },
        "required": ["action", "args"],
        "type": "object",
    }
    description = namespace_description(
        namespace.description, [(m["name"], m.get("description", "")) for m in members]
    )
    return {"description": description, "name": namespace.name, "parameters": parameters}


_EMPTY: dict[str, Any] = {"properties": {}, "type": "object"}


def call_parts(call: object, arguments: object = None) -> tuple[str, object]:
    """The name and raw arguments of a tool call in any provider's shape.

    Accepts a name and its arguments, an OpenAI chat tool call (`{"function": {"name",
    "arguments"}}`), a Responses `function_call` item (`name`, `arguments`), an Anthropic
    `tool_use` block (`name`, `input`), a Gemini `function_call` (`name`, `args`), or an SDK
    object of any of these (read through `model_dump()` or its attributes).
    """
    if isinstance(call, str):
        return call, arguments
    data: Mapping[str, Any]
    if isinstance(call, Mapping):
        data = call
    elif callable(getattr(call, "model_dump", None)):
        data = call.model_dump()  # type: ignore[attr-defined]
    else:
        keys = ("name", "arguments", "input", "args", "function")
        data = {key: getattr(call, key) for key in keys if hasattr(call, key)}
    if isinstance(data.get("function"), Mapping):
        data = data["function"]
    name = data.get("name")
    if not isinstance(name, str):
        raise ToolCallError(
            "a tool call needs a string 'name' (an OpenAI tool call, a Responses function_call, "
            "an Anthropic tool_use block or a Gemini function_call)",
            reply=prompts.missing_argument("name"),
        )
    for key in ("arguments", "input", "args"):
        if data.get(key) is not None:
            return name, data[key]
    return name, arguments


def parse_call_arguments(raw: object, *, tool: str) -> dict[str, Any]:
    """A call's arguments as a dict: a JSON object string, a mapping, or None for `{}`."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str | bytes | bytearray):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            raise ToolCallError(
                f"the arguments of the {tool} call are not valid JSON",
                reply=namespace_not_json(tool),
            ) from None
    if not isinstance(raw, Mapping):
        raise ToolCallError(
            f"the arguments of the {tool} call are not a JSON object",
            reply=prompts.arguments_not_object(_kind(raw)),
        )
    return {str(key): value for key, value in raw.items()}


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    return "null" if value is None else f"a {type(value).__name__}"


def resolve_call(
    namespace: Namespace, actions: Sequence[str], arguments: object
) -> tuple[str, dict[str, Any]]:
    """The sub-tool and arguments a namespace call stands for; `ToolCallError` (with the text
    to send back) when the action is not one of `actions` or `args` is not an object."""
    args = parse_call_arguments(arguments, tool=namespace.name)
    action = args.get("action")
    if not isinstance(action, str) or action not in actions:
        raise ToolCallError(
            f"the {namespace.name} call names action {action!r}, not one of {list(actions)}",
            reply=namespace_action_unknown(namespace.name, action, actions),
        )
    inner = args.get("args", {})
    if isinstance(inner, str):  # args sent as a JSON string inside the JSON
        with contextlib.suppress(ValueError, RecursionError):
            inner = json.loads(inner) if inner.strip() else {}
    if inner is None:
        inner = {}
    if not isinstance(inner, Mapping):
        raise ToolCallError(
            f"the args of the {namespace.name} call ({action}) are not a JSON object",
            reply=namespace_args_not_object(namespace.name, action),
        )
    return action, {str(key): value for key, value in inner.items()}
