"""Tools, histories and payload readers shared by the pruner tests: a coding agent's tool set,
the tool names and schemas a payload defines for each target, and the SDK validators."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

TARGETS = ("openai", "openai-responses", "anthropic", "gemini")
LIBRARY = {"context"}


def tool(
    name: str,
    description: str,
    properties: Mapping[str, Any] | None = None,
    *,
    required: list[str] | None = None,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties or {})}
    if required:
        schema["required"] = required
    out: dict[str, Any] = {"name": name, "description": description, "parameters": schema}
    if tags:
        out["tags"] = tags
    return out


STRING = {"type": "string"}
TOOLS = [
    tool("read_file", "Read a file of the repository.", {"path": STRING}, required=["path"]),
    tool("write_file", "Write a file.", {"path": STRING, "text": STRING}, required=["path"]),
    tool("git_status", "Show the working tree status.", tags=["vcs"]),
    tool("git_commit", "Record staged changes.", {"message": STRING}, required=["message"]),
    tool("git_log", "Show recent commits.", {"limit": {"type": "integer", "minimum": 1}}),
    tool("run_tests", "Run the test suite with pytest.", {"pattern": STRING}, tags=["testing"]),
    tool("open_page", "Open a web page.", {"url": STRING}, required=["url"], tags=["web"]),
    tool("click", "Click an element of the open page.", {"selector": STRING}, tags=["web"]),
    tool("send_email", "Send an email to a colleague.", {"to": STRING, "body": STRING}),
]
NAMES = [t["name"] for t in TOOLS]
GIT = {"git": {"tools": ["git_status", "git_commit", "git_log"], "description": "Git commands."}}
BROWSER = {"browser": {"tools": ["open_page", "click"], "description": "Drive a web browser."}}


def call(call_id: str, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments or {})},
    }


def tool_turn(call_id: str, name: str, arguments: Mapping[str, Any] | None = None) -> list[Any]:
    """An assistant call of `name` and its result, as a host stores them."""
    return [
        {"role": "assistant", "content": None, "tool_calls": [call(call_id, name, arguments)]},
        {"role": "tool", "tool_call_id": call_id, "content": "done"},
    ]


def defined_tools(payload: Mapping[str, Any], target: str) -> dict[str, dict[str, Any]]:
    """Tool name → its JSON schema, as `target`'s payload defines them (in order)."""
    if target == "openai":
        return {t["function"]["name"]: t["function"]["parameters"] for t in payload["tools"]}
    if target == "openai-responses":
        return {t["name"]: t["parameters"] for t in payload["tools"]}
    if target == "anthropic":
        return {t["name"]: t["input_schema"] for t in payload["tools"]}
    declarations = payload["config"]["tools"][0]["function_declarations"]
    return {d["name"]: d["parameters_json_schema"] for d in declarations}


def defined_names(payload: Mapping[str, Any], target: str) -> list[str]:
    return list(defined_tools(payload, target))


def validate(payload: Mapping[str, Any], target: str) -> None:
    """The payload passes the official SDK's request types for `target` (the SDKs load here,
    not on import: a fresh process that needs only the tools starts in a fraction of the time)."""
    from tests.adapters.sdk_anthropic import validate_request as validate_anthropic
    from tests.adapters.sdk_gemini import validate_gemini
    from tests.adapters.sdk_openai import validate_chat, validate_responses

    validators: dict[str, Callable[[Mapping[str, Any]], Any]] = {
        "openai": validate_chat,
        "openai-responses": validate_responses,
        "anthropic": validate_anthropic,
        "gemini": validate_gemini,
    }
    validators[target](payload)
