"""The window report's chart: inline SVG drawn from `ReportTurn`s and `ReportEvent`s.

A stacked area of the window's composition per turn (each layer one `<path>` with id
`series-<layer>`, the room left as `series-free`), the window size as a dashed line, and one
marker per event whose `<title>` the browser shows on hover, in the colour and shape `MARKS`
gives its kind (the legend is made from the same table). Below it, in a panel of its own with a
0-100 % axis, the share of prompt bytes reusable from the previous turn (`series-reuse`): drawn
over the tokens it read as a line above the window. Pure string building: the same data gives
the same bytes; every text is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from contextchef.cli.report_model import LAYERS, ReportEvent, ReportTurn

LAYER_COLOURS = {
    "system": "#4a5568",
    "memory": "#38a169",
    "history": "#90cdf4",
    "tail": "#f6ad55",
    "tools": "#b794f4",
    "free": "#edf2f7",
}
"""The fill of each layer's area (another layer name is drawn grey)."""


@dataclass(frozen=True, slots=True)
class Mark:
    """How the chart marks an event of one kind: its colour, its shape, and its legend label."""

    colour: str
    shape: str
    """`line` (a vertical line through the window, a triangle above it), `circle` or `square`."""
    label: str


MARKS = {
    "overflow": Mark("#c53030", "line", "overflow: messages summarized into the archive"),
    "exceeded": Mark("#742a2a", "square", "window exceeded"),
    "offload": Mark("#dd6b20", "circle", "offload: a large output moved to the store"),
    "memory": Mark("#2f855a", "square", "memory written"),
    "context": Mark("#319795", "square", "the agent read the store (context tool)"),
    "note": Mark("#d53f8c", "square", "note saved"),
    "repair": Mark("#975a16", "square", "history repaired (ensure_valid_history)"),
    "breakpoint": Mark("#4c51bf", "square", "cache breakpoint"),
}
"""The mark of each event kind the chart knows; any other kind is a grey square (`mark`)."""

_OTHER_COLOUR = "#718096"
REUSE_COLOUR = "#2b6cb0"

_WIDTH = 960
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 890, 56, 380
_REUSE_TOP, _REUSE_BOTTOM = 436, 526
_LANE_OFFLOAD, _LANE_OTHER = 40, 24


def mark(kind: str) -> Mark:
    """The mark of an event of `kind`: its entry in `MARKS`, else a grey square named `kind`."""
    return MARKS.get(kind) or Mark(_OTHER_COLOUR, "square", kind)


def mark_kinds(events: Sequence[ReportEvent]) -> list[str]:
    """The kinds of `events`, as the legend lists them: `MARKS` order, then others by name."""
    present = {event.kind for event in events}
    return [kind for kind in MARKS if kind in present] + sorted(present - set(MARKS))


CHART_STYLE = """
svg.chart { background: #fbfcfe; }
svg.chart text { font: 11px system-ui, sans-serif; fill: #4a5568; }
svg.chart .grid { stroke: #e2e8f0; stroke-width: 1; }
svg.chart .axis { stroke: #718096; stroke-width: 1; }
svg.chart text.panel-title { font-weight: 600; fill: #1d2330; }
svg.chart .window-line { fill: none; stroke: #2d3748; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg.chart .series-reuse { fill: none; stroke-width: 2; }
"""
"""The chart's own CSS: the report page carries it, and so does the SVG the docs show."""


def css_name(kind: str) -> str:
    """`kind` reduced to the characters a CSS class or id may hold."""
    return "".join(char if char.isalnum() or char == "-" else "_" for char in kind) or "_"


def layer_order(turns: Sequence[ReportTurn]) -> list[str]:
    """The layers to draw, bottom up: the known ones in `LAYERS` order, then others by name."""
    present = {name for turn in turns for name in turn.layers}
    return [name for name in LAYERS if name in present] + sorted(present - set(LAYERS))


def nice_step(span: float, ticks: int) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about `ticks` intervals."""
    raw = max(span, 1e-9) / max(ticks, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0):
        if raw <= factor * power:
            return float(factor * power)
    return float(10 * power)


def _num(value: float) -> str:
    """A coordinate with at most one decimal (compact, and stable across runs)."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


class _Scale:
    """Maps turns and token counts to chart coordinates."""

    def __init__(self, turns: Sequence[ReportTurn]) -> None:
        first, last = turns[0].turn, turns[-1].turn
        self.single = first == last
        self.x0: float = first - 0.5 if self.single else first
        self.x1: float = last + 0.5 if self.single else last
        peak = max(max(turn.total, turn.window) for turn in turns)
        self.y_step = nice_step(peak * 1.05, 5)
        self.y_max = self.y_step * math.ceil(peak * 1.05 / self.y_step)

    def x(self, turn: float) -> float:
        return _LEFT + (turn - self.x0) / (self.x1 - self.x0) * (_RIGHT - _LEFT)

    def y(self, tokens: float) -> float:
        return _BOTTOM - tokens / self.y_max * (_BOTTOM - _TOP)

    @staticmethod
    def share(ratio: float) -> float:
        return _REUSE_BOTTOM - ratio * (_REUSE_BOTTOM - _REUSE_TOP)

    def columns(self, turns: Sequence[ReportTurn]) -> list[tuple[float, ReportTurn]]:
        """The x of each turn (a single turn spans the whole width, so it shows as a band)."""
        if self.single:
            return [(_LEFT, turns[0]), (_RIGHT, turns[0])]
        return [(self.x(turn.turn), turn) for turn in turns]


def composition_chart(turns: Sequence[ReportTurn], events: Sequence[ReportEvent]) -> str:
    """The `<svg>` element for `turns` (at least one, sorted by turn) and their `events`."""
    scale = _Scale(turns)
    columns = scale.columns(turns)
    reuse = any(turn.reuse is not None for turn in turns)
    bottom = _REUSE_BOTTOM if reuse else _BOTTOM
    parts = [
        f'<svg class="chart" id="composition" viewBox="0 0 {_WIDTH} {bottom + 44}" role="img" '
        'aria-labelledby="composition-title">',
        '<title id="composition-title">Tokens in the window per turn, by layer</title>',
        *_grid(scale),
        *_areas(scale, columns, layer_order(turns)),
        _window_line(scale, columns),
        *(_reuse_panel(columns) if reuse else ()),
        *_axes(scale, turns, bottom),
        *_markers(scale, events),
        "</svg>",
    ]
    return "\n".join(part for part in parts if part)


def _areas(
    scale: _Scale, columns: list[tuple[float, ReportTurn]], names: list[str]
) -> Iterable[str]:
    below = [0] * len(columns)
    for name in [*names, "free"]:
        if name == "free":
            above = [max(low, turn.window) for low, (_, turn) in zip(below, columns, strict=True)]
        else:
            above = [
                low + turn.layers.get(name, 0)
                for low, (_, turn) in zip(below, columns, strict=True)
            ]
        upper = [f"{_num(x)},{_num(scale.y(v))}" for (x, _), v in zip(columns, above, strict=True)]
        lower = [f"{_num(x)},{_num(scale.y(v))}" for (x, _), v in zip(columns, below, strict=True)]
        path = "M" + " L".join(upper + lower[::-1]) + " Z"
        colour = LAYER_COLOURS.get(name, "#a0aec0")
        peak = max(top - low for top, low in zip(above, below, strict=True))
        yield (
            f'<path class="series series-area" id="series-{escape(name)}" d="{path}" '
            f'fill="{colour}"><title>{escape(name)}: up to {peak:,} tokens</title></path>'
        )
        below = above


def _window_line(scale: _Scale, columns: list[tuple[float, ReportTurn]]) -> str:
    points = " ".join(f"{_num(x)},{_num(scale.y(turn.window))}" for x, turn in columns)
    return (
        f'<polyline class="window-line" id="window-line" points="{points}">'
        "<title>window size</title></polyline>"
    )


def _reuse_panel(columns: list[tuple[float, ReportTurn]]) -> Iterable[str]:
    """The reuse share in its own panel under the tokens, on its own 0-100 % axis; a turn
    without a figure breaks the line."""
    yield (
        f'<text x="{_LEFT}" y="{_REUSE_TOP - 10}" class="panel-title" id="reuse-title">'
        "prompt bytes reusable from the previous turn (prefix cache)</text>"
    )
    for percent in (0, 50, 100):
        y = _num(_Scale.share(percent / 100))
        yield f'<line class="grid" x1="{_LEFT}" x2="{_RIGHT}" y1="{y}" y2="{y}"/>'
        yield (
            f'<text x="{_LEFT - 6}" y="{y}" text-anchor="end" dominant-baseline="middle" '
            f'class="reuse-tick">{percent}%</text>'
        )
    segments: list[str] = []
    pen_down = False
    for x, turn in columns:
        if turn.reuse is None:
            pen_down = False
            continue
        segments.append(f"{'L' if pen_down else 'M'}{_num(x)},{_num(_Scale.share(turn.reuse))}")
        pen_down = True
    yield (
        f'<path class="series series-reuse" id="series-reuse" d="{" ".join(segments)}" '
        f'stroke="{REUSE_COLOUR}"><title>share of prompt bytes reusable from the previous turn'
        "</title></path>"
    )
    yield f'<line class="axis" x1="{_LEFT}" x2="{_LEFT}" y1="{_REUSE_TOP}" y2="{_REUSE_BOTTOM}"/>'
    yield (
        f'<line class="axis" x1="{_LEFT}" x2="{_RIGHT}" y1="{_REUSE_BOTTOM}" y2="{_REUSE_BOTTOM}"/>'
    )


def _grid(scale: _Scale) -> Iterable[str]:
    value = 0.0
    while value <= scale.y_max + 1e-9:
        y = _num(scale.y(value))
        yield f'<line class="grid" x1="{_LEFT}" x2="{_RIGHT}" y1="{y}" y2="{y}"/>'
        yield (
            f'<text x="{_LEFT - 6}" y="{y}" text-anchor="end" dominant-baseline="middle">'
            f"{value:,.0f}</text>"
        )
        value += scale.y_step


def _axes(scale: _Scale, turns: Sequence[ReportTurn], bottom: int) -> Iterable[str]:
    """The token panel's axes, and the turn ticks under the lowest panel (at `bottom`)."""
    yield f'<line class="axis" x1="{_LEFT}" x2="{_RIGHT}" y1="{_BOTTOM}" y2="{_BOTTOM}"/>'
    yield f'<line class="axis" x1="{_LEFT}" x2="{_LEFT}" y1="{_TOP}" y2="{_BOTTOM}"/>'
    if scale.single:
        ticks = [turns[0].turn]
    else:
        step = max(1, round(nice_step(turns[-1].turn - turns[0].turn, 10)))
        first = math.ceil(turns[0].turn / step) * step
        ticks = list(range(first, turns[-1].turn + 1, step))
    for tick in ticks:
        x = _num(scale.x(tick))
        yield f'<text x="{x}" y="{bottom + 16}" text-anchor="middle">{tick}</text>'
    middle = _num((_LEFT + _RIGHT) / 2)
    yield f'<text x="{middle}" y="{bottom + 34}" text-anchor="middle">turn</text>'
    yield (
        f'<text x="14" y="{_num((_TOP + _BOTTOM) / 2)}" text-anchor="middle" '
        f'transform="rotate(-90 14 {_num((_TOP + _BOTTOM) / 2)})">tokens</text>'
    )


def _markers(scale: _Scale, events: Sequence[ReportEvent]) -> Iterable[str]:
    """One `<g class="marker marker-<kind>">` per event, drawn as `mark(kind)` says; its
    `<title>` (shown on hover) holds the URI."""
    for index, event in enumerate(events):
        x = scale.x(event.turn)
        tip = f"turn {event.turn}: {event.text}"
        if event.uri and event.uri not in event.text:
            tip += f" ({event.uri})"
        title = f"<title>{escape(tip)}</title>"
        style = mark(event.kind)
        head = (
            f'<g class="marker marker-{css_name(event.kind)}" id="marker-{index}" '
            f'data-colour="{style.colour}">{title}'
        )
        if style.shape == "line":
            hit = f'<rect x="{_num(x - 4)}" y="{_TOP - 8}" width="8" height="{_BOTTOM - _TOP + 8}" '
            yield (
                f'{head}{hit}fill="transparent"/>'
                f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{_TOP}" y2="{_BOTTOM}" '
                f'stroke="{style.colour}" stroke-width="1.5"/>'
                f'<path d="M{_num(x - 5)},{_TOP - 8} L{_num(x + 5)},{_TOP - 8} '
                f'L{_num(x)},{_TOP} Z" fill="{style.colour}"/></g>'
            )
        elif style.shape == "circle":
            yield (
                f'{head}<circle cx="{_num(x)}" cy="{_LANE_OFFLOAD}" r="4.5" '
                f'fill="{style.colour}" stroke="#ffffff" stroke-width="1"/></g>'
            )
        else:
            yield (
                f'{head}<rect x="{_num(x - 3)}" y="{_LANE_OTHER - 3}" width="6" height="6" '
                f'fill="{style.colour}"/></g>'
            )


__all__ = [
    "LAYER_COLOURS",
    "MARKS",
    "REUSE_COLOUR",
    "Mark",
    "composition_chart",
    "css_name",
    "layer_order",
    "mark",
    "mark_kinds",
    "nice_step",
]
