"""The data the window report draws: one `ReportTurn` per compile and `ReportEvent`s.

Kept apart from the rendering so any producer of compiles (the demo's run, one inspected
compile) builds these plain values and hands them to `report.render_report`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextchef.errors import ConfigError
from contextchef.payload import Payload

LAYERS = ("tools", "system", "memory", "history", "tail")
"""The layers of a window in the order the provider reads them, drawn bottom up (the stable
prefix at the bottom); a layer of another name is drawn above them."""

EVENT_KINDS = ("overflow", "offload", "memory", "context", "note", "exceeded")
"""The event kinds of an agent's run (the demo's); the chart marks them and the `repair` and
`breakpoint` of an inspected compile each in its own way, any other kind as a grey square."""


@dataclass(frozen=True)
class ReportTurn:
    """One compile: its turn number, tokens per layer, the window size, and the share (0-1) of
    its prompt bytes reusable from the previous compile (None for the first, or when unknown)."""

    turn: int
    layers: Mapping[str, int]
    window: int
    reuse: float | None = None

    def __post_init__(self) -> None:
        bad = {name: tokens for name, tokens in self.layers.items() if tokens < 0}
        if bad:
            raise ConfigError(f"ReportTurn {self.turn}: negative token counts {bad}")
        if self.window <= 0:
            raise ConfigError(f"ReportTurn {self.turn}: the window must be positive")
        if self.reuse is not None and not 0.0 <= self.reuse <= 1.0:
            raise ConfigError(f"ReportTurn {self.turn}: reuse {self.reuse} is not within 0..1")

    @property
    def total(self) -> int:
        """The tokens in the window."""
        return sum(self.layers.values())


@dataclass(frozen=True)
class ReportEvent:
    """Something that happened at a turn: `kind` (see `EVENT_KINDS`), a line of text, and the
    `context://` URI where what left the window now lives, if any."""

    turn: int
    kind: str
    text: str
    uri: str | None = None


@dataclass(frozen=True)
class ReportFigures:
    """Label and value pairs shown above the chart (a run's summary), in order."""

    rows: Sequence[tuple[str, str]] = field(default_factory=tuple)


_SYSTEM_KEYS = ("system", "instructions")
_SEQUENCE_KEYS = ("messages", "input", "contents")


def payload_layers(payload: Payload, count_text: Callable[[str], int]) -> dict[str, int]:
    """Tokens per layer of one compiled payload, for a `ReportTurn`: `payload.meta.tokens`,
    with the `<memory>` block counted (by `count_text`, the chef's tokenizer) apart from the
    layer it sits in — the system part (memory placed after the system prompt) or the tail
    (placed before the history's tail)."""
    figures = payload.meta.tokens
    system_part: list[Any] = [payload.get(key) for key in _SYSTEM_KEYS]
    config = payload.get("config")
    if isinstance(config, Mapping):
        system_part.append(config.get("system_instruction"))
    conversation: list[Any] = next(
        (payload[key] for key in _SEQUENCE_KEYS if isinstance(payload.get(key), list)), []
    )
    lead = 0
    while lead < len(conversation) and _is_system_message(conversation[lead]):
        lead += 1
    system_part.extend(conversation[:lead])
    in_system = min(figures.system, sum(map(count_text, _memory_blocks(system_part))))
    in_tail = min(figures.tail, sum(map(count_text, _memory_blocks(conversation[lead:]))))
    return {
        "tools": figures.tools,
        "system": figures.system - in_system,
        "memory": in_system + in_tail,
        "history": figures.history,
        "tail": figures.tail - in_tail,
    }


def _is_system_message(message: Any) -> bool:
    return isinstance(message, Mapping) and message.get("role") in ("system", "developer")


_MEMORY_TAGS = ("memory", "memory_changes")
"""The memory block, and the changes made since it was rendered (delivered at the tail so the
cached prefix holds; see docs/concepts/caching.md)."""


def _memory_blocks(value: Any) -> Iterator[str]:
    """Every `<memory>` and `<memory_changes>` element in the strings of `value`, however
    nested."""
    if isinstance(value, str):
        for tag in _MEMORY_TAGS:
            start = value.find(f"<{tag}>")
            end = value.find(f"</{tag}>", start)
            if start >= 0 and end > start:
                yield value[start : end + len(f"</{tag}>")]
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _memory_blocks(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _memory_blocks(item)


__all__ = [
    "EVENT_KINDS",
    "LAYERS",
    "ReportEvent",
    "ReportFigures",
    "ReportTurn",
    "payload_layers",
]
