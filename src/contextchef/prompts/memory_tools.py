"""The legacy vocabulary's text: `create_memory`, `modify_memory` and `recall_context`.

Memory is addressed by keys, never by `context://` paths, and nothing here names the `context`
tool: a chef compiling with `tools="legacy"` shows the model only these words about its store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from contextchef.prompts.common import VIEW_RANGE, quote_for_model

__all__ = [
    "CREATE_MEMORY_TOOL_DESCRIPTION",
    "HANDOFF_SAVE",
    "MEMORY_BLOCK_HEADER",
    "MEMORY_INSTRUCTION",
    "MEMORY_NOT_CONFIGURED",
    "MEMORY_READ_ONLY",
    "MEMORY_READ_ONLY_INSTRUCTION",
    "MEMORY_TOOL_PARAMETERS",
    "MODIFY_MEMORY_TOOL_DESCRIPTION",
    "RECALL_TOOL_DESCRIPTION",
    "RECALL_TOOL_PARAMETERS",
    "archive_citation",
    "memory_action_invalid",
    "memory_deleted",
    "memory_exists",
    "memory_key_invalid",
    "memory_key_refused",
    "memory_keys_line",
    "memory_missing",
    "memory_omitted_line",
    "memory_saved",
    "memory_too_large",
    "memory_updated",
    "memory_vetoed",
    "offload_how",
]

CREATE_MEMORY_TOOL_DESCRIPTION = (
    "Save a new fact to long-term memory under a short key. Saved facts are shown to you in "
    "later turns and conversations. Fails if the key already exists; change an existing fact "
    "with modify_memory."
)

MODIFY_MEMORY_TOOL_DESCRIPTION = (
    'Change or remove an existing memory: action "update" replaces its value (and its '
    'description, when given); action "delete" removes it.'
)

MEMORY_TOOL_PARAMETERS: Mapping[str, str] = MappingProxyType(
    {
        "action": 'What to do: "update" or "delete".',
        "description": "Optional: a one-line note on what the memory is for.",
        "key": "A short, stable name for the fact, such as user_name or project/test_command.",
        "value": "The fact to remember (for update: the new value).",
    }
)

RECALL_TOOL_DESCRIPTION = (
    "Read content that was moved out of the conversation to save space, such as a long tool "
    "output or an archived stretch of the conversation, by the context:// URI given where it "
    "was removed. Long content arrives in pages; pass view_range to read further."
)

RECALL_TOOL_PARAMETERS: Mapping[str, str] = MappingProxyType(
    {
        "uri": "The context:// URI to read, exactly as it was given.",
        "view_range": VIEW_RANGE,
    }
)

MEMORY_INSTRUCTION = (
    "You have a long-term memory that lasts across conversations. Save facts worth keeping, "
    "such as the user's preferences, decisions made and project conventions, with "
    "create_memory, and change or remove them with modify_memory. Keep each memory short and "
    "current: update it when a fact changes and delete it once it no longer holds."
)

MEMORY_READ_ONLY_INSTRUCTION = (
    "You have a long-term memory that lasts across conversations; what it holds is shown to you "
    "with your messages. It is read-only in this session: rely on it, but it cannot be changed."
)

MEMORY_BLOCK_HEADER = "Your memory from earlier turns and conversations:"


def memory_keys_line(keys: Sequence[str], *, allowed: bool) -> str:
    """The line under the memory block: the keys the model may write (when the host limits
    them), else the keys shown."""
    names = ", ".join(keys)
    if not allowed:
        return f"Existing memory keys: {names}."
    if not keys:
        return "Memory is read-only here: no memory key may be created, updated or deleted."
    return f"Allowed memory keys: {names}. create_memory and modify_memory accept only these."


def memory_omitted_line(count: int, limit: int, *, writable: bool) -> str:
    """Under a memory block cut at `limit` bytes: how many memories were left out. No legacy
    tool reads them, so the line only invites making room, and only when memory is writable."""
    what = "1 more memory is" if count == 1 else f"{count} more memories are"
    line = f"[{what} stored but not shown, to keep this block under {limit} bytes."
    if writable:
        line += " Delete memories that no longer hold with modify_memory to make room."
    return line + "]"


def offload_how(uri: str) -> str:
    """Where an offloaded tool output went, for the offload notice (no tool reads it here)."""
    return f"The full output is stored at {uri}."


def archive_citation(count: int, uri: str) -> str:
    """Appended to a summary when the evicted messages were archived: where they are kept,
    without inviting a read no legacy tool can do."""
    return f"[The {count} messages this summary replaces are archived at {uri}.]"


HANDOFF_SAVE = "Write down anything you must not lose before then, then carry on."
"""The handoff notice's advice on keeping what matters."""


# The memory tools' replies: keys, never context:// URIs.


def memory_saved(key: str) -> str:
    return f"Saved memory {quote_for_model(key)}."


def memory_updated(key: str) -> str:
    return f"Updated memory {quote_for_model(key)}."


def memory_deleted(key: str) -> str:
    return f"Deleted memory {quote_for_model(key)}."


def memory_exists(key: str) -> str:
    return (
        f"Error: memory {quote_for_model(key)} already exists. Change it with modify_memory "
        '(action "update"), or delete it first.'
    )


def memory_missing(key: str) -> str:
    return f"Error: there is no memory {quote_for_model(key)}. Save it with create_memory first."


def memory_key_invalid(key: str, problem: str) -> str:
    return (
        f"Error: {quote_for_model(key)} cannot be a memory key: {problem}. Use plain names, "
        'optionally separated by "/".'
    )


def memory_key_refused(key: str, allowed: Sequence[str]) -> str:
    if not allowed:
        return f"Error: {quote_for_model(key)} is not an allowed memory key: none may be written."
    return f"Error: {quote_for_model(key)} is not an allowed memory key. Allowed keys: " + (
        ", ".join(allowed) + "."
    )


def memory_too_large(key: str, size: int, limit: int) -> str:
    return (
        f"Error: the value for memory {quote_for_model(key)} is {size} bytes, over the limit of "
        f"{limit} bytes for one memory, so nothing was saved. Save a shorter fact."
    )


def memory_vetoed(key: str) -> str:
    return (
        f"Error: the host rejected the change to memory {quote_for_model(key)}. Do not retry "
        "it; carry on without it or ask the user."
    )


MEMORY_READ_ONLY = (
    "Error: memory is read-only in this session; memories cannot be saved, changed or deleted."
)
MEMORY_NOT_CONFIGURED = "Error: memory is not available in this session; carry on without it."


def memory_action_invalid(action: str) -> str:
    return f'Error: action must be "update" or "delete", got {quote_for_model(action)}.'
