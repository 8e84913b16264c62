"""Every sentence the model reads, in one place.

Wording changes are one-file diffs, and the byte-stability tests watch this module: changing a
string here changes compiled payloads (and so invalidates provider prompt caches) on purpose.
Nothing here is computed from the clock or from randomness.
"""

from __future__ import annotations

__all__ = [
    "CONVERSATION_CONTINUES",
    "CONVERSATION_STARTS",
    "NO_TOOL_RESULT",
    "STATE_ANCHOR",
    "SYSTEM_STATE_HEADER",
    "attachment_placeholder",
    "prefill_instruction",
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


def attachment_placeholder(kind: str, label: str) -> str:
    """Names an attachment in a place that takes only text (a system or tool message)."""
    return f"[{kind}: {label}]"
