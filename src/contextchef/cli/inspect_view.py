"""`contextchef inspect` on a terminal: an `Inspection` as rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from contextchef.cli.inspection import Inspection
from contextchef.cli.payload_diff import PayloadDiff

__all__ = ["render_inspection"]


def _size(n: int) -> str:
    return f"{n:,}"


def _layers(inspection: Inspection) -> Table:
    table = Table(title=escape(f"{inspection.target} payload from {inspection.source}"))
    table.add_column("layer")
    table.add_column("tokens", justify="right")
    table.add_column("bytes", justify="right")
    table.add_column("what", overflow="fold")
    for row in inspection.layers:
        label = ("  " * row.depth) + row.label
        style = "bold" if row.depth == 0 else "dim"
        table.add_row(
            f"[{style}]{escape(label)}[/]", _size(row.tokens), _size(row.bytes), escape(row.detail)
        )
    table.add_row(
        "[bold]total[/]", _size(inspection.total_tokens), _size(inspection.total_bytes), ""
    )
    return table


def _breakpoints(inspection: Inspection) -> Table | str:
    if not inspection.breakpoints:
        return f"cache breakpoints: none ({escape(inspection.cache_note)})"
    table = Table(title="cache breakpoints (the prefix each one caches)")
    for column in ("marker at", "prefix tokens", "prefix bytes", "what sits before it"):
        table.add_column(column, justify="right" if "prefix" in column else "left")
    for point in inspection.breakpoints:
        table.add_row(
            escape(point.part),
            _size(point.prefix_tokens),
            _size(point.prefix_bytes),
            escape(point.before),
        )
    return table


def _diff(diff: PayloadDiff, source: str | None) -> list[Table | str]:
    against = f" against {escape(source)}" if source else ""
    if diff.identical:
        return [f"diff{against}: identical ({_size(diff.bytes)} prompt bytes, all reusable)"]
    head = (
        f"diff{against}: first difference at byte {_size(diff.first_difference or 0)}; "
        f"common prefix {_size(diff.common_prefix)} of {_size(diff.bytes)} bytes "
        f"({diff.reusable:.1%} reusable by a prefix cache; previous {_size(diff.previous_bytes)})"
    )
    table = Table(title="parts that differ")
    for column in ("part", "status", "at byte", "was", "now"):
        table.add_column(column, overflow="fold")
    for change in diff.changes:
        table.add_row(
            escape(change.part),
            change.status,
            str(change.offset),
            escape(change.before),
            escape(change.after),
        )
    return [head, table]


def render_inspection(console: Console, inspection: Inspection) -> None:
    """Print the layer table, breakpoints, repairs, findings and the diff."""
    console.print(f"history format: {inspection.format}", markup=False)
    console.print(_layers(inspection))
    console.print(_breakpoints(inspection))
    if inspection.repairs:
        repairs = Table(title="repairs ensure_valid_history made")
        for column in ("message", "kind", "detail"):
            repairs.add_column(column, overflow="fold")
        for repair in inspection.repairs:
            repairs.add_row(str(repair.index), escape(repair.kind), escape(repair.detail))
        console.print(repairs)
    else:
        console.print("repairs: none (the history was valid as given)")
    for finding in inspection.findings:
        console.print(f"audit: {escape(finding)}")
    if inspection.diff is not None:
        for block in _diff(inspection.diff, inspection.diff_source):
            console.print(block)
