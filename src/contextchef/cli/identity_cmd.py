"""`contextchef identity [DIR]`: how a directory is identified as a project, read-only.

A directory's derived identity is `git:<root commit>` in a git checkout with history, else
`dir:<hash of its real path>` (see `store.backends.sqlite.identity`). The database may link
several such aliases to one project (a clone, a merged history, a directory that later became a
repository); this command shows the derived aliases, the project they resolve to in the
database, every alias linked to it and what the project holds. It only reads: a directory never
seen before is reported as new, not recorded.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from contextchef.cli._common import fail, guarded, out_console, print_json, working

__all__ = ["IdentityReport", "identify", "identity_command"]


@dataclass(frozen=True, slots=True)
class IdentityReport:
    """What `identity` shows."""

    directory: str
    git_roots: list[str] | None
    """The repository's root commits; None outside a git history."""
    git_problem: str | None
    derived: str
    """The identity derived now: the first git root, else the directory's own alias."""
    dir_alias: str
    database: str
    project: str | None = None
    """The project's permanent identity in the database; None when it has never been seen."""
    linked: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    entries: dict[str, int] = field(default_factory=dict)
    memories: int = 0


def _project_of(conn: sqlite3.Connection, aliases: list[str]) -> tuple[int, str] | None:
    marks = ",".join("?" * len(aliases))
    row = conn.execute(
        f"SELECT p.id, p.identity FROM project_aliases a JOIN projects p ON p.id = a.project_id "
        f"WHERE a.alias IN ({marks}) ORDER BY p.id LIMIT 1",
        aliases,
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def identify(directory: Path, database: Path) -> IdentityReport:
    """Derive `directory`'s identity and look it up in `database` without writing."""
    from contextchef.store.backends.sqlite.identity import (
        GitUnavailableError,
        canonical_dir,
        dir_identity,
        git_root_commits,
    )
    from contextchef.store.backends.sqlite.maintenance import foreign_reason, read_only

    path = canonical_dir(directory)
    roots: list[str] | None = None
    problem: str | None = None
    try:
        roots = git_root_commits(path)
    except GitUnavailableError as exc:
        problem = str(exc)
    own = dir_identity(path)
    aliases = [f"git:{root}" for root in roots or ()] + [own]
    report = IdentityReport(str(path), roots, problem, aliases[0], own, str(database))
    if not database.is_file():
        return report
    reason = foreign_reason(database)
    if reason is not None:
        fail(f"{database} is not a context database ({reason})", "point --store at one")
    with read_only(database) as conn:
        found = _project_of(conn, aliases)
        if found is None:
            return report
        pid, identity = found
        linked = [
            str(row[0])
            for row in conn.execute(
                "SELECT alias FROM project_aliases WHERE project_id = ? ORDER BY alias", (pid,)
            )
        ]
        dirs = [
            str(row[0])
            for row in conn.execute(
                "SELECT path FROM project_dirs WHERE project_id = ? ORDER BY path", (pid,)
            )
        ]
        entries = {
            str(ns): int(count)
            for ns, count in conn.execute(
                "SELECT namespace, count(*) FROM entries WHERE project_id = ? "
                "GROUP BY namespace ORDER BY namespace",
                (pid,),
            )
        }
        memories = conn.execute(
            "SELECT count(*) FROM memories WHERE project_id = ? "
            "AND superseded_by IS NULL AND deleted_at IS NULL",
            (pid,),
        ).fetchone()[0]
    return IdentityReport(
        str(path),
        roots,
        problem,
        aliases[0],
        own,
        str(database),
        identity,
        linked,
        dirs,
        entries,
        int(memories),
    )


@guarded
def identity_command(
    directory: Annotated[
        Path, typer.Argument(help="The directory to identify (default: the current one).")
    ] = Path(),
    store: Annotated[
        Path | None,
        typer.Option("--store", help="The database to look it up in (default: the machine's)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Show how a directory is identified: git root commit or directory hash, and linked ones.

    Example: contextchef identity ~/src/myproject --json
    """
    from contextchef.store.datadir import default_database_path

    database = store if store is not None else default_database_path()
    if database.is_dir():
        fail(
            f"{database} is a directory; identities live in a database file", "point --store at one"
        )
    with working(f"identifying {directory}"):
        report = identify(directory, database)
    if as_json:
        print_json(asdict(report))
        return
    rows: list[tuple[str, Any]] = [
        ("directory", report.directory),
        (
            "git roots",
            ", ".join(report.git_roots)
            if report.git_roots
            else (report.git_problem or "none (not a git repository with commits)"),
        ),
        ("derived identity", report.derived),
        ("directory alias", report.dir_alias),
        ("database", report.database),
    ]
    if report.project is None:
        rows.append(("project", "not in the database yet (recorded on first use)"))
    else:
        rows.extend(
            [
                ("project", report.project),
                ("linked aliases", ", ".join(report.linked)),
                ("directories seen", ", ".join(report.directories) or "-"),
                ("entries", ", ".join(f"{ns}/ {n}" for ns, n in report.entries.items()) or "none"),
                ("current memories", report.memories),
            ]
        )
    console = out_console()
    for label, value in rows:
        console.print(f"{label:<17} {value}", markup=False)
