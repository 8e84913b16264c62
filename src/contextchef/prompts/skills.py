"""What the model reads of skills and of the host's announcements.

The skill block carries the active skill's rendered instructions (after the system prompt, or at
the head of the tail); the listing names skills for a host that shows the model what it can
switch to; the announcements block carries the host's standing notices. Nothing here depends on
the vocabulary, the clock or randomness: the same skill and notices give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape

__all__ = [
    "SKILL_ARGUMENTS_LABEL",
    "announcements_block",
    "skill_block",
    "skill_listing_plain",
    "skill_listing_xml",
    "skills_omitted",
]

_ATTRIBUTE = {'"': "&quot;"}

# Appended to a skill's instructions when they hold no argument placeholder, so the arguments
# the skill was activated with still reach the model.
SKILL_ARGUMENTS_LABEL = "ARGUMENTS: "


def skill_block(name: str, instructions: str, base_dir: str | None) -> str:
    """The active skill: its name, where its files are (when it has a folder), and its
    instructions, inside one `<skill_instructions>` element."""
    active = f"The skill {escape(name)} is active"
    lines = [
        f'<skill_instructions skill="{escape(name, _ATTRIBUTE)}">',
        f"{active}: follow its instructions below." if instructions else f"{active}.",
    ]
    if base_dir:
        lines.append(f"The skill's files are under {escape(base_dir)}")
    if instructions:
        lines.extend(("", instructions))
    lines.append("</skill_instructions>")
    return "\n".join(lines)


def skill_listing_plain(entries: Sequence[tuple[str, str, str | None]]) -> list[str]:
    """One line per skill, `- name: description (use when: ...)`."""
    return [
        f"- {name}: {description}" + (f" (use when: {when})" if when else "")
        for name, description, when in entries
    ]


def skill_listing_xml(entries: Sequence[tuple[str, str, str | None]]) -> list[str]:
    """One `<skill>` element per skill, its text escaped."""
    return [
        f'<skill name="{escape(name, _ATTRIBUTE)}"><description>{escape(description)}'
        "</description>"
        + (f"<when_to_use>{escape(when)}</when_to_use>" if when else "")
        + "</skill>"
        for name, description, when in entries
    ]


def skills_omitted(count: int) -> str:
    """Closes a listing cut short by its size limit."""
    return f"... and {count} more skill{'s' if count != 1 else ''} not listed here."


def announcements_block(notices: Sequence[tuple[str, str]]) -> str:
    """The host's standing notices, `(id, text)` in the order they were made, escaped."""
    lines = [
        "<announcements>",
        "Notices from the application that runs this conversation (not from the user):",
    ]
    lines.extend(
        f'<announcement id="{escape(ident, _ATTRIBUTE)}">{escape(text)}</announcement>'
        for ident, text in notices
    )
    lines.append("</announcements>")
    return "\n".join(lines)
