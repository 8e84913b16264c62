"""The tools an active skill allows: its `allowed_tools` entries matched against the registered
tools. The pruner receives them as an allow-list (`also_allowed`), so a skill narrows the tools
the way a selection does, and a tool that a call still in the window refers to is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextchef.messages import ToolDefinition

__all__ = ["skill_allowed_names", "tool_pattern"]


def tool_pattern(entry: str) -> str:
    """The tool-name part of an `allowed_tools` entry: `Bash(git add:*)` names `Bash`."""
    return entry.split("(", 1)[0].strip()


def skill_allowed_names(tools: Sequence[ToolDefinition], allowed: Sequence[str]) -> tuple[str, ...]:
    """The names of `tools` that `allowed` matches (exactly, or as `*`/`?` patterns), in their
    registered order: the allow-list the pruner receives as `also_allowed`."""
    patterns = [tool_pattern(entry) for entry in allowed]
    exact = {p for p in patterns if not any(c in p for c in "*?[")}
    wildcards = [p for p in patterns if p not in exact]
    return tuple(
        tool["name"]
        for tool in tools
        if tool["name"] in exact or any(fnmatchcase(tool["name"], p) for p in wildcards)
    )
