"""The data the window report draws: one `ReportTurn` per compile and `ReportEvent`s.

Kept apart from the rendering so any producer of compiles (the demo's run, one inspected
compile) builds these plain values and hands them to `report.render_report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from contextchef.errors import ConfigError

LAYERS = ("tools", "system", "memory", "history", "tail")
"""The layers of a window in the order the provider reads them, drawn bottom up (the stable
prefix at the bottom); a layer of another name is drawn above them."""

EVENT_KINDS = ("overflow", "offload", "memory", "context", "note", "exceeded")
"""The event kinds the chart marks; an event of another kind only appears in the table."""


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


__all__ = ["EVENT_KINDS", "LAYERS", "ReportEvent", "ReportFigures", "ReportTurn"]
