"""Every sentence the model reads, in one place.

Wording changes are one-file diffs, and the byte-stability tests watch this module: changing a
string here changes compiled payloads (and so invalidates provider prompt caches) on purpose.
Nothing here is computed from the clock or from randomness.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Literal

__all__ = [
    "ANCHORED_INSTRUCTION",
    "CLEARED_TOOL_RESULT",
    "COMPACTION_INSTRUCTION",
    "CONVERSATION_CONTINUES",
    "CONVERSATION_STARTS",
    "ERROR_LINES_HEADER",
    "EXTRA_INSTRUCTIONS_HEADER",
    "GUIDELINES_HEADER",
    "HANDOFF_REMAINING",
    "NO_TOOL_RESULT",
    "OFFLOAD_SHOWN",
    "STATE_ANCHOR",
    "SYSTEM_STATE_HEADER",
    "ToolsMode",
    "archive_citation",
    "attachment_placeholder",
    "handoff_notice",
    "offload_notice",
    "prefill_instruction",
    "reset_notice",
    "summary_wrapper",
    "tool_result_stub",
    "xml_output_instruction",
]

# Placeholders ensure_valid_history inserts where a provider would reject the history.
CONVERSATION_CONTINUES = "[Earlier conversation omitted; the dialogue continues from here.]"
NO_TOOL_RESULT = "[The tool returned no result.]"

# Stands in for the conversation when a provider refuses a request with no messages at all
# (Gemini needs at least one content).
CONVERSATION_STARTS = "[No messages yet; start as your instructions direct.]"

# Closes the tail stitch whenever it carries live state, so the model reads it as context for
# its next step rather than as a request to answer.
STATE_ANCHOR = "The block above is the live state of the task; let it steer your next step."

# Heads the dynamic state when it is placed in a system message of its own.
SYSTEM_STATE_HEADER = "Live task state:"


def xml_output_instruction(tag: str) -> str:
    """The guardrail that asks for the whole answer inside `<tag>…</tag>`."""
    return (
        '<system_reminder kind="output_format">\n'
        f"Write your entire reply inside <{tag}> and </{tag}>, with nothing before the opening "
        "tag or after the closing one. This reminder comes from the system; do not answer it.\n"
        "</system_reminder>"
    )


def prefill_instruction(prefill: str) -> str:
    """Where a provider cannot prefill the reply, ask the model to begin with the text itself."""
    return (
        '<system_reminder kind="reply_start">\n'
        "Begin your reply with exactly the following text, then continue from it:\n"
        f"{prefill}\n"
        "</system_reminder>"
    )


# -- overflow: summaries and compaction -----------------------------------------------------

COMPACTION_INSTRUCTION = (
    "The conversation above is about to leave the context window. Write a summary that lets "
    "you carry on the task without it. Keep: the user's goals and every constraint they set; "
    "decisions made and why; files, commands, identifiers and numbers that matter; what was "
    "tried and failed; open questions; and the next step. Leave out pleasantries and anything "
    "already settled that will not matter again. Write plain prose or terse bullet points, "
    "and put the summary between <summary> and </summary>."
)

ANCHORED_INSTRUCTION = (
    "The conversation above is about to leave the context window. Below, between <anchor> and "
    "</anchor>, is the running summary of everything that left it earlier. Rewrite that "
    "summary so it also covers the conversation above: keep what still matters, add what is "
    "new, update what changed, and drop only what is settled and will not matter again. Put "
    "the whole updated summary between <summary> and </summary>.\n\n<anchor>\n{anchor}\n</anchor>"
)

GUIDELINES_HEADER = "Guidelines for this summary:"
EXTRA_INSTRUCTIONS_HEADER = "Further instructions:"


def summary_wrapper(summary: str, *, window: str | None = None) -> str:
    """The user message that stands in for the evicted span at the head of the history."""
    lineage = f"Context window: {window}.\n" if window else ""
    return (
        "<conversation_summary>\n"
        f"{lineage}"
        "The earlier part of this conversation no longer fits the context window; this is a "
        "summary of it. Continue the task from where it stands, without repeating finished work "
        "and without asking about what the summary already answers.\n\n"
        f"{summary}\n"
        "</conversation_summary>"
    )


def tool_result_stub(name: str, chars: int) -> str:
    """Replaces a large tool result in what the summarizer reads."""
    return f"[{name} output of {chars} characters, left out of this summary input]"


def attachment_placeholder(kind: str, label: str | None) -> str:
    """Stands in for an image or document the summarizer cannot read."""
    return f"[{kind}: {label}]" if label else f"[{kind}]"


CLEARED_TOOL_RESULT = "[This tool result was cleared to save context space.]"


def reset_notice(window: str, previous: str | None) -> str:
    """The note that replaces the history when the `reset` strategy clears the window."""
    earlier = f" (the one before was {previous})" if previous else ""
    return (
        f"The context window was reset: this is window {window}{earlier}. The earlier "
        "conversation was cleared; messages marked as pinned were kept."
    )


def archive_citation(count: int, uri: str) -> str:
    """Appended to a summary when the evicted messages were archived."""
    return (
        f"[The {count} messages this summary replaces are archived in full at {uri}; read them "
        "there when you need exact details the summary leaves out.]"
    )


# -- tools modes: which tool names the model-facing text may mention ------------------------

ToolsMode = Literal["legacy", "unified"]


def offload_notice(
    mode: ToolsMode, *, uri: str, lines: int, chars: int, shown: str, error_lines: int
) -> str:
    """The block that stands in for the middle of an offloaded tool result."""
    plural = error_lines != 1
    kept = (
        f"; {error_lines} line{'s' if plural else ''} that look{'' if plural else 's'} like "
        f"{'errors are' if plural else 'an error is'} kept below"
        if error_lines
        else ""
    )
    how = (
        f"Read it with the context tool: view {uri} (use view_range for a part)."
        if mode == "unified"
        else f"The full output is stored at {uri}."
    )
    return (
        "<offloaded_output>\n"
        f"This tool output was too long to keep in full ({lines} lines, {chars} characters); "
        f"{shown}{kept}.\n{how}\n"
        "</offloaded_output>"
    )


OFFLOAD_SHOWN = {
    (True, True): "its start is shown above and its end below",
    (True, False): "its start is shown above",
    (False, True): "its end is shown below",
    (False, False): "no preview is shown",
}

ERROR_LINES_HEADER = "Lines from the omitted part that look like errors:"


HANDOFF_REMAINING = "{n_remaining}"


def handoff_notice(mode: ToolsMode) -> str:
    """The default one-per-window warning that the window is nearly full."""
    save = (
        "Save what you must not lose with the context tool (notes/ for working notes, memory/ "
        "for lasting facts), then carry on, or call new_context to start a fresh window."
        if mode == "unified"
        else "Write down anything you must not lose before then, then carry on."
    )
    return (
        "<context_notice>\n"
        f"About {HANDOFF_REMAINING} tokens of this context window remain before older turns are "
        f"summarised and leave it. {save}\n"
        "</context_notice>"
    )


# -- retrieval: the context tool, memory and tool dispatch ----------------------------------
#
# What the model reads about the context store: the tool definitions (`context`, `new_context`,
# `recall_context` and the legacy `create_memory` / `modify_memory`), the memory instruction and
# block of each vocabulary, and every result those tools return. A result starts with "Error: "
# exactly when the call was refused, and every error says what to do instead. Texts of the
# legacy vocabulary never name the `context` tool; texts of the unified one never name the
# legacy memory tools.

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
        "view_range": (
            "view: [first, last] line numbers to show, 1-based and inclusive; -1 as last reads "
            "to the end. For a directory, the same range over its listing."
        ),
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

RECALL_TOOL_DESCRIPTION = (
    "Read content that was moved out of the conversation to save space, such as a long tool "
    "output or an archived stretch of the conversation, by the context:// URI given where it "
    "was removed. Long content arrives in pages; pass view_range to read further."
)

RECALL_TOOL_PARAMETERS: Mapping[str, str] = MappingProxyType(
    {
        "uri": "The context:// URI to read, exactly as it was given.",
        "view_range": CONTEXT_TOOL_PARAMETERS["view_range"].removeprefix("view: "),
    }
)

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

MEMORY_INSTRUCTION = (
    "You have a long-term memory that lasts across conversations. Save facts worth keeping, "
    "such as the user's preferences, decisions made and project conventions, with "
    "create_memory, and change or remove them with modify_memory. Keep each memory short and "
    "current: update it when a fact changes and delete it once it no longer holds."
)

CONTEXT_STORE_INSTRUCTION = (
    "Everything that leaves your context window is kept in a context store that you reach "
    "with the context tool, at addresses of the form context://<namespace>/<path>. "
    "context://memory/ holds durable facts and is shown to you on every turn; keep it short "
    "and current. context://notes/ is your scratchpad for plans, findings and progress; it is "
    "shown only when you view it. Long tool outputs are kept under context://vfs/ and earlier "
    "parts of the conversation under context://archive/; view them when you need the details. "
    "The context tool's commands are view, create, str_replace, insert, delete, rename and "
    "search."
)

MEMORY_BLOCK_HEADER = "Your memory from earlier turns and conversations:"
UNIFIED_MEMORY_BLOCK_HEADER = "Memory (context://memory/) currently holds:"


def memory_keys_line(unified: bool, keys: Sequence[str], *, allowed: bool) -> str:
    """The line under the memory block: the keys the model may write (when the host limits
    them), else the keys shown."""
    if unified:
        names = ", ".join(f"context://memory/{key}" for key in keys)
        if not allowed:
            return f"Memory entries shown: {names}."
        if not keys:
            return "Memory is read-only here: no memory entry may be written."
        return f"Writable memory entries: {names}. No other memory path may be written."
    names = ", ".join(keys)
    if not allowed:
        return f"Existing memory keys: {names}."
    if not keys:
        return "Memory is read-only here: no memory key may be created, updated or deleted."
    return f"Allowed memory keys: {names}. create_memory and modify_memory accept only these."


def quote_for_model(text: str, limit: int = 200) -> str:
    """`text` in double quotes for an error message, control and format characters escaped and
    anything past `limit` characters elided."""
    shown = text if len(text) <= limit else text[:limit] + "…"
    escaped = "".join(
        char if char.isprintable() and char not in '"\\' else json.dumps(char)[1:-1]
        for char in shown
    )
    return f'"{escaped}"'


# Refusals shared by every tool the dispatcher owns.

ARGUMENTS_NOT_JSON = (
    "Error: the tool arguments are not valid JSON. Send them as one JSON object of named fields."
)


def arguments_not_object(kind: str) -> str:
    return (
        f"Error: the tool arguments must be a JSON object, not {kind}. Send them as one JSON "
        "object of named fields."
    )


def missing_argument(name: str) -> str:
    return f'Error: the "{name}" argument is missing or empty. Call again with "{name}" set.'


def wrong_argument(name: str, expected: str) -> str:
    return f'Error: the "{name}" argument must be {expected}. Call again with a corrected value.'


def unknown_command(command: str, commands: Sequence[str]) -> str:
    return f"Error: unknown command {quote_for_model(command)}. Use one of: {', '.join(commands)}."


# The context tool's refusals.


def bad_path(path: str, problem: str) -> str:
    return (
        f"Error: the path {quote_for_model(path)} is not valid: {problem}. Write paths as "
        'context://<namespace>/<path> with plain names separated by "/", for example '
        "context://notes/plan.md."
    )


def path_is_directory(uri: str, command: str) -> str:
    return (
        f'Error: {uri} is a directory, but {command} needs an entry (a path not ending in "/"). '
        "View the directory to list its entries."
    )


def nothing_stored(uri: str, parent: str) -> str:
    return f"Error: nothing is stored at {uri}. View {parent} to see what is there."


def entry_exists(uri: str) -> str:
    return f"Error: {uri} already exists. Edit it with str_replace or insert, or delete it first."


def read_only(uri: str, writable: Sequence[str]) -> str:
    if not writable:
        return f"Error: {uri} is read-only, and this tool may not write anywhere in this session."
    return f"Error: {uri} is read-only. This tool may write to: {', '.join(writable)}."


MEMORY_UNAVAILABLE = (
    "Error: context://memory/ is not available: no memory is configured in this session. "
    "Keep what you need in context://notes/ instead."
)


def memory_key_not_allowed(uri: str, allowed: Sequence[str]) -> str:
    if not allowed:
        return f"Error: {uri} is not an allowed memory key: no memory key may be written here."
    return f"Error: {uri} is not an allowed memory key. Allowed keys: {', '.join(allowed)}."


def write_vetoed(uri: str) -> str:
    return (
        f"Error: the host rejected the write to {uri}. Do not retry the same change; carry on "
        "without it or ask the user."
    )


def capability_missing(root: str, missing: Sequence[str]) -> str:
    return (
        f"Error: the storage behind {root} does not support {', '.join(missing)}, so this "
        "command cannot run there. View the entries directly instead."
    )


def store_refused(target: str, reason: str) -> str:
    return f"Error: the store refused the change to {target}: {reason}. Use another path or text."


STORE_BUSY = "Error: the store is busy right now. Make the same call again."


def old_str_not_found(uri: str) -> str:
    return (
        f"Error: old_str was not found in {uri}. View the entry and copy the text exactly, "
        "whitespace included."
    )


def old_str_ambiguous(uri: str, lines: Sequence[int]) -> str:
    where = ", ".join(str(line) for line in lines)
    return (
        f"Error: old_str occurs more than once in {uri} (starting on lines {where}). Include "
        "more of the surrounding text so that it matches exactly once."
    )


def insert_out_of_range(line: int, uri: str, count: int) -> str:
    return (
        f"Error: insert_line {line} is out of range for {uri}, which has {_count(count, 'line')}. "
        f"Use a number from 0 to {count}."
    )


def view_range_invalid(problem: str) -> str:
    return (
        f"Error: view_range {problem}. Pass [first, last] with 1 <= first <= last, or -1 as last "
        "to read to the end."
    )


def view_range_past_end(first: int, uri: str, count: int, unit: str) -> str:
    return (
        f"Error: view_range starts at {unit} {first}, but {uri} has {_count(count, unit)}. "
        f"Start from 1 to {count}."
    )


def rename_across_namespaces(uri: str, new_uri: str, root: str) -> str:
    return (
        f"Error: rename moves an entry within one namespace, but {new_uri} is outside {root}. "
        f"Create the entry there and delete {uri} instead."
    )


def rename_onto_itself(uri: str) -> str:
    return f"Error: new_path names {uri} itself. Give the new path the entry should move to."


# The context tool's results.


def created(uri: str) -> str:
    return f"Created {uri}."


def edited(uri: str) -> str:
    return f"Edited {uri}."


def inserted(uri: str, first: int, count: int) -> str:
    if count == 1:
        return f"Inserted 1 line into {uri}; it is now line {first}."
    return f"Inserted {count} lines into {uri}; they are now lines {first}-{first + count - 1}."


def deleted(uri: str) -> str:
    return f"Deleted {uri}."


def renamed(uri: str, new_uri: str) -> str:
    return f"Renamed {uri} to {new_uri}."


def entry_header(uri: str, first: int, last: int, total: int, *, whole: bool) -> str:
    if whole:
        return f"{uri} ({_count(total, 'line')}):"
    return f"{uri}, lines {first}-{last} of {total}:"


def entry_description(description: str) -> str:
    return f"Description: {description}"


def is_empty(uri: str) -> str:
    return f"{uri} is empty."


def directory_header(uri: str, first: int, last: int, total: int, *, whole: bool) -> str:
    if whole:
        return f"{uri} ({_count(total, 'entry')}):"
    return f"{uri}, entries {first}-{last} of {total}:"


def listing_line(uri: str, description: str | None) -> str:
    return f"- {uri} — {description}" if description else f"- {uri}"


def page_footer(unit: str, first: int, last: int, total: int, next_last: int) -> str:
    return (
        f"[Showing {_plural(unit)} {first}-{last} of {total}. To read on, call again with "
        f"view_range "
        f"[{last + 1}, {next_last}].]"
    )


def long_line_cut(line: int, shown: int, total: int) -> str:
    return (
        f"[Line {line} is {total} characters long; only its first {shown} are shown. Search "
        "for a phrase to find text further along it.]"
    )


def search_header(count: int, query: str, root: str) -> str:
    return f"{_count(count, 'match', 'matches')} for {quote_for_model(query)} under {root}:"


def search_hit(uri: str, snippet: str) -> str:
    return f"- {uri}: {snippet}" if snippet else f"- {uri}"


def search_truncated(shown: int, total: int) -> str:
    return (
        f"[Showing the first {shown} of {total} matches. Narrow the path or the query to see "
        "the others.]"
    )


def no_matches(query: str, root: str) -> str:
    return f"No matches for {quote_for_model(query)} under {root}."


# The legacy memory tools (create_memory, modify_memory): keys, never context:// URIs.


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


NEW_CONTEXT_UNAVAILABLE = (
    "Error: starting a new context window is not available in this session. Carry on in this one."
)


# Anthropic's native memory tool (memory_20250818), served from the same store.


def anthropic_memory_path_outside(path: str) -> str:
    return (
        f"Error: memory paths start with /memories, but got {quote_for_model(path)}. Use a path "
        "such as /memories/notes.md, or /memories to list everything."
    )


# Archived conversation spans, rendered as a transcript when the model reads them back.


def archived_span_header(count: int) -> str:
    return f"[Archived conversation: {_count(count, 'message')}]"


def transcript_speaker(role: str) -> str:
    return f"{role}:"


def transcript_tool_result(name: str | None) -> str:
    return f"[tool result for {name}]" if name else "[tool result]"


def transcript_tool_call(name: str, arguments: str) -> str:
    return f"[tool call] {name}({arguments})"


TRANSCRIPT_THINKING = "[thinking]"


def transcript_attachment(kind: str, label: str | None) -> str:
    return f"[attachment: {kind} {label}]" if label else f"[attachment: {kind}]"


def _plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


def _count(count: int, noun: str, plural: str | None = None) -> str:
    return f"1 {noun}" if count == 1 else f"{count} {plural or _plural(noun)}"


__all__ += [  # the retrieval section above
    "ARGUMENTS_NOT_JSON",
    "CONTEXT_STORE_INSTRUCTION",
    "CONTEXT_TOOL_DESCRIPTION",
    "CONTEXT_TOOL_PARAMETERS",
    "CREATE_MEMORY_TOOL_DESCRIPTION",
    "MEMORY_BLOCK_HEADER",
    "MEMORY_INSTRUCTION",
    "MEMORY_NOT_CONFIGURED",
    "MEMORY_READ_ONLY",
    "MEMORY_TOOL_PARAMETERS",
    "MEMORY_UNAVAILABLE",
    "MODIFY_MEMORY_TOOL_DESCRIPTION",
    "NEW_CONTEXT_STARTED",
    "NEW_CONTEXT_TOOL_DESCRIPTION",
    "NEW_CONTEXT_UNAVAILABLE",
    "RECALL_TOOL_DESCRIPTION",
    "RECALL_TOOL_PARAMETERS",
    "STORE_BUSY",
    "TRANSCRIPT_THINKING",
    "UNIFIED_MEMORY_BLOCK_HEADER",
    "anthropic_memory_path_outside",
    "archived_span_header",
    "arguments_not_object",
    "bad_path",
    "capability_missing",
    "created",
    "deleted",
    "directory_header",
    "edited",
    "entry_description",
    "entry_exists",
    "entry_header",
    "insert_out_of_range",
    "inserted",
    "is_empty",
    "listing_line",
    "long_line_cut",
    "memory_action_invalid",
    "memory_deleted",
    "memory_exists",
    "memory_key_invalid",
    "memory_key_not_allowed",
    "memory_key_refused",
    "memory_keys_line",
    "memory_missing",
    "memory_saved",
    "memory_updated",
    "memory_vetoed",
    "missing_argument",
    "no_matches",
    "nothing_stored",
    "old_str_ambiguous",
    "old_str_not_found",
    "page_footer",
    "path_is_directory",
    "quote_for_model",
    "read_only",
    "rename_across_namespaces",
    "rename_onto_itself",
    "renamed",
    "search_header",
    "search_hit",
    "search_truncated",
    "store_refused",
    "transcript_attachment",
    "transcript_speaker",
    "transcript_tool_call",
    "transcript_tool_result",
    "unknown_command",
    "view_range_invalid",
    "view_range_past_end",
    "write_vetoed",
    "wrong_argument",
]
