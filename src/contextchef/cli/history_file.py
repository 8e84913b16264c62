"""Reading a conversation file in any provider's native format, and the compile inputs beside it.

A history file is JSON: either a list (OpenAI Chat messages, Responses input items, Anthropic
messages or Gemini contents) or a request-shaped object holding one (`messages` plus an optional
`system`; `input` plus optional `instructions`; `contents` plus an optional `system_instruction`,
also under `config`). With no `--from`, every format whose shape fits is tried in a fixed order
(openai, openai-responses, anthropic, gemini) and the first importer that accepts the file
wins; when none does, the error names every format tried and why each refused.

Repairs are left to the chef (`set_history`), so they show up in `payload.meta.repairs`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextchef.cli._common import UserError, fail, read_text
from contextchef.errors import ContextChefError

if TYPE_CHECKING:  # the importers load when a history is read, not when the CLI starts
    from contextchef.adapters.importing import ImportedHistory
    from contextchef.messages import Message

__all__ = [
    "FORMATS",
    "LoadedHistory",
    "detect_history",
    "load_history",
    "load_json",
    "load_state",
    "load_system",
    "load_tools",
]

FORMATS = ("openai", "openai-responses", "anthropic", "gemini")
"""The native history formats, in the order auto-detection tries them."""

_OPENAI_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_ROLES: dict[str, frozenset[Any] | tuple[Any, ...]] = {
    "openai": _OPENAI_ROLES,
    "anthropic": ("user", "assistant", "system"),
}
_RESPONSES_TYPES = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "item_reference"}
)


@dataclass(frozen=True, slots=True)
class LoadedHistory:
    """An imported conversation: the format it was read as, its system messages and history."""

    format: str
    system: list[Message]
    history: list[Message]


def load_json(path: Path | str, what: str) -> Any:
    """The JSON value in `path` (`-`: stdin); a missing file or bad JSON is a `UserError`."""
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        fail(
            f"{what} {path} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
            "check the file's syntax",
        )


def _items(value: Any, key: str) -> list[Any] | None:
    items = value.get(key) if isinstance(value, Mapping) else value
    return items if isinstance(items, list) else None


def _shape_problem(fmt: str, data: Any) -> str | None:
    """Why `data` cannot be a history of format `fmt` at a glance, or None when it might be."""
    key = {"openai": "messages", "anthropic": "messages", "openai-responses": "input"}.get(
        fmt, "contents"
    )
    if isinstance(data, Mapping) and key not in data:
        return f"an object needs a {key!r} list"
    if fmt == "openai" and isinstance(data, Mapping) and "system" in data:
        return "a top-level 'system' belongs to an Anthropic request"
    if fmt == "openai-responses" and isinstance(data, Mapping) and isinstance(data[key], str):
        return None
    items = _items(data, key)
    if items is None:
        return f"{key!r} must be a list" if isinstance(data, Mapping) else "not a list"
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            return f"item {index} is a {type(item).__name__}, not an object"
        if fmt == "gemini":
            if "parts" not in item:
                return f"item {index} has no 'parts'"
        elif "parts" in item:
            return f"item {index} has 'parts' (a Gemini content)"
        elif (fmt == "openai" and item.get("role") not in _OPENAI_ROLES) or (
            fmt == "anthropic" and item.get("role") not in ("user", "assistant", "system")
        ):
            return f"item {index} has role {item.get('role')!r}"
        elif fmt == "openai-responses":
            kind = item.get("type") or ("message" if "role" in item else None)
            if kind not in _RESPONSES_TYPES:
                return f"item {index} has type {kind!r}"
    return None


def _gemini_system(data: Mapping[str, Any]) -> Any:
    config = data.get("config")
    if isinstance(config, Mapping) and "system_instruction" in config:
        return config["system_instruction"]
    return data.get("system_instruction")


def _importer(fmt: str, data: Any) -> Callable[[], ImportedHistory]:
    from contextchef.adapters.from_anthropic import from_anthropic
    from contextchef.adapters.from_gemini import from_gemini
    from contextchef.adapters.from_openai import from_openai
    from contextchef.adapters.from_openai_responses import from_openai_responses

    obj = data if isinstance(data, Mapping) else {}
    if fmt == "openai":
        return lambda: from_openai(_items(data, "messages") or [], repair=False)
    if fmt == "openai-responses":
        items = obj.get("input", data)
        return lambda: from_openai_responses(items, obj.get("instructions"), repair=False)
    if fmt == "anthropic":
        return lambda: from_anthropic(
            _items(data, "messages") or [], obj.get("system"), repair=False
        )
    return lambda: from_gemini(_items(data, "contents") or [], _gemini_system(obj), repair=False)


def detect_history(
    data: Any, *, fmt: str | None = None, source: str = "the history"
) -> LoadedHistory:
    """Import `data` as format `fmt`, or as the first format in `FORMATS` that accepts it."""
    if fmt is not None and fmt not in FORMATS:
        fail(f"unknown history format {fmt!r}", f"use one of {', '.join(FORMATS)}")
    tried: list[str] = []
    for candidate in (fmt,) if fmt is not None else FORMATS:
        problem = _shape_problem(candidate, data)
        if problem is None:
            try:
                imported = _importer(candidate, data)()
            except (ContextChefError, TypeError, ValueError, AttributeError) as exc:
                problem = str(exc)
            else:
                if not imported.history and not imported.system:
                    problem = "no messages in it"
                else:
                    return LoadedHistory(candidate, imported.system, imported.history)
        tried.append(f"{candidate}: {problem}")
    if fmt is not None:
        fail(f"{source} is not a valid {fmt} history ({tried[0]})", "fix the file or drop --from")
    raise UserError(
        f"{source} is in no known history format (tried {'; '.join(tried)})",
        "pass a list of messages in one of those formats, or --from to see one format's error",
    )


def load_history(path: Path | str, *, fmt: str | None = None) -> LoadedHistory:
    """Read and import the history file at `path`."""
    return detect_history(load_json(path, "history file"), fmt=fmt, source=str(path))


def load_state(path: Path | str) -> dict[str, Any]:
    """The dynamic state in `path`: a JSON object."""
    state = load_json(path, "state file")
    if not isinstance(state, dict):
        fail(
            f"state file {path} holds a JSON {type(state).__name__}, not an object",
            'write the state as an object such as {"goal": "…", "step": 1}',
        )
    return state


def load_system(path: Path | str) -> str:
    """The system prompt in the text file at `path` (`-`: stdin)."""
    text = read_text(path, "system prompt file")
    if not text.strip():
        fail(f"system prompt file {path} is empty", "write the system prompt into it")
    return text.rstrip("\n")


def load_tools(path: Path | str) -> list[dict[str, Any]]:
    """Tool definitions in `path`: a JSON list of `{name, description, parameters}` objects, or
    tools in any provider's own shape (or a request-shaped object holding a `tools` list)."""
    tools = load_json(path, "tools file")
    if isinstance(tools, Mapping) and isinstance(tools.get("tools"), list):
        tools = tools["tools"]
    if not isinstance(tools, list) or not all(isinstance(tool, Mapping) for tool in tools):
        fail(
            f"tools file {path} must hold a JSON list of tool objects",
            'e.g. [{"name": "read_file", "description": "…", "parameters": {…}}]',
        )
    return [inner for tool in tools for inner in _unwrapped(tool)]


def _unwrapped(tool: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A tool in any provider's shape as plain definitions: OpenAI Chat's `{"type": "function",
    "function": {...}}` and Gemini's `{"function_declarations": [...]}` are unwrapped."""
    inner = tool.get("function")
    if tool.get("type") == "function" and isinstance(inner, Mapping):
        return [dict(inner)]
    declarations = tool.get("function_declarations")
    if isinstance(declarations, list):
        return [dict(item) for item in declarations if isinstance(item, Mapping)]
    return [dict(tool)]
