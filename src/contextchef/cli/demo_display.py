"""How `contextchef demo` shows the scripted session: a live line per turn and a summary table.

The session (`demo_session`) only yields records and figures; this module turns them into rich
output — a progress bar with the window's tokens, the events of each turn above it, and the
closing table — or into nothing but the summary (`--quiet`) or JSON (`--json`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from contextchef.cli.demo_session import MEMORY_KEY, Session, SessionOptions, SessionSummary
from contextchef.cli.demo_store import DemoStore

SUMMARY_ROWS = (
    ("turns", "turns"),
    ("peak window tokens", "peak_window_tokens"),
    ("final window tokens", "final_window_tokens"),
    ("window size", "window"),
    ("overflows", "overflows"),
    ("messages summarized", "messages_summarized"),
    ("offloads", "offloads"),
    ("offloaded bytes", "offloaded_bytes"),
    ("archived spans", "archived_spans"),
    ("memory entries", "memory_entries"),
    ("context-tool reads", "context_reads"),
    ("notes saved", "notes_saved"),
    ("window exceeded", "windows_exceeded"),
)


def summary_table(summary: SessionSummary) -> Table:
    """The closing table: what the chef did over the run."""
    table = Table(title="contextchef kept the agent's run alive", title_justify="left")
    table.add_column("figure", style="dim")
    table.add_column("value", justify="right")
    figures = summary.as_dict()
    for label, key in SUMMARY_ROWS:
        table.add_row(label, f"{figures[key]:,}")
    table.add_row(
        "prompt bytes reusable from the previous turn",
        f"mean {summary.prefix_reuse_mean:.1%}, min {summary.prefix_reuse_min:.1%}",
    )
    return table


def play(
    console: Console, session: Session, store: DemoStore, *, quiet: bool, as_json: bool
) -> SessionSummary:
    """Run `session`, showing it as the options ask; the summary it ends with."""
    options = session.options
    if as_json:
        for _ in session.run():
            pass
        figures: dict[str, Any] = session.stats.as_dict()
        figures["store"] = store.where
        console.print_json(json.dumps(figures))
        return session.stats
    started = time.perf_counter()
    if not quiet:
        _introduce(console, session, store)
        _live(console, session, options)
    else:
        for _ in session.run():
            pass
    elapsed = time.perf_counter() - started
    console.print(summary_table(session.stats))
    console.print(f"[dim]{options.turns} turns for {options.target} in {elapsed:.1f} s[/dim]")
    _store_footer(console, store)
    return session.stats


def _introduce(console: Console, session: Session, store: DemoStore) -> None:
    options = session.options
    console.rule("[bold]A scripted coding agent, offline[/bold]")
    console.print(
        f"{options.turns} model calls (seed {options.seed}) compiled for {options.target} "
        f"into a {options.window:,}-token window; store: {store.where}"
    )
    remembered = session.memory_value(MEMORY_KEY)
    if remembered is not None:
        console.print(
            f"[green]memory from an earlier run:[/green] {MEMORY_KEY} = {remembered!r} "
            "— this agent starts knowing the test command"
        )
    else:
        console.print("[dim]memory is empty: the agent must find the test command itself[/dim]")


def _live(console: Console, session: Session, options: SessionOptions) -> None:
    """One progress line (turn, tokens in the window against its size), events above it."""
    with Progress(
        TextColumn("turn"),
        MofNCompleteColumn(),
        BarColumn(),
        TextColumn("{task.description}"),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=options.turns)
        for record in session.run():
            for event in record.events:
                progress.console.print(f"[dim]turn {record.turn:>4}[/dim]  {escape(event.text)}")
            progress.update(
                task,
                advance=1,
                description=f"window {record.tokens:,}/{record.window:,} tokens",
            )


def _store_footer(console: Console, store: DemoStore) -> None:
    console.print(f"[dim]store: {store.where}[/dim]")
    if store.explore is not None:
        console.print(f"[dim]to see what it stored: {escape(store.explore)}[/dim]", soft_wrap=True)
    if store.removal is not None:
        console.print("[dim]run it again: the next agent starts with this run's memory[/dim]")
        console.print(f"[dim]to remove it: {escape(store.removal)}[/dim]", soft_wrap=True)
        console.print("[dim]--store :memory: runs the demo without writing anything[/dim]")
