"""What the library's tools answer in either vocabulary: refusals and results.

The dispatcher serves every library tool whatever the chef's vocabulary, so these replies are
shared. A result starts with "Error: " exactly when the call was refused, and every error says
what to do instead. The legacy memory tools' own replies live in `memory_tools`.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextchef.prompts.common import quote_for_model

__all__ = [
    "ARGUMENTS_NOT_JSON",
    "MEMORY_UNAVAILABLE",
    "NEW_CONTEXT_UNAVAILABLE",
    "STORE_BUSY",
    "TRANSCRIPT_THINKING",
    "anthropic_memory_path_outside",
    "archived_span_header",
    "arguments_not_object",
    "arguments_too_large",
    "bad_path",
    "capability_missing",
    "changed_concurrently",
    "created",
    "deleted",
    "directory_header",
    "edited",
    "entry_description",
    "entry_exists",
    "entry_header",
    "entry_too_large",
    "insert_out_of_range",
    "inserted",
    "is_empty",
    "listing_line",
    "long_line_cut",
    "memory_key_not_allowed",
    "memory_value_too_large",
    "missing_argument",
    "no_matches",
    "nothing_stored",
    "old_str_ambiguous",
    "old_str_not_found",
    "page_footer",
    "path_is_directory",
    "read_only",
    "rename_across_namespaces",
    "rename_onto_itself",
    "renamed",
    "search_by_meaning_note",
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


# Refusals shared by every tool the dispatcher owns.

ARGUMENTS_NOT_JSON = (
    "Error: the tool arguments are not valid JSON. Send them as one JSON object of named fields."
)


def arguments_not_object(kind: str) -> str:
    return (
        f"Error: the tool arguments must be a JSON object, not {kind}. Send them as one JSON "
        "object of named fields."
    )


def arguments_too_large(size: int, limit: int) -> str:
    return (
        f"Error: the tool arguments are {size} bytes, over the limit of {limit} bytes for one "
        "call, so the call was not run. Send less at once: split the content over several calls."
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


def entry_too_large(uri: str, size: int, limit: int) -> str:
    return (
        f"Error: {uri} would be {size} bytes, over the limit of {limit} bytes for one entry, so "
        "nothing was written. Keep only what you need, or split it over several entries."
    )


def memory_value_too_large(uri: str, size: int, limit: int, notes: str | None) -> str:
    """`notes`: the scratchpad's root when the model may write there, to move long text to."""
    advice = (
        f"Keep the fact short, and put longer text in an entry under {notes} instead."
        if notes
        else "Keep the fact short."
    )
    return (
        f"Error: the value for {uri} would be {size} bytes, over the limit of {limit} bytes for "
        f"one memory entry, so nothing was written. {advice}"
    )


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


def changed_concurrently(uri: str) -> str:
    return (
        f"Error: {uri} was changed by someone else while you were editing it, again and again, "
        "so your edit was not saved. View it again to see its current text, then redo the edit."
    )


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


def search_header(count: int, query: str, root: str, *, more: bool = False) -> str:
    where = f"for {quote_for_model(query)} under {root}"
    if more:
        return f"More than {count} matches {where}; the best {count}:"
    return f"{_count(count, 'match', 'matches')} {where}:"


def search_hit(uri: str, snippet: str, by_meaning: bool = False) -> str:
    if by_meaning:
        uri = f"{uri} (by meaning)"
    return f"- {uri}: {snippet}" if snippet else f"- {uri}"


def search_by_meaning_note() -> str:
    return (
        "[Entries marked (by meaning) do not contain the query's text: the semantic index "
        "found them close to it in meaning. Their snippet is the entry's beginning; view one "
        "to check it is what you are looking for.]"
    )


def search_truncated(shown: int) -> str:
    return f"[Only the best {shown} matches are shown. Narrow the path or the query to see others.]"


def no_matches(query: str, root: str) -> str:
    return f"No matches for {quote_for_model(query)} under {root}."


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
