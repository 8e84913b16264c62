"""Announcements: short standing notices from the host, shown on every compile until retracted.

Each has an id (announcing an id again replaces its text in place), a text and a channel:
`"tail"` puts it at the end of the prompt, with the live state, so it never changes the cached
prefix; `"system"` puts it in a system message after the system prompt and memory (more weight,
but adding, changing or retracting one re-sends everything after it uncached); `"auto"` (the
default) chooses the place that keeps the cached prefix: the tail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from contextchef import prompts
from contextchef.errors import ConfigError

__all__ = ["Announcement", "Channel", "announcement_blocks", "make_announcement"]

Channel = Literal["auto", "system", "tail"]


@dataclass(frozen=True, slots=True)
class Announcement:
    """One standing notice: `id`, `text`, and the `channel` it was announced on."""

    id: str
    text: str
    channel: Channel = "auto"

    @property
    def placement(self) -> Literal["system", "tail"]:
        """Where it goes: `"auto"` resolves to the tail, which keeps the cached prefix."""
        return "system" if self.channel == "system" else "tail"


def make_announcement(ident: object, text: object, channel: object) -> Announcement:
    """Check `announce()`'s arguments (a `ConfigError` naming the bad one) and build it."""
    if not isinstance(ident, str) or not ident.strip():
        raise ConfigError(f"an announcement id must be a non-empty string, got {ident!r}")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"announcement {ident!r}: the text must be a non-empty string")
    if channel not in get_args(Channel):
        raise ConfigError(
            f"announcement {ident!r}: channel must be 'auto', 'system' or 'tail', got {channel!r}"
        )
    return Announcement(ident, text, channel)  # type: ignore[arg-type]


def announcement_blocks(
    announcements: Sequence[Announcement],
) -> tuple[str | None, str | None]:
    """The system block and the tail block of `announcements` (None where there are none)."""
    system = [(a.id, a.text) for a in announcements if a.placement == "system"]
    tail = [(a.id, a.text) for a in announcements if a.placement == "tail"]
    return (
        prompts.announcements_block(system) if system else None,
        prompts.announcements_block(tail) if tail else None,
    )
