"""What `contextchef demo` does once typer has parsed its options.

Checks the options, opens the store, plays the opening overview and the scripted session, and
writes the report; a library error (a --store that is a directory or not a database) ends it
with one line on stderr and exit code 1, the traceback only with `--debug`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from contextchef.adapters import adapter_registry
from contextchef.cli._common import out_console
from contextchef.cli.demo import run
from contextchef.cli.demo_display import play
from contextchef.cli.demo_report import check_report_path, write_demo_report
from contextchef.cli.demo_session import Session, SessionOptions
from contextchef.cli.demo_store import forget_demo, open_demo_store
from contextchef.errors import ContextChefError


def run_demo(
    *,
    target: str = "openai",
    turns: int = 150,
    seed: int = 7,
    window: int = 6000,
    store: str | None = None,
    report: str | None = None,
    forget: bool = False,
    quiet: bool = False,
    as_json: bool = False,
    debug: bool = False,
) -> None:
    """Run the demo as the command line asked (see `contextchef demo --help`)."""
    if target not in adapter_registry.names():
        known = ", ".join(adapter_registry.names())
        raise typer.BadParameter(
            f"unknown target {target!r}; one of {known}", param_hint="--target"
        )
    report_path = None if report is None else Path(report)
    if report_path is not None:
        check_report_path(report_path)
    try:
        options = SessionOptions(turns=turns, seed=seed, window=window, target=target)
        _run(options, store, report_path, forget=forget, quiet=quiet, as_json=as_json)
    except ContextChefError as exc:
        if debug:
            raise
        typer.echo(f"error: {exc}", err=True)
        if store not in (None, ":memory:"):
            typer.echo(
                "hint: --store takes a SQLite file (new or made by contextchef) or :memory:",
                err=True,
            )
        raise typer.Exit(1) from None


def _run(
    options: SessionOptions,
    store: str | None,
    report_path: Path | None,
    *,
    forget: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    console = out_console()
    opened = open_demo_store(store)
    try:
        if forget:
            deleted = forget_demo(opened)
            console.print(f"forgot {deleted} entries the demo stored in {opened.where}")
            return
        if not (quiet or as_json):
            run(console, store=opened.backend)
        session = Session(options, opened.backend)
        play(console, session, opened, quiet=quiet, as_json=as_json)
        if report_path is not None:
            write_demo_report(console, session, opened, report_path, quiet=as_json)
        elif not (quiet or as_json):
            console.print("[dim]--report window.html writes this run's window report[/dim]")
    finally:
        opened.close()


__all__ = ["run_demo"]
