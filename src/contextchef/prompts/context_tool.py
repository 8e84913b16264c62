"""The unified vocabulary's text: the `context` and `new_context` tools and the context store.

Everything is addressed as `context://<namespace>/<path>`, and nothing here names the legacy
memory tools: a chef compiling with `tools="unified"` (the default) shows the model only these
words about its store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from contextchef.prompts.common import VIEW_RANGE

__all__ = [
    "CONTEXT_STORE_INSTRUCTION",
    "CONTEXT_TOOL_DESCRIPTION",
    "CONTEXT_TOOL_DESCRIPTION_BY_MEANING",
    "CONTEXT_TOOL_PARAMETERS",
    "HANDOFF_SAVE",
    "NEW_CONTEXT_STARTED",
    "NEW_CONTEXT_TOOL_DESCRIPTION",
    "UNIFIED_MEMORY_BLOCK_HEADER",
    "handoff_save",
    "memory_keys_line",
    "memory_omitted_line",
    "offload_how",
    "store_instruction",
]

CONTEXT_TOOL_DESCRIPTION = (
    "Read and write the context store, where everything kept outside your context window "
    "lives. Entries are addressed as context://<namespace>/<path>:\n"
    "- context://memory/ holds durable facts; what it holds is shown to you on every turn.\n"
    "- context://notes/ is your scratchpad for plans, findings and progress; it costs "
    "nothing until you view it.\n"
    "- context://vfs/ holds full tool outputs that were too long to show inline, and "
    "context://archive/ earlier parts of this conversation; both are read-only.\n"
    "Commands:\n"
    '- view: show an entry with numbered lines, or list a directory (a path ending in "/"). '
    "Long results arrive in pages; pass view_range to read further.\n"
    "- create: write a new entry from file_text; fails if the entry already exists.\n"
    "- str_replace: replace the one exact occurrence of old_str with new_str.\n"
    "- insert: add insert_text before the 0-based line insert_line.\n"
    "- delete: remove an entry.\n"
    "- rename: move an entry to new_path in the same namespace.\n"
    "- search: list the entries under path whose content matches query, with a snippet."
)

CONTEXT_TOOL_DESCRIPTION_BY_MEANING = (
    CONTEXT_TOOL_DESCRIPTION
    + " Where the store can search by meaning, entries close to query in meaning are listed "
    "too, marked (by meaning)."
)
"""The description when the chef's store has a semantic index (`Store(index=...)`)."""

CONTEXT_TOOL_PARAMETERS: Mapping[str, str] = MappingProxyType(
    {
        "command": "The operation to run.",
        "description": (
            "Optional, for create, str_replace and insert: a one-line description kept with "
            "the entry and shown next to it in listings."
        ),
        "file_text": "create: the full content of the new entry.",
        "insert_line": (
            "insert: the 0-based line to insert before; 0 inserts at the top and the entry's "
            "line count appends at the end."
        ),
        "insert_text": "insert: the text to insert, one or more lines.",
        "new_path": "rename: the new path, in the same namespace.",
        "new_str": "str_replace: the replacement text; leave it out to delete old_str.",
        "old_str": (
            "str_replace: the exact text to replace, whitespace included; it must occur "
            "exactly once."
        ),
        "path": (
            "The entry or directory, as context://<namespace>/<path> or <namespace>/<path>. A "
            'path ending in "/", or a bare namespace, is a directory.'
        ),
        "query": "search: the text to look for; matching ignores case.",
        "view_range": f"view: {VIEW_RANGE}",
    }
)

NEW_CONTEXT_TOOL_DESCRIPTION = (
    "Start a fresh context window. Call it at a natural break once the conversation has grown "
    "long: the earlier conversation is replaced by a summary and you continue from there. "
    "Before calling it, make sure anything you must not lose is saved."
)

NEW_CONTEXT_STARTED = (
    "A fresh context window begins with your next turn; the earlier conversation will be "
    "replaced by a summary."
)

_STORE_INTRO = (
    "Everything that leaves your context window is kept in a context store that you reach "
    "with the context tool, at addresses of the form context://<namespace>/<path>."
)
_STORE_MEMORY = (
    "context://memory/ holds durable facts and is shown to you on every turn; keep it short "
    "and current."
)
_STORE_MEMORY_READ_ONLY = (
    "context://memory/ holds durable facts and is shown to you on every turn; it is "
    "read-only to you."
)
_STORE_NOTES = (
    "context://notes/ is your scratchpad for plans, findings and progress; it is shown only "
    "when you view it."
)
_STORE_RECALL = (
    "Long tool outputs are kept under context://vfs/ and earlier parts of the conversation "
    "under context://archive/; view them when you need the details."
)
_STORE_COMMANDS = (
    "The context tool's commands are view, create, str_replace, insert, delete, rename and search."
)


def memory_omitted_line(count: int, limit: int) -> str:
    """Under a memory block cut at `limit` bytes: how many entries were left out and how to
    read them."""
    what = "1 more memory entry is" if count == 1 else f"{count} more memory entries are"
    return (
        f"[{what} stored but not shown, to keep this block under {limit} bytes. View "
        "context://memory/ to list every entry, and view an entry to read it.]"
    )


def store_instruction(*, memory: bool, memory_writable: bool, notes_writable: bool) -> str:
    """The system text on the store: memory is named only when it is configured, and invited
    to be written only when it may be; the scratchpad only when notes/ may be written."""
    parts = [_STORE_INTRO]
    if memory:
        parts.append(_STORE_MEMORY if memory_writable else _STORE_MEMORY_READ_ONLY)
    if notes_writable:
        parts.append(_STORE_NOTES)
    parts += [_STORE_RECALL, _STORE_COMMANDS]
    return " ".join(parts)


CONTEXT_STORE_INSTRUCTION = store_instruction(
    memory=True, memory_writable=True, notes_writable=True
)
"""The store instruction with writable memory and notes (the default policy)."""

UNIFIED_MEMORY_BLOCK_HEADER = "Memory (context://memory/) currently holds:"


def memory_keys_line(keys: Sequence[str], *, allowed: bool) -> str:
    """The line under the memory block: the entries the model may write (when the host limits
    them), else the entries shown."""
    names = ", ".join(f"context://memory/{key}" for key in keys)
    if not allowed:
        return f"Memory entries shown: {names}."
    if not keys:
        return "Memory is read-only here: no memory entry may be written."
    return f"Writable memory entries: {names}. No other memory path may be written."


def offload_how(uri: str) -> str:
    """Where an offloaded tool output went and how to read it, for the offload notice."""
    return f"Read it with the context tool: view {uri} (use view_range for a part)."


def handoff_save(*, notes: bool, memory: bool, new_context: bool) -> str:
    """The handoff notice's advice on keeping what matters: it names only the namespaces the
    model may write and `new_context` only when it is offered."""
    places = [
        *(["notes/ for working notes"] if notes else []),
        *(["memory/ for lasting facts"] if memory else []),
    ]
    fresh = ", or call new_context to start a fresh window" if new_context else ""
    if not places:
        return f"Carry on{fresh}."
    where = ", ".join(places)
    return f"Save what you must not lose with the context tool ({where}), then carry on{fresh}."


HANDOFF_SAVE = handoff_save(notes=True, memory=True, new_context=True)
"""The handoff notice's advice with writable notes and memory, and `new_context` offered."""
