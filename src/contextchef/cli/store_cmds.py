"""`contextchef store …`: list, read, write, move, search, export, import and clean the store.

Every command works on the machine's default database unless `--store PATH` names another
database or a store directory (see `store_open`); `--project DIR` picks another project in a
database. Entries are addressed as `context://<namespace>/<path>` (the `context://` may be left
out). A namespace that is neither standard nor already in the store is refused (a typo would
otherwise create it); `put --new-namespace` creates one on purpose. Failures are one line on
stderr with exit code 1, and change nothing.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer

from contextchef.cli._common import (
    CommandGroup,
    err_console,
    fail,
    guarded,
    out_console,
    print_json,
    read_text,
    working,
)
from contextchef.cli.store_bulk import cleanup_command, export_command, import_command
from contextchef.cli.store_open import (
    JsonOption,
    OpenedStore,
    ProjectOption,
    StoreOption,
    known_namespace,
    namespaces,
    opened_store,
)
from contextchef.store.paths import URI_PREFIX, format_uri

__all__ = ["store_app"]

store_app = typer.Typer(
    cls=CommandGroup,
    help=(
        "Read and write the context store: memory/, notes/, vfs/, archive/.\n\n"
        "Example: contextchef store ls context://notes/ --store ./.context"
    ),
    no_args_is_help=True,
)


@store_app.callback()
def _options(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks instead of one-line errors.")
    ] = False,
) -> None:
    """Read and write the context store: memory/, notes/, vfs/, archive/.

    Example: contextchef store ls context://notes/ --store ./.context
    """
    del debug  # read by the error handler from the command's context


def _split(uri: str) -> tuple[str, str]:
    """`(namespace, path)` of `context://ns/path`, `ns/path` or `ns`."""
    rest = uri.removeprefix(URI_PREFIX).lstrip("/")
    ns, _, path = rest.partition("/")
    if not ns:
        fail(f"{uri!r} names no namespace", "write context://<namespace>/<path>")
    return ns, path


def _entry(opened: OpenedStore, uri: str, *, create: bool = False) -> tuple[str, str]:
    ns, path = _split(uri)
    known_namespace(opened, ns, create=create)
    if not path or path.endswith("/"):
        fail(f"{uri!r} names a directory, not an entry", "add the entry's path after the namespace")
    return ns, path


def _when(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def _bytes(meta: Any) -> int:
    value = meta.get("bytes") if hasattr(meta, "get") else None
    return value if isinstance(value, int) else 0


@store_app.command("ls")
@guarded
def ls(
    uri: Annotated[
        str | None,
        typer.Argument(help="A namespace or directory, e.g. context://notes/ (default: all)."),
    ] = None,
    store: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the namespaces with their sizes, or the entries under a URI.

    Example: contextchef store ls context://vfs/ --json
    """
    from rich.markup import escape  # rich loads when a command prints, not when the CLI starts
    from rich.table import Table

    with opened_store(store, project) as opened:
        if uri is None:
            rows = []
            for ns in namespaces(opened):
                with working(f"listing {ns}/"):
                    listed = opened.store.namespace(ns).list()
                rows.append(
                    {
                        "namespace": ns,
                        "entries": len(listed),
                        "bytes": sum(_bytes(item.meta) for item in listed),
                    }
                )
            if as_json:
                print_json({"store": opened.description, "namespaces": rows})
                return
            table = Table("namespace", "entries", "bytes", title=escape(opened.description))
            for row in rows:
                table.add_row(f"{row['namespace']}/", f"{row['entries']:,}", f"{row['bytes']:,}")
            out_console().print(table)
            return
        ns, prefix = _split(uri)
        known_namespace(opened, ns)
        with working(f"listing {uri}"):
            entries = opened.store.namespace(ns).list(prefix)
        if as_json:
            print_json(
                [{"uri": format_uri(ns, e.path), "path": e.path, **dict(e.meta)} for e in entries]
            )
            return
        table = Table("uri", "bytes", "updated", title=escape(f"{uri} in {opened.description}"))
        for e in entries:
            table.add_row(
                escape(format_uri(ns, e.path)),
                f"{_bytes(e.meta):,}",
                _when(e.meta.get("updated_at")),
            )
        out_console().print(table)
        if not entries:
            err_console().print(f"no entries under {uri}", markup=False)


@store_app.command("cat")
@guarded
def cat(
    uri: Annotated[str, typer.Argument(help="The entry, e.g. context://notes/plan.md.")],
    store: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print an entry's content.

    Example: contextchef store cat context://notes/plan.md
    """
    with opened_store(store, project) as opened:
        ns, path = _entry(opened, uri)
        entry = opened.store.namespace(ns).get(path)
        if entry is None:
            fail(f"no entry {format_uri(ns, path)}", f"list them: contextchef store ls {ns}/")
        if as_json:
            print_json(
                {"uri": format_uri(ns, path), "content": entry.content, "meta": dict(entry.meta)}
            )
            return
        typer.echo(entry.content, nl=not entry.content.endswith("\n"))


@store_app.command("put")
@guarded
def put(
    uri: Annotated[str, typer.Argument(help="Where to write, e.g. context://notes/plan.md.")],
    file: Annotated[
        str, typer.Argument(help="The file to store (`-` or nothing: standard input).")
    ] = "-",
    new_namespace: Annotated[
        bool, typer.Option("--new-namespace", help="Allow a namespace the store does not hold yet.")
    ] = False,
    store: StoreOption = None,
    project: ProjectOption = None,
) -> None:
    """Write a file (or standard input) into an entry, replacing what is there.

    Example: contextchef store put context://notes/plan.md plan.md
    """
    content = read_text(file, "file")  # before the store opens: a bad file writes nothing
    with opened_store(store, project, create=True) as opened:
        ns, path = _entry(opened, uri, create=new_namespace)
        result = opened.store.namespace(ns).put(path, content)
        err_console().print(
            f"wrote {result.uri} ({len(content.encode()):,} bytes) in {opened.description}",
            markup=False,
        )


@store_app.command("rm")
@guarded
def rm(
    uri: Annotated[str, typer.Argument(help="The entry to remove.")],
    store: StoreOption = None,
    project: ProjectOption = None,
) -> None:
    """Remove an entry.

    Example: contextchef store rm context://notes/old.md
    """
    with opened_store(store, project) as opened:
        ns, path = _entry(opened, uri)
        if not opened.store.namespace(ns).delete(path):
            fail(f"no entry {format_uri(ns, path)}", f"list them: contextchef store ls {ns}/")
        err_console().print(f"removed {format_uri(ns, path)}", markup=False)


@store_app.command("mv")
@guarded
def mv(
    source: Annotated[str, typer.Argument(help="The entry to move.")],
    dest: Annotated[str, typer.Argument(help="Its new address (may be in another namespace).")],
    store: StoreOption = None,
    project: ProjectOption = None,
) -> None:
    """Move an entry; refuses to replace an existing one.

    Example: contextchef store mv context://notes/plan.md context://notes/done/plan.md
    """
    with opened_store(store, project) as opened:
        src_ns, src_path = _entry(opened, source)
        dst_ns, dst_path = _entry(opened, dest)
        target = opened.store.namespace(dst_ns)
        if target.exists(dst_path):  # checked first: a refused move reads nothing either
            fail(
                f"{format_uri(dst_ns, dst_path)} already exists",
                "remove it first, or pick another name",
            )
        entry = opened.store.namespace(src_ns).get(src_path)
        if entry is None:
            fail(
                f"no entry {format_uri(src_ns, src_path)}",
                f"list them: contextchef store ls {src_ns}/",
            )
        if not opened.store.namespace(dst_ns).create(dst_path, entry.content, dict(entry.meta)):
            fail(
                f"{format_uri(dst_ns, dst_path)} already exists",
                "remove it first, or pick another name",
            )
        opened.store.namespace(src_ns).delete(src_path)
        err_console().print(
            f"moved {format_uri(src_ns, src_path)} → {format_uri(dst_ns, dst_path)}", markup=False
        )


@store_app.command("search")
@guarded
def search(
    query: Annotated[str, typer.Argument(help="The text to look for (case-insensitive).")],
    ns: Annotated[
        str | None, typer.Option("--ns", help="Search one namespace (default: every one).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Most hits per namespace.")] = 20,
    store: StoreOption = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Find the entries whose content holds a text.

    Example: contextchef store search "test command" --ns memory
    """
    from rich.markup import escape
    from rich.table import Table

    with opened_store(store, project) as opened:
        spaces = [known_namespace(opened, ns)] if ns is not None else namespaces(opened)
        hits: list[dict[str, str]] = []
        for space in spaces:
            with working(f"searching {space}/"):
                found_hits = opened.store.namespace(space).search(query, limit=limit)
            for found in found_hits:
                snippet = " ".join((found.snippet or "").split())
                hits.append({"uri": format_uri(space, found.path), "snippet": snippet})
        if as_json:
            print_json(hits)
            return
        table = Table("uri", "snippet", title=escape(f"{query!r} in {opened.description}"))
        for hit in hits:
            table.add_row(escape(hit["uri"]), escape(hit["snippet"]))
        out_console().print(table)
        if not hits:
            err_console().print(f"no entry holds {query!r}", markup=False)


store_app.command("export")(export_command)
store_app.command("import")(import_command)
store_app.command("cleanup")(cleanup_command)
