"""`contextchef store export | import | cleanup`: whole-store copies and the eviction sweep.

`export DIR` writes every entry in the filesystem layout (`<dir>/<namespace>/<path>`, JSON
envelopes, raw files for vfs/ and archive/), the layout the TypeScript library writes, so
`import DIR` takes such a `.context` directory as it is. Entries keep their times both ways.
`import --from-4.1 DIR` reads the older 4.1 layout instead (`.context_memory/*.mem`,
`.context_vfs/`; see `store/legacy41.py`) and lists what it imported and skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contextchef.cli._common import (
    err_console,
    fail,
    guarded,
    out_console,
    print_json,
    progress,
    working,
)
from contextchef.cli.store_open import (
    STORE_HINT,
    JsonOption,
    ProjectOption,
    StoreOption,
    known_namespace,
    looks_like_store,
    namespaces,
    opened_store,
)

if TYPE_CHECKING:  # rich and the store load when a command runs, not when the CLI starts
    from contextchef.store.legacy41 import LegacyImport
    from contextchef.store.store import Store

__all__ = ["cleanup_command", "export_command", "import_command"]


def _copy(source: Store, target: Store, spaces: list[str], label: str) -> dict[str, int]:
    """Copy every entry of `spaces` from `source` to `target`, meta (times) included."""
    counts: dict[str, int] = {}
    with progress(label) as update:
        listed = {ns: source.namespace(ns).list() for ns in spaces}
        total = sum(len(items) for items in listed.values())
        done = 0
        for ns in spaces:
            view = target.namespace(ns)
            for path, entry in source.namespace(ns).entries().items():
                view.put(path, entry.content, dict(entry.meta))
                done += 1
                update(done, total)
            counts[ns] = len(listed[ns])
    return counts


def _directory_store(directory: Path, *, must_exist: bool) -> Store:
    from contextchef.store.backends.filesystem import FileSystemBackend
    from contextchef.store.store import Store

    if directory.exists() and not directory.is_dir():
        fail(f"{directory} is a file, not a directory", "name a directory")
    if must_exist and not directory.is_dir():
        fail(f"{directory} does not exist", "check the path")
    if directory.is_dir():
        problem = looks_like_store(directory)
        if problem is not None:
            fail(f"{directory} is a directory but not a context store: {problem}", STORE_HINT)
    return Store(FileSystemBackend(directory))


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{ns}/ {n}" for ns, n in counts.items() if n) or "nothing"


@guarded
def export_command(
    directory: Annotated[Path, typer.Argument(help="The store directory to write (created).")],
    store: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Copy every entry into a directory, in the filesystem layout (<dir>/<namespace>/<path>).

    Example: contextchef store export ./.context
    """
    with opened_store(store, project) as opened:
        target = _directory_store(directory, must_exist=False)
        counts = _copy(opened.store, target, namespaces(opened), "exporting")
    if as_json:
        print_json({"directory": str(directory), "entries": counts})
        return
    err_console().print(f"exported to {directory}: {_summary(counts)}", markup=False)


FromOption = Annotated[
    bool,
    typer.Option(
        "--from-4.1",
        help="DIR holds the TypeScript library's 4.1 files: .context_memory/*.mem and "
        ".context_vfs/ (DIR is the app's directory, or one of those two).",
    ),
]


@guarded
def import_command(
    directory: Annotated[
        Path,
        typer.Argument(help="A store directory, e.g. a .context the TypeScript library wrote."),
    ],
    store: StoreOption = None,
    project: ProjectOption = None,
    from_41: FromOption = False,
    as_json: JsonOption = False,
) -> None:
    """Copy every entry of a store directory into the store (same paths, times kept).

    Example: contextchef store import ./.context --project .
    Example: contextchef store import --from-4.1 ./my-app --project ./my-app
    """
    if from_41:
        _import_41(directory, store, project, as_json)
        return
    source = _directory_store(directory, must_exist=True)
    spaces = sorted(
        child.name
        for child in directory.iterdir()
        if child.is_dir() and not child.name.startswith(".")
    )
    with opened_store(store, project, create=True) as opened:
        counts = _copy(source, opened.store, spaces, "importing")
        where = opened.description
    if as_json:
        print_json({"store": where, "entries": counts})
        return
    err_console().print(f"imported into {where}: {_summary(counts)}", markup=False)


def _import_41(directory: Path, store: Path | None, project: str | None, as_json: bool) -> None:
    from contextchef.memory.entry import MEMORY_NAMESPACE
    from contextchef.store.legacy41 import import_from_41

    if not directory.is_dir():
        fail(f"{directory} is not a directory", "name the directory the 4.1 app ran in")
    with opened_store(store, project, create=True) as opened, working("importing 4.1 files"):
        report = import_from_41(opened.store, directory, memory_namespace=MEMORY_NAMESPACE)
        where = opened.description
    if as_json:
        print_json(
            {
                "store": where,
                "entries": [
                    {"uri": e.uri, "action": e.action, "source": str(e.source)}
                    for e in report.entries
                ],
                "skipped": [{"source": str(s.source), "reason": s.reason} for s in report.skipped],
            }
        )
        return
    _print_41(report, where)


def _print_41(report: LegacyImport, where: str) -> None:
    out = out_console()
    for entry in report.entries:
        if entry.action != "unchanged":
            out.print(f"{entry.action:8} {entry.uri}  ← {entry.source}", markup=False)
    for skipped in report.skipped:
        out.print(f"skipped  {skipped.source}: {skipped.reason}", markup=False)
    err_console().print(
        f"imported 4.1 files into {where}: {report.count('created')} created, "
        f"{report.count('updated')} updated, {report.count('unchanged')} already there, "
        f"{len(report.skipped)} skipped",
        markup=False,
    )


@guarded
def cleanup_command(
    ns: Annotated[str, typer.Argument(help="The namespace to sweep, e.g. vfs.")],
    max_files: Annotated[
        int | None, typer.Option("--max-files", min=0, help="Keep at most this many entries.")
    ] = None,
    max_bytes: Annotated[
        int | None, typer.Option("--max-bytes", min=0, help="Keep at most this many bytes.")
    ] = None,
    max_age: Annotated[
        float | None,
        typer.Option(
            "--max-age", min=0, help="Evict entries created more than this many seconds ago."
        ),
    ] = None,
    store: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Evict the least recently used entries of a namespace beyond the caps given.

    Example: contextchef store cleanup vfs --max-files 500 --max-age 604800
    """
    if max_files is None and max_bytes is None and max_age is None:
        raise typer.BadParameter("give at least one of --max-files, --max-bytes, --max-age")
    with opened_store(store, project) as opened:
        known_namespace(opened, ns)
        with working(f"sweeping {ns}/"):
            report = opened.store.cleanup(
                ns, max_files=max_files, max_bytes=max_bytes, max_age=max_age
            )
    evicted = [
        {"uri": item.uri, "reason": item.reason, "bytes": item.bytes} for item in report.evicted
    ]
    failed = [{"uri": item.uri, "error": str(item.error)} for item in report.failed]
    if as_json:
        print_json({"namespace": ns, "evicted": evicted, "failed": failed})
    else:
        from rich.markup import escape
        from rich.table import Table

        table = Table("evicted", "reason", "bytes", title=f"cleanup {ns}/")
        for item in evicted:
            table.add_row(escape(str(item["uri"])), str(item["reason"]), f"{item['bytes']:,}")
        out_console().print(table)
        err_console().print(
            f"evicted {len(evicted)} entries ({report.evicted_bytes:,} bytes) from {ns}/",
            markup=False,
        )
    if failed:
        fail(f"{len(failed)} entries could not be evicted: {failed[0]['error']}")
