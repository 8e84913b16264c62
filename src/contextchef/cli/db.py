"""`contextchef db …`: inspect, check, back up, restore, repair, migrate and vacuum the database.

Every command works on the machine's default database unless `--db PATH` names another one.
Long operations show a progress bar. Expected failures (a contextchef error, an OS error: the
database in use, not a contextchef database, a bad backup manifest…) are printed as one line
naming the file and what to do next, with exit code 1; `contextchef db --debug …` shows the
traceback instead. `repair`, `restore` and `migrate` refuse while other processes have the
database open; `--wait` waits for them to close it (up to `--timeout` seconds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from contextchef.cli._common import (
    CommandGroup,
    err_console,
    out_console,
    print_json,
    progress,
    report_failure,
)
from contextchef.cli.db_copy import copy as copy_command

# Each command imports what it runs (rich, the sqlite modules): `contextchef --version` skips them.
if TYPE_CHECKING:
    from contextchef.store.backends.sqlite import repair as repair_ops

__all__ = ["db_app"]

db_app = typer.Typer(
    cls=CommandGroup,
    help="Inspect and maintain the SQLite context database.\n\nExample: contextchef db info --json",
    no_args_is_help=True,
)


T = TypeVar("T")

WaitOption = Annotated[
    bool,
    typer.Option("--wait", help="Wait for the processes using the database to close it."),
]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", min=0, help="Seconds --wait waits before giving up.")
]

JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]

DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="Database file (default: context.db in the data directory)."),
]


@db_app.callback()
def _options(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks instead of one-line errors.")
    ] = False,
) -> None:
    """Inspect and maintain the SQLite context database.

    Example: contextchef db info --db ./context.db
    """
    del debug  # read by the error handler from the command's context


def _db(path: Path | None) -> Path:
    from contextchef.store.datadir import default_database_path

    return path if path is not None else default_database_path()


def _waited(wait: bool, timeout: float) -> float:
    return timeout if wait else 0.0


def _fail(message: str) -> typer.Exit:
    from rich.markup import escape

    err_console().print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    return typer.Exit(1)


def _run(action: Callable[[], T]) -> T:
    """Run `action`; a failure becomes one line on stderr and exit code 1 (unless --debug)."""
    try:
        return action()
    except Exception as exc:
        report_failure(exc)


_progress = progress


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


@db_app.command()
def info(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Path, schema version and fence, file sizes, entries per project and namespace.

    Example: contextchef db info --json
    """
    from rich.table import Table

    from contextchef.store.backends.sqlite import maintenance

    report = _run(lambda: maintenance.info(_db(db)))
    if as_json:
        print_json(
            {
                **asdict(report),
                "path": str(report.path),
                "entries": [
                    {"project": p, "namespace": ns, "entries": n, "bytes": b}
                    for p, ns, n, b in report.entries
                ],
                "memories": [{"project": p, "current": n} for p, n in report.memories],
            }
        )
        return
    console = out_console()
    console.print(f"database        {report.path}")
    fence = f"{report.schema_version} (this build supports up to {report.supported_version})"
    console.print(f"schema version  {fence}")
    if report.pending:
        console.print(f"pending         {', '.join(report.pending)}")
    console.print(f"journal mode    {report.journal_mode}")
    files = ", ".join(f"{name} {_size(size)}" for name, size in report.sizes.items())
    console.print(f"files           {files}")
    console.print(
        f"pages           {report.page_count} × {report.page_size} B, {report.freelist_count} free"
    )
    table = Table("project", "namespace", "entries", "bytes", title="entries")
    for identity, ns, count, size in report.entries:
        table.add_row(identity, ns, str(count), _size(size))
    console.print(table)
    if report.memories:
        memories = Table("project", "current memories", title="memories")
        for identity, count in report.memories:
            memories.add_row(identity, str(count))
        console.print(memories)


@db_app.command()
def check(db: DbOption = None, as_json: JsonOption = False) -> None:
    """integrity_check, foreign_key_check, full-text index consistency, and that the files
    earlier repairs and restores replaced were not written to since (read-only).

    Example: contextchef db check --db ./context.db
    """
    from rich.markup import escape

    from contextchef.store.backends.sqlite import maintenance
    from contextchef.store.datadir import default_database_path

    report = _run(lambda: maintenance.check(_db(db)))
    if as_json:
        print_json(
            {
                "path": str(report.path),
                "ok": report.ok,
                "problems": report.problems,
                "foreign": report.foreign,
                "notes": report.notes,
            }
        )
        if not report.ok:
            raise typer.Exit(1)
        return
    if report.foreign is not None:
        raise _fail(
            f"{report.path} is not a contextchef database ({report.foreign}); nothing was "
            f"checked. Point --db at a contextchef database (default: {default_database_path()})"
        )
    for note in report.notes:
        out_console().print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    if report.ok:
        out_console().print(f"[green]ok[/]: {report.path} passed every check")
        return
    for problem in report.problems:
        err_console().print(f"[red]problem:[/] {escape(problem)}", highlight=False)
    if all(problem.startswith("maintenance:") for problem in report.problems):
        raise _fail(
            f"{report.path}: {len(report.problems)} problem(s); the file itself is sound, but "
            "writes may be missing from it: see the files named above"
        )
    raise _fail(
        f"{report.path}: {len(report.problems)} problem(s); stop the processes using it, then "
        f"run `contextchef db repair --db {report.path}` to salvage"
    )


@db_app.command()
def backup(
    dest: Annotated[
        str,  # text, not Path: a Path drops the trailing `/` that says "a directory"
        typer.Argument(
            help="Backup file to create, or a directory to write <database name>-"
            "<YYYYmmdd-HHMMSS>.db in (an existing one, or one ending in /, created if missing).",
        ),
    ],
    db: DbOption = None,
) -> None:
    """An online, consistent, integrity-checked copy with a schema-version manifest.

    Example: contextchef db backup ~/backups/
    """
    from contextchef.store.backends.sqlite import backup as backup_ops

    with _progress("backing up") as progress:
        result = _run(lambda: backup_ops.backup(_db(db), dest, progress=progress))
    out_console().print(
        f"backed up to {result.path} ({_size(result.bytes)}, schema {result.schema_version}); "
        f"manifest {result.manifest}"
    )


@db_app.command()
def restore(
    src: Annotated[Path, typer.Argument(help="Backup file made by `contextchef db backup`.")],
    db: DbOption = None,
    wait: WaitOption = False,
    timeout: TimeoutOption = 60.0,
) -> None:
    """Replace the database with a backup; the current files are moved aside first.

    Example: contextchef db restore ~/backups/context-20250101.db --wait
    """
    from contextchef.store.backends.sqlite import backup as backup_ops

    limit = _waited(wait, timeout)
    with _progress("restoring") as progress:
        result = _run(lambda: backup_ops.restore(src, _db(db), progress=progress, wait=limit))
    aside = f"; previous files in {result.moved_aside}" if result.moved_aside else ""
    out_console().print(f"restored {result.path} (schema {result.schema_version}){aside}")


@db_app.command()
def repair(db: DbOption = None, wait: WaitOption = False, timeout: TimeoutOption = 60.0) -> None:
    """Copy the damaged files aside, then salvage every readable row into a fresh database.

    Example: contextchef db repair --wait
    """
    from rich.table import Table

    from contextchef.store.backends.sqlite import repair as repair_ops

    limit = _waited(wait, timeout)
    with _progress("salvaging") as progress:
        report = _run(lambda: repair_ops.repair(_db(db), progress=progress, wait=limit))
    out_console().print(f"damaged files saved in {report.backup_dir}")
    table = Table(
        "table",
        "rows before",
        "recovered",
        "rows after",
        "unreadable rowids",
        "dropped",
        title="salvage",
    )
    for t in report.tables:
        ranges = ", ".join(f"{a}–{b}" for a, b in t.unreadable) or "-"
        before = "?" if t.source_rows is None else str(t.source_rows)
        after = "?" if t.final_rows is None else str(t.final_rows)
        table.add_row(t.table, before, str(t.recovered), after, ranges, str(t.dropped))
    out_console().print(table)
    out_console().print(f"repaired {report.path}: {_verdict(report)}")


def _verdict(report: repair_ops.RepairReport) -> str:
    if report.lossless:
        rows = sum(t.final_rows or 0 for t in report.tables)
        return f"nothing was lost ({rows} rows, counted before and after in every table)"
    if report.lost_something:
        return f"some rows were lost (see above); the damaged files are in {report.backup_dir}"
    return (
        "every readable row was copied, but the damaged file could not be counted, so losses "
        f"cannot be ruled out; the damaged files are in {report.backup_dir}"
    )


@db_app.command()
def migrate(
    db: DbOption = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Run the migration on a temporary copy and report what would change; the "
            "database is only read.",
        ),
    ] = False,
    backup_dir: Annotated[
        Path | None,
        typer.Option(
            "--backup-dir",
            help="Where the backup taken before migrating goes "
            "(default: <db>.before-migrate-<time>/ next to the database).",
        ),
    ] = None,
    wait: WaitOption = False,
    timeout: TimeoutOption = 60.0,
) -> None:
    """Back up the database, then apply pending schema migrations (opening the store also
    migrates, but only while no other process uses the database).

    Example: contextchef db migrate --dry-run
    """
    from contextchef.store.backends.sqlite import backup as backup_ops
    from contextchef.store.backends.sqlite import upgrade

    limit = _waited(wait, timeout)

    def saved(result: backup_ops.BackupResult) -> None:
        out_console().print(
            f"backed up to {result.path} (schema {result.schema_version}, verified) "
            "before migrating; `contextchef db restore` puts it back",
            markup=False,
        )

    with _progress("migrating") as progress:
        report = _run(
            lambda: upgrade.migrate(
                _db(db),
                dry_run=dry_run,
                progress=progress,
                wait=limit,
                backup_dir=backup_dir,
                on_backup=saved,
            )
        )
    if not report.steps:
        out_console().print(f"{report.path} is at schema version {report.from_version}: up to date")
        return
    verb = "would apply" if report.dry_run else "applied"
    for step in report.steps:
        out_console().print(f"{verb} {step}")
    for change in report.changes:
        out_console().print(f"  {change}", markup=False)
    out_console().print(
        f"schema version {report.from_version} → {report.to_version}"
        + (" (dry run on a copy: the database was not changed)" if report.dry_run else "")
    )


@db_app.command()
def vacuum(db: DbOption = None) -> None:
    """Prune the mutation log, optimise the search index, and compact the file.

    Example: contextchef db vacuum
    """
    from contextchef.store.backends.sqlite import maintenance

    with _progress("vacuuming") as progress:
        report = _run(lambda: maintenance.vacuum(_db(db), progress=progress))
    gone = report.orphaned_vectors
    out_console().print(
        f"{_size(report.bytes_before)} → {_size(report.bytes_after)}; "
        f"pruned {report.pruned_log_rows} mutation-log rows"
        + (f"; deleted {gone} vectors whose entry was gone" if gone else "")
    )


db_app.command("copy")(copy_command)
