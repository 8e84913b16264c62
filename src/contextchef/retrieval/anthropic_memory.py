"""Serve Anthropic's native memory tool (`memory_20250818`) from the context store.

Claude models are trained on that tool: a `/memories` directory it views, creates, edits,
renames and deletes files in, with the argument names `command`, `path`, `file_text`,
`old_str`, `new_str`, `insert_line`, `insert_text`, `view_range`, `old_path` and `new_path`.
The `context` tool uses the same names, so a call needs only its paths mapped:
`/memories/<path>` becomes `context://<namespace>/<path>` (and `/memories` the namespace root),
and `rename`'s `old_path` becomes `path`. The call then runs through `ContextTool.run` with all
its checks (access policy, path rules, Memory's allowed keys and veto) and its results.

The namespace is `memory` by default, so facts written through Anthropic's tool are Memory
entries and appear in the compiled memory block as well. Pass `namespace="notes"` to keep them
as on-demand files instead (Anthropic's own behaviour: the model views `/memories` when it
wants them). Deleting a whole directory is refused, like `context` `delete`.

    if block.type == "tool_use" and block.name == "memory":
        result = handle_anthropic_memory(chef_context_tool, block.input)
"""

from __future__ import annotations

from typing import Final

from contextchef import prompts
from contextchef._effects import Flow, drive_async, drive_sync
from contextchef.retrieval.arguments import ToolInputError, parse_arguments
from contextchef.retrieval.context_tool import ContextTool
from contextchef.store.paths import URI_PREFIX, validate_namespace

__all__ = [
    "ANTHROPIC_MEMORY_ROOT",
    "ahandle_anthropic_memory",
    "anthropic_memory_path",
    "handle_anthropic_memory",
]

ANTHROPIC_MEMORY_ROOT: Final = "/memories"


def anthropic_memory_path(path: str, namespace: str = "memory") -> str | None:
    """`/memories/a/b.md` → `context://<namespace>/a/b.md`; `/memories` (or `/memories/`) →
    `context://<namespace>/`; None for a path outside `/memories`. The result is not checked
    against the path rules here: the context tool does that, and says what is wrong."""
    validate_namespace(namespace)
    text = path.strip()
    if text in (ANTHROPIC_MEMORY_ROOT, ANTHROPIC_MEMORY_ROOT + "/"):
        return f"{URI_PREFIX}{namespace}/"
    if text.startswith(ANTHROPIC_MEMORY_ROOT + "/"):
        return f"{URI_PREFIX}{namespace}/{text[len(ANTHROPIC_MEMORY_ROOT) + 1 :]}"
    return None


def handle_anthropic_memory(
    context_tool: ContextTool, tool_input: object, *, namespace: str = "memory"
) -> str:
    """Run one `memory_20250818` call (its `input`, as a dict or JSON string) against
    `context_tool`; the result text, `Error: …` when the call was refused. Paths already
    written as `context://` URIs are passed through unchanged."""
    return drive_sync(_flow(context_tool, tool_input, namespace))


async def ahandle_anthropic_memory(
    context_tool: ContextTool, tool_input: object, *, namespace: str = "memory"
) -> str:
    """`handle_anthropic_memory`, awaited (for `AsyncContextChef` and async stores)."""
    return await drive_async(_flow(context_tool, tool_input, namespace))


def _flow(context_tool: ContextTool, tool_input: object, namespace: str) -> Flow[str]:
    try:
        args = parse_arguments(tool_input)
    except ToolInputError as exc:
        return exc.text
    if args.get("command") == "rename" and "path" not in args and "old_path" in args:
        args["path"] = args.pop("old_path")
    for name in ("path", "new_path"):
        raw = args.get(name)
        if not isinstance(raw, str) or not raw.strip() or raw.strip().startswith(URI_PREFIX):
            continue
        mapped = anthropic_memory_path(raw, namespace)
        if mapped is None:
            return prompts.anthropic_memory_path_outside(raw)
        args[name] = mapped
    return (yield from context_tool.flow(args))
