"""`contextchef demo --report PATH`: the demo's run as the window report's data.

Turns a played `Session` into `ReportTurn`s, `ReportEvent`s and the summary figures, and
renders them with `report.render_report`; nothing here draws or writes on its own.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from contextchef.cli.demo_display import SUMMARY_ROWS
from contextchef.cli.demo_session import Session
from contextchef.cli.demo_store import DemoStore
from contextchef.cli.report import ReportFigures, render_report


def demo_report_page(session: Session, *, store: str) -> str:
    """The HTML report of the calls `session` has played so far."""
    options = session.options
    stats = session.stats.as_dict()
    rows = [(label, f"{stats[key]:,}") for label, key in SUMMARY_ROWS]
    rows.append(
        (
            "prompt bytes reusable from the previous turn",
            f"mean {session.stats.prefix_reuse_mean:.1%}, min {session.stats.prefix_reuse_min:.1%}",
        )
    )
    rows.append(("store", store))
    events = [event for record in session.records for event in record.events]
    return render_report(
        f"contextchef demo: {len(session.records)} turns for {options.target}",
        [record.report_turn() for record in session.records],
        events,
        figures=ReportFigures(tuple(rows)),
        description=(
            f"A scripted coding agent (seed {options.seed}) compiled into a "
            f"{options.window:,}-token window. Hover a marker to see where the content that "
            "left the window lives now."
        ),
    )


def check_report_path(path: Path) -> None:
    """Refuse, before the run, a report path that cannot be written (a usage error)."""
    if path.is_dir():
        raise typer.BadParameter(f"{path} is a directory; give a file name", param_hint="--report")
    if not path.parent.is_dir():
        raise typer.BadParameter(f"the folder {path.parent} does not exist", param_hint="--report")


def write_demo_report(
    console: Console, session: Session, store: DemoStore, path: Path, *, quiet: bool
) -> None:
    """Write the report of `session` to `path`; say where, unless `quiet` (JSON output)."""
    path.write_text(demo_report_page(session, store=store.where), encoding="utf-8")
    if not quiet:
        console.print(f"window report: {path.resolve()} (one HTML file; open it in a browser)")


__all__ = ["check_report_path", "demo_report_page", "write_demo_report"]
