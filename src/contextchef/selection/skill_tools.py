"""The tools an active skill keeps: those its `allowed_tools` names, plus every tool that a
tool call still in the window refers to (a payload must never call a tool it does not define:
providers reject it). Pure and order-preserving, so the same inputs give the same tool list.

The pruner applies the same rule to its own selections; this is the skill's share of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from contextchef.messages import Message

if TYPE_CHECKING:
    from contextchef.adapters.base import ToolDefinition

__all__ = ["called_tool_names", "keep_allowed_tools", "tool_pattern"]


def tool_pattern(entry: str) -> str:
    """The tool-name part of an `allowed_tools` entry: `Bash(git add:*)` names `Bash`."""
    return entry.split("(", 1)[0].strip()


def called_tool_names(messages: Iterable[Message]) -> set[str]:
    """The names of the tools the tool calls in `messages` invoke."""
    names: set[str] = set()
    for message in messages:
        for call in message.get("tool_calls") or ():
            names.add(call["function"]["name"])
    return names


def keep_allowed_tools(
    tools: Sequence[ToolDefinition], allowed: Sequence[str], window: Iterable[Message]
) -> tuple[ToolDefinition, ...]:
    """`tools` restricted to the names `allowed` matches (exactly, or as `*`/`?` patterns) and
    the tools called in `window`, in their registered order."""
    patterns = [tool_pattern(entry) for entry in allowed]
    exact = {p for p in patterns if not any(c in p for c in "*?[")}
    wildcards = [p for p in patterns if p not in exact]
    called = called_tool_names(window)

    def kept(name: str) -> bool:
        return (
            name in exact
            or name in called
            or any(fnmatchcase(name, pattern) for pattern in wildcards)
        )

    return tuple(tool for tool in tools if kept(tool["name"]))
