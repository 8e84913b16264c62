"""Text shared by both tool vocabularies: placement, overflow and the offload and handoff shells.

Every sentence the model reads lives in this package; this module holds what reads the same
whatever vocabulary the chef compiles with. The byte-stability tests watch it: changing a
string here changes compiled payloads (and so invalidates provider prompt caches) on purpose.
Nothing here is computed from the clock or from randomness.
"""

from __future__ import annotations

import json

__all__ = [
    "ANCHORED_INSTRUCTION",
    "CLEARED_TOOL_RESULT",
    "COMPACTION_INSTRUCTION",
    "CONVERSATION_CONTINUES",
    "CONVERSATION_OPENS_WITH_ASSISTANT",
    "CONVERSATION_STARTS",
    "ERROR_LINES_HEADER",
    "EXTRA_INSTRUCTIONS_HEADER",
    "GUIDELINES_HEADER",
    "HANDOFF_REMAINING",
    "MEMORY_CHANGES_HEADER",
    "MEMORY_IMPORTANCE_NOTE",
    "NO_TOOL_RESULT",
    "OFFLOAD_SHOWN",
    "STATE_ANCHOR",
    "SYSTEM_STATE_HEADER",
    "VIEW_RANGE",
    "archive_citation",
    "attachment_placeholder",
    "context_notice",
    "offloaded_output",
    "prefill_instruction",
    "quote_for_model",
    "reset_notice",
    "summary_wrapper",
    "thinking_as_text",
    "tool_result_stub",
    "xml_output_instruction",
]

# Follows the memory block when a fact shown has an importance (any number the host chose).
MEMORY_IMPORTANCE_NOTE = "A higher <importance> marks a fact that matters more."

# Placeholders ensure_valid_history inserts where a provider would reject the history. A
# history that opens with the assistant gets a user turn first: it says so, or, when the history
# opened with results of calls it does not hold (dropped), that earlier conversation is omitted.
CONVERSATION_OPENS_WITH_ASSISTANT = "[The conversation begins with the assistant's turn below.]"
CONVERSATION_CONTINUES = "[Earlier conversation omitted; the dialogue continues from here.]"
NO_TOOL_RESULT = "[The tool returned no result.]"

# Stands in for the conversation when it has no messages yet (every target sends it as a user
# turn: providers reject or misread a request without one). Nothing was omitted, unlike
# CONVERSATION_CONTINUES.
CONVERSATION_STARTS = "[No messages yet; start as your instructions direct.]"

# Closes the tail stitch whenever it carries live state, so the model reads it as context for
# its next step rather than as a request to answer.
STATE_ANCHOR = "The block above is the live state of the task; let it steer your next step."

# Heads the dynamic state when it is placed in a system message of its own.
SYSTEM_STATE_HEADER = "Live task state:"

# Heads the memory changes delivered in the tail: the memory block in the instructions stays
# as it was rendered (so the cached prefix survives a memory write) until the next point where
# the prefix changes anyway, and what changed since then is listed here.
MEMORY_CHANGES_HEADER = (
    "Memory changed after your instructions were written. Each entry below replaces any entry "
    "with the same key shown there; an entry marked removed is no longer in memory."
)


def thinking_as_text(thinking: str, text: str | None) -> str:
    """An assistant turn's reasoning kept as text before its reply, for a target that cannot
    take another provider's thinking blocks (`preserve_thinking_as_text`)."""
    return f"<thinking>\n{thinking}\n</thinking>\n\n{text or ''}"


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


# -- offload and handoff: the shells each vocabulary fills with its own instruction ---------


def offloaded_output(how: str, *, lines: int, chars: int, shown: str, error_lines: int) -> str:
    """The block that stands in for the middle of an offloaded tool result; `how` is the
    vocabulary's sentence on where to read the full output."""
    plural = error_lines != 1
    kept = (
        f"; {error_lines} line{'s' if plural else ''} that look{'' if plural else 's'} like "
        f"{'errors are' if plural else 'an error is'} kept below"
        if error_lines
        else ""
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


def context_notice(save: str) -> str:
    """The one-per-window warning that the window is nearly full; `save` is the vocabulary's
    advice on keeping what matters."""
    return (
        "<context_notice>\n"
        f"About {HANDOFF_REMAINING} tokens of this context window remain before older turns are "
        f"summarised and leave it. {save}\n"
        "</context_notice>"
    )


VIEW_RANGE = (
    "[first, last] line numbers to show, 1-based and inclusive; -1 as last reads to the end. "
    "For a directory, the same range over its listing."
)
"""How a `view_range` argument reads, shared by the context tool and `recall_context`."""


def quote_for_model(text: str, limit: int = 200) -> str:
    """`text` in double quotes for an error message, control and format characters escaped and
    anything past `limit` characters elided."""
    shown = text if len(text) <= limit else text[:limit] + "…"
    escaped = "".join(
        char if char.isprintable() and char not in '"\\' else json.dumps(char)[1:-1]
        for char in shown
    )
    return f'"{escaped}"'
