"""What both PostgreSQL drivers share: options, project identity, error translation, redaction.

The project is an identity string computed on the client, as SQLite's backend derives it
(`git:<root commit>` for a repository, `dir:<hash>` otherwise, or an explicit identity such as
`"team:docs"`), and stored as a column: two projects never see each other's entries, every
clone of one repository shares them. DSN passwords never reach `repr`, logs or error messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from contextchef.errors import ConfigError, MissingDependencyError, StoreError
from contextchef.errors import StoreUnavailableError as StoreUnavailableError
from contextchef.store.backends.postgres._sql import Query, Rows
from contextchef.store.backends.sqlite.identity import (
    GitUnavailableError,
    canonical_dir,
    dir_identity,
    explicit_identity,
    git_root_commits,
)

__all__ = [
    "DSN_PARAMETERS",
    "NOT_ALONE",
    "chosen",
    "connect_kwargs",
    "execute",
    "execute_async",
    "project_identity",
    "redact",
    "split_dsn",
    "translate",
    "validate_schema",
]

DSN_PARAMETERS = ("contextchef_schema", "contextchef_project", "contextchef_pgvector")
"""Query parameters of a `postgresql://` URI that contextchef reads and removes before libpq
sees the URI: the backend's `schema`, `project` and `pgvector`."""

_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_PASSWORD = re.compile(r"(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)|(://[^:/@\s]*:)([^@/\s]*)@")


def require_psycopg() -> Any:
    """The `psycopg` module, or `MissingDependencyError` naming the `postgres` extra."""
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "psycopg", "postgres") from exc
    return psycopg


def validate_schema(schema: str) -> str:
    """The schema name, checked to be a plain lowercase identifier (it is part of SQL text)."""
    if not isinstance(schema, str) or not _SCHEMA.match(schema):
        raise ConfigError(f"schema must match {_SCHEMA.pattern}, got {schema!r}")
    return schema


def redact(text: str) -> str:
    """`text` with every DSN password replaced by `***`."""

    def hide(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return f"{match.group(1)}***"
        return f"{match.group(3)}***@"

    return _PASSWORD.sub(hide, text)


def split_dsn(dsn: str) -> tuple[str, dict[str, str]]:
    """`dsn` without contextchef's own query parameters, and those parameters by short name.

    `postgresql://app@db/prod?sslmode=require&contextchef_schema=agents&contextchef_project=
    team:docs` gives `("postgresql://app@db/prod?sslmode=require", {"schema": "agents",
    "project": "team:docs"})`. Every other part of the URI is kept byte for byte; a libpq
    key/value string (`host=… dbname=…`) carries no such parameters and is returned as it is.
    An unknown `contextchef_*` parameter is a `ConfigError` (a typo must not go unnoticed).
    """
    if not isinstance(dsn, str):
        raise ConfigError(f"dsn must be a string, got {type(dsn).__name__}")
    base, mark, rest = dsn.partition("?")
    if not mark or "://" not in base:
        return dsn, {}
    query, hash_mark, fragment = rest.partition("#")
    kept: list[str] = []
    found: dict[str, str] = {}
    for part in query.split("&"):
        name, _, value = part.partition("=")
        name = unquote(name)
        if not name.startswith("contextchef_"):
            kept.append(part)
            continue
        if name not in DSN_PARAMETERS:
            known = ", ".join(DSN_PARAMETERS)
            raise ConfigError(f"unknown DSN parameter {name!r} (contextchef reads {known})")
        found[name.removeprefix("contextchef_")] = unquote(value)
    query = "&".join(p for p in kept if p)
    return base + ("?" + query if query else "") + hash_mark + fragment, found


def project_identity(project: str | os.PathLike[str] | None) -> str:
    """The project identity string: explicit, or derived from a directory (default: cwd)."""
    identity = explicit_identity(project)
    if identity is not None:
        return identity
    directory = canonical_dir(Path.cwd() if project is None else project)
    try:
        roots = git_root_commits(directory)
    except GitUnavailableError:
        roots = None
    return f"git:{roots[0]}" if roots else dir_identity(directory)


def connect_kwargs(schema: str, statement_timeout: float, dsn: str) -> dict[str, Any]:
    """Connection options: autocommit, the schema as search_path, the statement timeout, and
    `application_name` `contextchef:<schema>` (so `pg_stat_activity` shows whose sessions
    these are) unless the DSN names one. The DSN's own `options` (server settings such as
    `-c work_mem=64MB`) are kept, ours after them."""
    from psycopg.conninfo import conninfo_to_dict

    ms = max(1, int(statement_timeout * 1000))
    try:
        given = conninfo_to_dict(dsn)
    except Exception as exc:  # psycopg.ProgrammingError: a malformed DSN
        raise ConfigError(f"not a valid PostgreSQL DSN: {redact(str(exc))}") from None
    ours = f"-c search_path={schema} -c statement_timeout={ms}"
    theirs = str(given.get("options") or "").strip()
    kwargs: dict[str, Any] = {
        "autocommit": True,
        "options": f"{theirs} {ours}" if theirs else ours,
    }
    if "application_name" not in given:
        kwargs["application_name"] = f"contextchef:{schema}"
    return kwargs


@contextmanager
def translate(doing: str, ns: str | None = None, path: str | None = None) -> Iterator[None]:
    """psycopg errors as the `StoreError` family: a lost or refused connection (or a pool
    timeout, or a statement cancelled by `statement_timeout`) is `StoreUnavailableError`,
    anything else `StoreError`; messages are redacted."""
    import psycopg

    try:
        yield
    except psycopg.errors.QueryCanceled as exc:
        message = redact(f"{doing}: the statement ran past its statement_timeout: {exc}")
        raise StoreUnavailableError(message, namespace=ns, path=path) from exc
    except psycopg.OperationalError as exc:
        message = redact(f"{doing}: the PostgreSQL server is unavailable: {exc}")
        raise StoreUnavailableError(message, namespace=ns, path=path) from exc
    except psycopg.Error as exc:
        raise StoreError(redact(f"{doing}: {exc}"), namespace=ns, path=path) from exc
    except UnicodeEncodeError as exc:
        raise StoreError(f"{doing}: {exc}", namespace=ns, path=path) from exc


NOT_ALONE = "a plan's `alone` statement must be its only one"


def execute(conn: Any, query: Query) -> Rows:
    """Run one query on a sync connection; its rows (empty without a result)."""
    if query.many:
        with conn.cursor() as cursor:
            cursor.executemany(query.sql, query.params)
        return []
    cursor = conn.execute(query.sql, query.params, binary=query.binary)
    return cursor.fetchall() if cursor.description else []


async def execute_async(conn: Any, query: Query) -> Rows:
    """Run one query on an async connection; its rows (empty without a result)."""
    if query.many:
        async with conn.cursor() as cursor:
            await cursor.executemany(query.sql, query.params)
        return []
    cursor = await conn.execute(query.sql, query.params, binary=query.binary)
    return await cursor.fetchall() if cursor.description else []


def chosen(name: str, given: Any, params: Mapping[str, str]) -> Any:
    """The option `name` from the keyword argument or the DSN; both, disagreeing, is an error."""
    from_dsn = params.get(name)
    if given is None or from_dsn is None:
        return from_dsn if given is None else given
    if str(given) != from_dsn:
        raise ConfigError(
            f"{name}={str(given)!r} disagrees with the DSN's contextchef_{name}={from_dsn!r}"
        )
    return given
