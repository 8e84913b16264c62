"""Retrieval axis: how the model reaches back into the context store.

- `context_tool`: `ContextTool` runs the `context` tool's seven commands over every namespace,
  with the access policy; `definitions` holds the static, frozen tool definitions.
- `dispatch`: `Dispatcher.owns` / `Dispatcher.handle` for every library-owned tool (`context`,
  `new_context`, the legacy `create_memory`, `modify_memory`, `recall_context`).
- `recall`: archived conversation spans rendered as readable transcripts.
- `refusals`: the text the model reads when the store refuses a call (`store_refusal`).
- `anthropic_memory`: Anthropic's native memory tool served from the same store.
- `arguments`, `paging`, `spaces`, `frozen`: argument and path parsing, pages of long output,
  per-namespace behaviour, immutable JSON.
"""

from contextchef._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
if TYPE_CHECKING:
    from contextchef.retrieval.anthropic_memory import (
        ANTHROPIC_MEMORY_ROOT,
        ahandle_anthropic_memory,
        anthropic_memory_path,
        handle_anthropic_memory,
    )
    from contextchef.retrieval.context_tool import (
        DEFAULT_WRITABLE,
        MAX_SEARCH_HITS,
        RECALL_NAMESPACES,
        ContextTool,
    )
    from contextchef.retrieval.definitions import (
        COMMANDS,
        OWNED_TOOL_NAMES,
        get_context_tool_definition,
        get_legacy_memory_tool_definitions,
        get_new_context_tool_definition,
        get_recall_tool_definition,
    )
    from contextchef.retrieval.dispatch import Dispatcher
    from contextchef.retrieval.frozen import FrozenDict, FrozenList, deep_freeze
    from contextchef.retrieval.paging import MAX_VIEW_CHARS, MAX_VIEW_LINES
    from contextchef.retrieval.recall import render_recalled, render_transcript

__all__ = [
    "ANTHROPIC_MEMORY_ROOT",
    "COMMANDS",
    "DEFAULT_WRITABLE",
    "MAX_SEARCH_HITS",
    "MAX_VIEW_CHARS",
    "MAX_VIEW_LINES",
    "OWNED_TOOL_NAMES",
    "RECALL_NAMESPACES",
    "ContextTool",
    "Dispatcher",
    "FrozenDict",
    "FrozenList",
    "ahandle_anthropic_memory",
    "anthropic_memory_path",
    "deep_freeze",
    "get_context_tool_definition",
    "get_legacy_memory_tool_definitions",
    "get_new_context_tool_definition",
    "get_recall_tool_definition",
    "handle_anthropic_memory",
    "render_recalled",
    "render_transcript",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "contextchef.retrieval.anthropic_memory": (
            "ANTHROPIC_MEMORY_ROOT",
            "ahandle_anthropic_memory",
            "anthropic_memory_path",
            "handle_anthropic_memory",
        ),
        "contextchef.retrieval.context_tool": (
            "DEFAULT_WRITABLE",
            "MAX_SEARCH_HITS",
            "RECALL_NAMESPACES",
            "ContextTool",
        ),
        "contextchef.retrieval.definitions": (
            "COMMANDS",
            "OWNED_TOOL_NAMES",
            "get_context_tool_definition",
            "get_legacy_memory_tool_definitions",
            "get_new_context_tool_definition",
            "get_recall_tool_definition",
        ),
        "contextchef.retrieval.dispatch": ("Dispatcher",),
        "contextchef.retrieval.frozen": ("FrozenDict", "FrozenList", "deep_freeze"),
        "contextchef.retrieval.paging": ("MAX_VIEW_CHARS", "MAX_VIEW_LINES"),
        "contextchef.retrieval.recall": ("render_recalled", "render_transcript"),
    },
)
