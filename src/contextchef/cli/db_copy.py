"""`contextchef db copy --from PATH|DSN --to PATH|DSN`: every project and namespace of one store
into another (SQLite file, PostgreSQL schema, directory), with progress and counts.

The copying is the store layer's (`contextchef.store.copy`); this module reads the two
locations, shows a progress bar and prints what was copied per project and namespace. Running
the same copy again copies nothing new. A failure (a bad DSN, a missing file, a server that
does not answer) is one line on stderr and exit code 1; `contextchef db --debug copy …` shows
the traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from contextchef.cli._common import err_console, guarded, out_console, print_json

if TYPE_CHECKING:  # rich and the store load when a copy runs, not when the CLI starts
    from contextchef.store.copy import CopyReport

__all__ = ["copy"]


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _copy(source: str, target: str, projects: list[str] | None) -> CopyReport:
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    from contextchef.store.copy import copy_store
    from contextchef.store.locations import open_location

    plain_project = projects[0] if projects and len(projects) == 1 else None
    progress = err_console()
    origin = open_location(source, plain_project=plain_project)
    destination = open_location(target)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=progress,
        transient=True,
        disable=not progress.is_terminal,
    ) as bar:
        task = bar.add_task("copying", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return copy_store(origin, destination, projects=projects, progress=update)


@guarded
def copy(
    source: Annotated[
        str,
        typer.Option(
            "--from",
            metavar="PATH|DSN",
            help="Copy from: a SQLite file, a directory or a postgresql:// DSN.",
        ),
    ],
    target: Annotated[
        str,
        typer.Option(
            "--to",
            metavar="PATH|DSN",
            help="Copy into: a SQLite file, a directory or a postgresql:// DSN.",
        ),
    ],
    project: Annotated[
        list[str] | None,
        typer.Option(
            "--project",
            metavar="IDENTITY",
            help="Copy only this project identity (repeatable); for a plain FileSystemBackend "
            "directory, the identity its entries get (default: the working directory's).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """Copy every project and namespace between two stores; running it again copies nothing.

    Example: contextchef db copy --from ./context.db --to postgresql://db.internal/agents
    """
    report = _copy(source, target, project or None)
    if as_json:
        print_json(
            {
                "source": report.source,
                "target": report.target,
                "copied": report.copied,
                "unchanged": report.unchanged,
                "bytes": report.bytes,
                "namespaces": [
                    {
                        "project": count.project,
                        "namespace": count.namespace,
                        "copied": count.copied,
                        "unchanged": count.unchanged,
                        "bytes": count.bytes,
                    }
                    for count in report.namespaces
                ],
            }
        )
        return
    console = out_console()
    from rich.table import Table

    table = Table("project", "namespace", "copied", "unchanged", "bytes copied", title="copy")
    for count in report.namespaces:
        table.add_row(
            count.project,
            count.namespace,
            str(count.copied),
            str(count.unchanged),
            _size(count.bytes),
        )
    console.print(table)
    console.print(
        f"copied {report.copied} entries ({_size(report.bytes)}), {report.unchanged} unchanged, "
        f"in {report.projects} project(s) and {len(report.namespaces)} namespace(s) "
        f"from {report.source} to {report.target}",
        highlight=False,
        markup=False,
    )
