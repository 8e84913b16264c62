"""PostgreSQL specifics beyond the contract suite: the chef's DSN option, the schema fence,
a lost server, and passwords kept out of repr and errors."""

from __future__ import annotations

import asyncio
import functools
import os
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef
from contextchef.errors import ConfigError, SchemaTooNewError, StoreUnavailableError
from contextchef.store.backends import postgres
from contextchef.store.backends.postgres import AsyncPostgresBackend, PostgresBackend
from contextchef.store.backends.postgres._common import redact
from contextchef.store.backends.postgres.migrations import LATEST_SCHEMA_VERSION, MIGRATIONS
from tests.contract import pg


@pytest.fixture
def fresh_schema() -> Iterator[str]:
    """A schema of its own, dropped afterwards (skips or fails like the contract suite)."""
    pg.require_server()
    import psycopg

    schema = f"contextchef_test_{os.getpid()}_{secrets.token_hex(4)}"
    yield schema
    with psycopg.connect(pg.DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_latest_schema_version_moves_with_the_migrations() -> None:
    assert len(MIGRATIONS) == LATEST_SCHEMA_VERSION


def test_passwords_never_appear_in_repr_or_errors() -> None:
    dsn = "postgresql://agent:s3cret@127.0.0.1:1/test?connect_timeout=1"
    assert "s3cret" not in redact(dsn) and "***" in redact(dsn)
    assert "s3cret" not in redact("host=x password='s3cret' user=y")
    with pytest.raises(StoreUnavailableError) as info:
        PostgresBackend(dsn, project="test:lost", connect_timeout=1)
    assert "s3cret" not in str(info.value)
    with pytest.raises(ConfigError) as config:
        ContextChef(store="mysql://agent:s3cret@host/db")
    assert "s3cret" not in str(config.value)


def test_a_newer_schema_is_refused_before_anything_is_written(fresh_schema: str) -> None:
    import psycopg

    with psycopg.connect(pg.DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{fresh_schema}"')
        conn.execute(
            f'CREATE TABLE "{fresh_schema}".schema_migrations (version INTEGER PRIMARY KEY, '
            "name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
        )
        conn.execute(
            f'INSERT INTO "{fresh_schema}".schema_migrations VALUES (%s, %s, 0)',
            (LATEST_SCHEMA_VERSION + 1, "m999_future"),
        )
    with pytest.raises(SchemaTooNewError):
        PostgresBackend(pg.DSN, schema=fresh_schema, project="test:fence")
    with psycopg.connect(pg.DSN) as conn:
        found = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s",
            (fresh_schema,),
        ).fetchone()
    assert found == (1,)  # only the bookkeeping table: nothing was migrated or written


def test_the_chef_opens_a_postgresql_dsn(
    fresh_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    options: dict[str, Any] = {"schema": fresh_schema, "project": "test:chef"}
    monkeypatch.setattr(postgres, "PostgresBackend", functools.partial(PostgresBackend, **options))
    monkeypatch.setattr(
        postgres, "AsyncPostgresBackend", functools.partial(AsyncPostgresBackend, **options)
    )
    chef = ContextChef(store=pg.DSN)
    notes = chef.get_store().namespace("notes")
    notes.put("plan.md", "shared across machines")
    assert notes.get("plan.md").content == "shared across machines"

    async def from_the_async_chef() -> str:
        store = AsyncContextChef(store=pg.DSN).get_store()
        backend = store.core.backend
        assert isinstance(backend, AsyncPostgresBackend)
        try:
            entry = await store.namespace("notes").get("plan.md")
            return str(entry.content)
        finally:
            await backend.close()

    assert asyncio.run(from_the_async_chef()) == "shared across machines"
    chef.get_store().core.backend.close()
