"""The `contextchef` command line: a thin typer shell over the library."""

from __future__ import annotations

import typer

from contextchef.cli._common import CommandGroup, guarded
from contextchef.cli.compile_cmds import compile_command, inspect_command
from contextchef.cli.db import db_app
from contextchef.cli.identity_cmd import identity_command
from contextchef.cli.mcp import mcp_command
from contextchef.cli.store_cmds import store_app

app = typer.Typer(
    name="contextchef",
    cls=CommandGroup,
    help=(
        "Compile an LLM agent's context and manage its context store.\n\n"
        "Example: contextchef compile chat.json --target anthropic"
    ),
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        from contextchef._version import __version__

        typer.echo(f"contextchef {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the installed version and exit.",
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show the traceback of an error instead of one line."
    ),
) -> None:
    """Compile an LLM agent's context and manage its context store.

    Example: contextchef compile chat.json --target anthropic
    """
    del debug  # read by the error handler from the command's context (see _common.debugging)


@app.command()
@guarded
def demo(
    target: str = typer.Option("openai", help="The provider format the agent's run compiles to."),
    turns: int = typer.Option(150, min=1, help="How many model calls the scripted agent makes."),
    seed: int = typer.Option(7, help="Seed of the fake model and workspace (same seed, same run)."),
    window: int = typer.Option(6000, min=1000, help="The context window, in tokens."),
    store: str | None = typer.Option(
        None,
        metavar="PATH|:memory:",
        help="A SQLite file, or :memory: to write nothing (default: the embedded database).",
    ),
    report: str | None = typer.Option(
        None,
        "--report",
        metavar="PATH",
        help="Also write the run's window report (one HTML file) to this path.",
    ),
    forget: bool = typer.Option(
        False, "--forget", help="Delete what earlier demo runs stored in --store, then exit."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="Print only the summary."),
    as_json: bool = typer.Option(False, "--json", help="Print only the summary, as JSON."),
    debug: bool = typer.Option(
        False, "--debug", help="Show tracebacks instead of one-line errors."
    ),
) -> None:
    """Compile a bundled conversation to every target, then run a scripted coding agent.

    Example: contextchef demo --turns 60 --store :memory: --report window.html
    """
    from contextchef.cli.demo_command import run_demo

    run_demo(
        target=target,
        turns=turns,
        seed=seed,
        window=window,
        store=store,
        report=report,
        forget=forget,
        quiet=quiet,
        as_json=as_json,
        debug=debug,
    )


def main() -> None:
    """Entry point of the `contextchef` console script."""
    app()


app.command("compile")(compile_command)
app.command("inspect")(inspect_command)
app.command("identity")(identity_command)
app.add_typer(store_app, name="store")
app.add_typer(db_app, name="db")
app.command(name="mcp")(mcp_command)
