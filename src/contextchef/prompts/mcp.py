"""What an MCP client's model reads from `contextchef mcp`: the server's instructions, the
`search` tool, the memory prompt and the resource template (the `context` tool's own text is
the same as in a payload, from `context_tool` and `replies`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

__all__ = [
    "MEMORY_PROMPT_DESCRIPTION",
    "RESOURCE_TEMPLATE_DESCRIPTION",
    "SEARCH_TOOL_DESCRIPTION",
    "SEARCH_TOOL_PARAMETERS",
    "server_instructions",
    "store_failed",
]


def server_instructions(writable: Sequence[str]) -> str:
    """The server's instructions: what the store holds and which tools reach it."""
    if writable:
        policy = f"The context tool may write to: {', '.join(writable)}; the rest is read-only."
    else:
        policy = "This server is read-only: the context tool refuses every write."
    return (
        "This server keeps a context store whose entries are addressed as "
        "context://<namespace>/<path>: context://memory/ holds durable facts, context://notes/ "
        "is a scratchpad for plans, findings and progress, and context://vfs/ and "
        "context://archive/ hold long tool outputs and earlier conversation parts. Use the "
        "context tool (view, create, str_replace, insert, delete, rename, search) to work with "
        "entries and the search tool to find them in every namespace at once. "
        f"{policy} Every entry is also a resource, and the memory prompt shows the memory block."
    )


SEARCH_TOOL_DESCRIPTION: Final = (
    "Search the context store: list the entries whose content matches query, with a snippet. "
    "Give path to search one namespace or directory (for example context://notes/); leave it "
    "out to search context://memory/, context://notes/, context://vfs/ and context://archive/."
)

SEARCH_TOOL_PARAMETERS: Final[dict[str, Any]] = {
    "properties": {
        "path": {
            "description": (
                "Optional: the namespace or directory to search, as context://<namespace>/ or "
                "context://<namespace>/<directory>/."
            ),
            "type": "string",
        },
        "query": {
            "description": "The text to look for; matching ignores case.",
            "type": "string",
        },
    },
    "required": ["query"],
    "type": "object",
}

MEMORY_PROMPT_DESCRIPTION: Final = (
    "The memory block: every durable fact kept under context://memory/, as an agent shows it "
    "to its model."
)

RESOURCE_TEMPLATE_DESCRIPTION: Final = (
    "An entry of the context store, by namespace (memory, notes, vfs, archive, or another) "
    "and path."
)


def store_failed(reason: str) -> str:
    """A tool call the store could not serve for a reason the model cannot fix."""
    return (
        f"Error: the context store failed: {reason}. This needs the server's operator; try "
        "again later."
    )
