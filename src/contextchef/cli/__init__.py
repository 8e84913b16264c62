"""The `contextchef` command line: a thin typer shell over the library."""

from __future__ import annotations

import typer

from contextchef.cli.db import db_app

app = typer.Typer(
    name="contextchef",
    help="Compile an LLM agent's context and manage its context store.",
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
) -> None:
    """Compile an LLM agent's context and manage its context store."""


@app.command()
def demo() -> None:
    """Compile a bundled example conversation to every target and summarise each payload."""
    from contextchef.cli.demo import run

    run()


def main() -> None:
    """Entry point of the `contextchef` console script."""
    app()


app.add_typer(db_app, name="db")
