"""Test helpers: the parts of a compiled payload, per target, as the provider reads them."""

from __future__ import annotations

import json
from typing import Any

TARGETS = ("openai", "openai-responses", "anthropic", "gemini")


def system_text(payload: Any, target: str) -> str:
    """The text of the system part (what sits before the conversation)."""
    if target == "openai":
        return "\n\n".join(m["content"] for m in payload["messages"] if m["role"] == "system")
    if target == "openai-responses":
        return str(payload.get("instructions", ""))
    if target == "anthropic":
        system = payload.get("system", [])
        return system if isinstance(system, str) else "\n\n".join(b["text"] for b in system)
    parts = payload["config"].get("system_instruction", {}).get("parts", [])
    return "\n\n".join(part["text"] for part in parts)


def conversation(payload: Any, target: str) -> list[Any]:
    """The conversation items (no system messages)."""
    if target == "openai":
        return [m for m in payload["messages"] if m["role"] != "system"]
    if target == "openai-responses":
        return list(payload["input"])
    if target == "anthropic":
        return list(payload["messages"])
    return list(payload["contents"])


def last_user_text(payload: Any, target: str) -> str:
    """The text of the last user turn (where the tail goes)."""
    items = [
        item
        for item in conversation(payload, target)
        if item.get("role") == "user" and item.get("type", "message") == "message"
    ]
    return json.loads(json.dumps(items[-1]), object_hook=_text_only) if items else ""


def _text_only(value: dict[str, Any]) -> Any:
    for key in ("content", "parts"):
        inner = value.get(key)
        if isinstance(inner, str):
            return inner
        if isinstance(inner, list):
            return "\n\n".join(part for part in inner if isinstance(part, str))
    return value.get("text", value)


def tool_names(payload: Any, target: str) -> list[str]:
    tools = payload.get("tools", []) if target != "gemini" else payload["config"].get("tools", [])
    if target == "openai":
        return [tool["function"]["name"] for tool in tools]
    if target == "gemini":
        return [d["name"] for tool in tools for d in tool.get("function_declarations", [])]
    return [tool["name"] for tool in tools]


def dumps(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, ensure_ascii=False)
