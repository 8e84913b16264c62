"""`contextchef mcp`: serve the context store to MCP clients (desktop and IDE agents).

The store is the machine's SQLite database by default (`--store FILE` names another, a
`postgresql://` DSN a PostgreSQL one, `:memory:` a throwaway one), scoped to the project of the
working directory or of `--project DIR`. Over stdio (the default) the client starts this
command itself; `--transport http` serves streamable HTTP on `--host`/`--port` instead.
Failures to open the store print one line on stderr and exit with code 1.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from typing import Annotated, Any

import typer

from contextchef.errors import ContextChefError

__all__ = ["mcp_command", "open_backend"]


def open_backend(store: str | None, project: str | None) -> Any:
    """The backend `--store` and `--project` name (see the module docstring)."""
    if store in (":memory:", "memory"):
        from contextchef.store.backends.inmemory import InMemoryBackend

        return InMemoryBackend()
    if store is not None and store.startswith(("postgresql://", "postgres://")):
        from contextchef.store.backends.postgres import AsyncPostgresBackend

        return AsyncPostgresBackend(store, project=project)
    from contextchef.store.backends.sqlite import SQLiteBackend

    return SQLiteBackend(store, project=project)


async def _close(backend: Any) -> None:
    close = getattr(backend, "close", None)
    if close is not None:
        outcome = close()
        if inspect.isawaitable(outcome):
            await outcome


def mcp_command(
    store: Annotated[
        str | None,
        typer.Option(
            metavar="PATH|DSN|:memory:",
            help="A SQLite file, a postgresql:// DSN, or :memory: (default: the machine's "
            "database).",
        ),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option(help="The project whose entries are served (default: the working directory)."),
    ] = None,
    transport: Annotated[
        str,
        typer.Option(
            metavar="stdio|http",
            help="stdio (the client starts this command) or http (streamable HTTP).",
        ),
    ] = "stdio",
    host: Annotated[str, typer.Option(help="The address --transport http listens on.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(min=0, max=65535, help="The port of --transport http.")] = (
        8000
    ),
    read_only: Annotated[
        bool, typer.Option("--read-only", help="Refuse every write the context tool is asked for.")
    ] = False,
) -> None:
    """Serve the context store over MCP: the context and search tools, entries as resources.

    Example: contextchef mcp --store ~/agents/context.db --project ~/code/app
    """
    if transport not in ("stdio", "http"):
        raise typer.BadParameter("use stdio or http", param_hint="--transport")
    try:
        import anyio

        from contextchef.integrations.mcp import ContextServer

        backend = open_backend(store, project)
    except (ContextChefError, ImportError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None

    async def serve() -> None:
        try:
            server = ContextServer(backend, read_only=read_only)
            if transport == "stdio":
                await server.run_stdio()
            else:
                print(f"serving MCP on http://{host}:{port}/mcp", file=sys.stderr, flush=True)
                await server.run_http(host=host, port=port)
        finally:
            await _close(backend)

    with contextlib.suppress(KeyboardInterrupt):  # an interactive stop is a normal end
        anyio.run(serve)
