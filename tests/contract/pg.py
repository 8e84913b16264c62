"""The PostgreSQL side of the contract suite: a server probe, a session schema, open backends.

The suite uses the server at `CONTEXTCHEF_TEST_PG_DSN` (default: this machine's
`postgresql://postgres@127.0.0.1:5432/test`, see `DEFAULT_DSN`) in a fresh schema
`contextchef_test_<pid>_<hex>`, dropped at the end of the session. Each backend gets its own
project (derived from the test's temporary directory), so tests never see each other's rows
and a reopen sees the same ones. Without a server the PostgreSQL cases skip, saying how to
start one, except under `CI=true`, where a missing server fails them; outside CI a backend that
finds the server's connection slots all taken (other suites sharing it) skips its test too,
saying so.
"""

from __future__ import annotations

import functools
import hashlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test?options=-c%20synchronous_commit%3Doff"
"""This machine's server. The suite's sessions don't wait for the WAL flush at each commit:
what they see is the same (a commit is visible and survives its session), only a crash of the
server itself could lose the last ones, and no test crashes the server."""
DSN = os.environ.get("CONTEXTCHEF_TEST_PG_DSN", DEFAULT_DSN)
JOIN = "&" if "?" in DSN else "?"
"""What joins one more query parameter onto `DSN`."""
SCHEMA = f"contextchef_test_{os.getpid()}_{secrets.token_hex(4)}"
OPENED: list[Any] = []
"""Backends opened by the current test; closed by the suite's teardown."""

HOW_TO_START = (
    "no PostgreSQL server answers at CONTEXTCHEF_TEST_PG_DSN (default 127.0.0.1:5432, user "
    "postgres, database test). Start one, e.g. `pg_ctlcluster 15 main start`, or "
    "`docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust -e POSTGRES_DB=test "
    "postgres:16`"
)


@functools.cache
def server_error() -> str | None:
    """None when the server answers, else why not."""
    try:
        import psycopg

        with psycopg.connect(DSN, connect_timeout=3):
            return None
    except Exception as exc:  # any failure means: no usable server
        return f"{type(exc).__name__}: {exc}"


def require_server() -> None:
    """Skip (or, under CI=true, fail) when no server answers."""
    error = server_error()
    if error is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI needs a PostgreSQL server: {HOW_TO_START} ({error})")
    pytest.skip(HOW_TO_START)


def project_of(tmp: Path) -> str:
    return "test:" + hashlib.sha256(str(tmp).encode()).hexdigest()[:16]


def open_postgres(tmp: Path, pgvector: str = "installed") -> Any:
    """A sync backend over the session schema, scoped to a project of `tmp` (using pgvector
    where the database has it, never installing it: a test suite leaves the server as it is)."""
    require_server()
    from contextchef.errors import StoreUnavailableError
    from contextchef.store.backends.postgres import PostgresBackend

    try:
        backend = PostgresBackend(
            DSN, schema=SCHEMA, project=project_of(tmp), pool_size=2, pgvector=pgvector
        )
    except StoreUnavailableError as exc:
        if "too many clients" not in str(exc) or os.environ.get("CI") == "true":
            raise
        pytest.skip(f"the PostgreSQL server has no free connection slot right now: {exc}")
    OPENED.append(backend)
    return backend


def as_async(backend: Any) -> Any:
    """The async-native backend over the same schema and project as a sync one."""
    from contextchef.store.backends.postgres import AsyncPostgresBackend

    return AsyncPostgresBackend(
        DSN, schema=SCHEMA, project=backend.project, pool_size=2, pgvector=backend.pgvector_mode
    )


NO_PGVECTOR = (
    "pgvector (the `vector` extension) is not installed in the test database; it is optional. "
    "To run these cases, build it (`apt-get install postgresql-server-dev-15`, then `make && "
    "make install` in a checkout of github.com/pgvector/pgvector) and run `CREATE EXTENSION "
    "vector` in the database of CONTEXTCHEF_TEST_PG_DSN"
)


def open_postgres_pgvector(tmp: Path) -> Any:
    """`open_postgres` ranking with pgvector; skips (even under CI=true: the extension is
    optional) when the database does not have it installed."""
    backend = open_postgres(tmp, pgvector="installed")
    if backend.pgvector is None:
        pytest.skip(NO_PGVECTOR)
    return backend


def close_opened() -> None:
    while OPENED:
        OPENED.pop().close()


def drop_schema() -> None:
    """Drop the session schema if this session created it."""
    if server_error() is not None:
        return
    import psycopg

    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{SCHEMA}" CASCADE')


def throwaway_schema(prefix: str) -> Iterator[str]:
    """A schema name of its own for one test, dropped afterwards (skips, or fails under CI,
    like the contract suite when the server is absent). Use as a generator fixture body."""
    require_server()
    import psycopg

    name = f"{prefix}_{os.getpid()}_{secrets.token_hex(4)}"
    yield name
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
