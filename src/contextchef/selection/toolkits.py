"""Lazy toolkits: tools kept out of the payload until the model asks for them.

A toolkit is a named set of registered tools (or namespaces). Until it is loaded, its tools are
left out of the payload and the model sees instead a `load_toolkit` tool and a directory block
listing every toolkit (escaped: a description cannot break out of it). The host routes the
model's `load_toolkit` call to `chef.handle_tool`, which loads the toolkit; its tools are in the
payload from the next compile on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contextchef.prompts.tool_selection import (
    LOAD_TOOLKIT_DESCRIPTION,
    LOAD_TOOLKIT_PARAMETER,
    toolkit_already_loaded,
    toolkit_directory,
    toolkit_loaded,
    toolkit_unknown,
)

if TYPE_CHECKING:
    from contextchef.messages import ToolDefinition

__all__ = [
    "LOAD_TOOLKIT",
    "Toolkit",
    "directory_text",
    "find_toolkit",
    "load_reply",
    "load_toolkit_tool",
]

LOAD_TOOLKIT = "load_toolkit"
"""The name of the tool that loads a toolkit."""


@dataclass(frozen=True, slots=True)
class Toolkit:
    """A named set of registered tools (or namespaces), loaded on demand."""

    name: str
    tools: tuple[str, ...]
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"description": self.description, "tools": list(self.tools)}


def load_toolkit_tool(toolkits: Sequence[Toolkit]) -> ToolDefinition:
    """The `load_toolkit` tool: one argument, an enum of every toolkit's name (loaded or not,
    so the definition stays the same as toolkits load)."""
    return {
        "description": LOAD_TOOLKIT_DESCRIPTION,
        "name": LOAD_TOOLKIT,
        "parameters": {
            "properties": {
                "toolkit": {
                    "description": LOAD_TOOLKIT_PARAMETER,
                    "enum": [toolkit.name for toolkit in toolkits],
                    "type": "string",
                }
            },
            "required": ["toolkit"],
            "type": "object",
        },
    }


def directory_text(toolkits: Sequence[Toolkit], loaded: Sequence[str]) -> str:
    """The directory block the model reads next to the system prompt."""
    done = set(loaded)
    return toolkit_directory([(t.name, t.description, t.tools, t.name in done) for t in toolkits])


def find_toolkit(toolkits: Sequence[Toolkit], name: object) -> Toolkit | None:
    """The toolkit called `name` (exactly, or else without regard to case), or None."""
    if not isinstance(name, str):
        return None
    for toolkit in toolkits:
        if toolkit.name == name:
            return toolkit
    folded = name.strip().casefold()
    for toolkit in toolkits:
        if toolkit.name.casefold() == folded:
            return toolkit
    return None


def load_reply(
    toolkits: Sequence[Toolkit], loaded: Sequence[str], name: object
) -> tuple[str, Toolkit | None]:
    """The tool result for a `load_toolkit` call, and the toolkit to load (None: nothing
    changes: an unknown name, or a toolkit already loaded)."""
    toolkit = find_toolkit(toolkits, name)
    if toolkit is None:
        return toolkit_unknown(name, [t.name for t in toolkits]), None
    if toolkit.name in loaded:
        return toolkit_already_loaded(toolkit.name), None
    return toolkit_loaded(toolkit.name, toolkit.tools), toolkit
