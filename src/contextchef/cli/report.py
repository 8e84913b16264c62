"""The window report: one self-contained HTML page showing what a run's context windows held.

Its input is a small data model — one `ReportTurn` per compile (tokens per layer, the window
size, the share of prompt bytes reusable from the previous compile) and `ReportEvent`s (an
overflow, an offload, a memory write) — so `contextchef demo --report` and any other producer
of compiles feed the same pure `render_report`. The page needs no network and runs no script:
the chart is inline SVG drawn by `report_svg`, hovering a marker shows its `<title>` (the URI),
every string is HTML-escaped, and a Content-Security-Policy forbids loading anything at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from contextchef.cli.report_model import (
    EVENT_KINDS,
    LAYERS,
    ReportEvent,
    ReportFigures,
    ReportTurn,
    payload_layers,
)
from contextchef.cli.report_svg import (
    CHART_STYLE,
    LAYER_COLOURS,
    REUSE_COLOUR,
    composition_chart,
    css_name,
    layer_order,
    mark,
    mark_kinds,
)

_STYLE = (
    """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1040px;
       color: #1d2330; background: #ffffff; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
p.lead { color: #4a5568; margin: 0 0 16px; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 3px 10px 3px 0; vertical-align: top; }
th { color: #4a5568; font-weight: 600; border-bottom: 1px solid #cbd5e0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.kind { font-weight: 600; }
code { font-size: 12px; word-break: break-all; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 6px 0 0; }
.legend span.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 5px;
       vertical-align: -1px; border: 1px solid #a0aec0; }
.legend span.stroke { display: inline-block; width: 22px; margin-right: 5px;
       vertical-align: 4px; border-top: 2px solid; }
.legend span.dashed { border-top: 2px dashed #2d3748; }
.legend span.glyph { display: inline-block; width: 14px; margin-right: 3px; text-align: center; }
svg.chart { width: 100%; height: auto; border: 1px solid #e2e8f0; }
svg.chart .marker:hover { opacity: 0.6; }
"""
    + CHART_STYLE
)


def render_report(
    title: str,
    turns: Sequence[ReportTurn],
    events: Sequence[ReportEvent],
    *,
    figures: ReportFigures | None = None,
    description: str = "",
) -> str:
    """The whole HTML page for `turns` and `events` (pure: same input, same bytes)."""
    turns = sorted(turns, key=lambda item: item.turn)
    events = sorted(events, key=lambda item: item.turn)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head><body>",
        f"<h1>{escape(title)}</h1>",
    ]
    if description:
        parts.append(f'<p class="lead">{escape(description)}</p>')
    if figures is not None and figures.rows:
        parts.append(_figures_table(figures))
    parts.append("<h2>Window composition per turn</h2>")
    if turns:
        parts.append(composition_chart(turns, events))
        parts.append(_legend(turns, events))
        parts.append(_layers_table(turns))
    else:
        parts.append('<p id="no-turns">No compiles to show.</p>')
    parts.append(f"<h2>Events ({len(events)})</h2>")
    parts.append(_events_table(events))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(
    path: str | Path,
    title: str,
    turns: Sequence[ReportTurn],
    events: Sequence[ReportEvent],
    *,
    figures: ReportFigures | None = None,
    description: str = "",
) -> Path:
    """Render the report and write it to `path` (UTF-8); the path written."""
    target = Path(path)
    page = render_report(title, turns, events, figures=figures, description=description)
    target.write_text(page, encoding="utf-8")
    return target


def _figures_table(figures: ReportFigures) -> str:
    rows = "".join(
        f'<tr><td>{escape(label)}</td><td class="num">{escape(value)}</td></tr>'
        for label, value in figures.rows
    )
    return f'<table id="figures"><tbody>{rows}</tbody></table>'


_GLYPHS = {"line": "▼", "circle": "●", "square": "■"}


def _legend(turns: Sequence[ReportTurn], events: Sequence[ReportEvent]) -> str:
    """One entry per thing the chart draws (`data-mark` names it), in the colour it is drawn
    in: the layers and the free room, the window line, the reuse line, each kind of marker."""
    items = [
        f'<span data-mark="series-{escape(name)}"><span class="swatch" '
        f'style="background:{LAYER_COLOURS.get(name, "#a0aec0")}"></span>{escape(name)}</span>'
        for name in [*layer_order(turns), "free"]
    ]
    items.append(
        '<span data-mark="window-line"><span class="stroke dashed"></span>window size</span>'
    )
    if any(turn.reuse is not None for turn in turns):
        items.append(
            f'<span data-mark="series-reuse"><span class="stroke" style="border-color:'
            f'{REUSE_COLOUR}"></span>prompt bytes reusable from the previous turn '
            "(lower panel, 0-100 %)</span>"
        )
    for kind in mark_kinds(events):
        style = mark(kind)
        items.append(
            f'<span data-mark="marker-{css_name(kind)}"><span class="glyph" '
            f'style="color:{style.colour}">{_GLYPHS[style.shape]}</span>{escape(style.label)}'
            "</span>"
        )
    return f'<div class="legend" id="legend">{"".join(items)}</div>'


def _layers_table(turns: Sequence[ReportTurn]) -> str:
    """The last turn's layers in figures: tokens and share of the window."""
    last = turns[-1]
    rows = []
    for name in [*layer_order(turns), "free"]:
        tokens = max(0, last.window - last.total) if name == "free" else last.layers.get(name, 0)
        rows.append(
            f'<tr><td>{escape(name)}</td><td class="num">{tokens:,}</td>'
            f'<td class="num">{tokens / last.window:.1%}</td></tr>'
        )
    head = "<tr><th>layer</th><th>tokens</th><th>of the window</th></tr>"
    return (
        f"<h2>Turn {last.turn}: the window by layer ({last.total:,} of {last.window:,} tokens)</h2>"
        f'<table id="layers"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _events_table(events: Sequence[ReportEvent]) -> str:
    if not events:
        return '<p id="no-events">Nothing left the window.</p>'
    rows = []
    for index, event in enumerate(events):
        uri = f"<code>{escape(event.uri)}</code>" if event.uri else ""
        rows.append(
            f'<tr id="event-{index}" class="kind-{escape(css_name(event.kind))}">'
            f'<td class="num">{event.turn}</td>'
            f'<td class="kind" style="color:{mark(event.kind).colour}">{escape(event.kind)}</td>'
            f"<td>{escape(event.text)}</td><td>{uri}</td></tr>"
        )
    head = "<tr><th>turn</th><th>kind</th><th>what happened</th><th>where it lives now</th></tr>"
    return f'<table id="events"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


__all__ = [
    "EVENT_KINDS",
    "LAYERS",
    "ReportEvent",
    "ReportFigures",
    "ReportTurn",
    "payload_layers",
    "render_report",
    "write_report",
]
