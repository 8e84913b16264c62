"""`contextchef inspect --report`: one compile drawn as the window report.

The report's data model is a run of compiles; an inspection is a run of one: its layers, the
window it is drawn against, the share of its prompt bytes an earlier payload shares (with
`--diff`), and the repairs and cache breakpoints as events.
"""

from __future__ import annotations

from pathlib import Path

from contextchef.cli._common import fail
from contextchef.cli.compiling import Compiled
from contextchef.cli.inspection import Inspection
from contextchef.cli.report import write_report
from contextchef.cli.report_model import ReportEvent, ReportFigures, ReportTurn, payload_layers
from contextchef.tokens import EstimateTokenizer

__all__ = ["write_inspection_report"]


def write_inspection_report(
    path: Path, compiled: Compiled, inspection: Inspection, *, window: int | None
) -> Path:
    """Write the report of `inspection` to `path`; a one-line error when it cannot be written."""
    layers = payload_layers(compiled.payload, EstimateTokenizer().count_text)
    diff = inspection.diff
    reuse = diff.common_prefix / diff.bytes if diff is not None and diff.bytes else None
    size = window if window is not None else max(inspection.total_tokens, 1)
    turn = ReportTurn(1, layers, size, reuse)
    events = [
        ReportEvent(1, "repair", f"message {repair.index}: {repair.kind} — {repair.detail}")
        for repair in inspection.repairs
    ]
    events += [
        ReportEvent(1, "breakpoint", f"{point.part}: caches {point.prefix_bytes:,} bytes")
        for point in inspection.breakpoints
    ]
    rows = [
        ("target", inspection.target),
        ("format", inspection.format),
        ("tokens", f"{inspection.total_tokens:,}"),
        ("bytes", f"{inspection.total_bytes:,}"),
    ]
    if diff is not None:
        rows.append(("reusable from the earlier payload", f"{diff.common_prefix:,} bytes"))
    try:
        return write_report(
            path,
            f"contextchef inspect {inspection.source}",
            [turn],
            events,
            figures=ReportFigures(tuple(rows)),
            description="One compile: what each layer of the window costs.",
        )
    except OSError as exc:
        fail(f"cannot write the report to {path}: {exc.strerror or exc}", "choose another path")
