"""PostgreSQL specifics beyond the contract suite: the chef's DSN option, the schema fence,
a lost server, and passwords kept out of repr and errors."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef
from contextchef.errors import (
    ConfigError,
    SchemaTooNewError,
    StoreCapabilityError,
    StoreError,
    StoreUnavailableError,
)
from contextchef.memory import Memory
from contextchef.store import Store
from contextchef.store.backend import StoredEntry
from contextchef.store.backends import postgres
from contextchef.store.backends.postgres import AsyncPostgresBackend, PostgresBackend
from contextchef.store.backends.postgres._common import redact, split_dsn
from contextchef.store.backends.postgres.migrations import (
    LATEST_SCHEMA_VERSION,
    MIGRATIONS,
    migrate_plan,
)
from tests.contract import pg


@pytest.fixture
def fresh_schema() -> Iterator[str]:
    """A schema of its own, dropped afterwards."""
    yield from pg.throwaway_schema("contextchef_test")


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
    notes = chef.store.namespace("notes")
    notes.put("plan.md", "shared across machines")
    assert notes.get("plan.md").content == "shared across machines"

    async def from_the_async_chef() -> str:
        store = AsyncContextChef(store=pg.DSN).store
        backend = store.core.backend
        assert isinstance(backend, AsyncPostgresBackend)
        try:
            entry = await store.namespace("notes").get("plan.md")
            return str(entry.content)
        finally:
            await backend.close()

    assert asyncio.run(from_the_async_chef()) == "shared across machines"
    chef.store.core.backend.close()


def test_the_dsn_chooses_schema_and_project(fresh_schema: str) -> None:
    params = f"contextchef_schema={fresh_schema}&contextchef_project=team%3Adocs"
    dsn = f"{pg.DSN}{pg.JOIN}connect_timeout=5&{params}"
    with PostgresBackend(dsn) as backend:
        assert (backend.schema, backend.project) == (fresh_schema, "team:docs")
        Store(backend).namespace("notes").put("a.md", "chosen by the DSN")
        assert "contextchef_project" not in repr(backend) and "connect_timeout=5" in repr(backend)
    chef = ContextChef(store=dsn)
    try:
        entry = chef.store.namespace("notes").get("a.md")
        assert entry is not None and entry.content == "chosen by the DSN"
    finally:
        chef.store.core.backend.close()
    with pytest.raises(ConfigError, match="disagrees"):
        PostgresBackend(dsn, schema="elsewhere")
    with pytest.raises(ConfigError, match="contextchef_shema"):
        PostgresBackend(f"{pg.DSN}{pg.JOIN}contextchef_shema=x")


def test_the_dsn_options_reach_the_server_beside_ours(fresh_schema: str) -> None:
    dsn = f"{pg.DSN}{pg.JOIN}options=-c%20work_mem%3D7MB&contextchef_schema={fresh_schema}"
    with PostgresBackend(dsn) as backend, backend._pool.connection() as conn:
        shown = conn.execute("SELECT current_setting('work_mem'), current_setting('search_path')")
        assert shown.fetchone() == ("7MB", fresh_schema)


def test_split_dsn_keeps_everything_else_byte_for_byte() -> None:
    dsn = "postgresql://u:p%40ss@h:5/db?sslmode=require&contextchef_schema=s1&application_name=a"
    assert split_dsn(dsn) == (
        "postgresql://u:p%40ss@h:5/db?sslmode=require&application_name=a",
        {"schema": "s1"},
    )
    assert split_dsn("postgresql://h/db?contextchef_project=dir%3Aab") == (
        "postgresql://h/db",
        {"project": "dir:ab"},
    )
    assert split_dsn("host=h dbname=db") == ("host=h dbname=db", {})


def test_passwords_stay_out_of_repr_logs_and_errors_with_dsn_parameters(
    fresh_schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "pw-that-must-not-leak"
    caplog.set_level(logging.DEBUG)
    bad = f"postgresql://postgres:{secret}@127.0.0.1:1/test?contextchef_schema={fresh_schema}"
    with pytest.raises(StoreUnavailableError) as info:
        PostgresBackend(bad, project="test:secret", connect_timeout=1)
    assert secret not in str(info.value)
    good = pg.DSN.replace("postgresql://postgres@", f"postgresql://postgres:{secret}@")
    with PostgresBackend(
        f"{good}{pg.JOIN}contextchef_schema={fresh_schema}", project="test:s"
    ) as backend:
        assert secret not in repr(backend)
        with pytest.raises(ConfigError) as config:
            PostgresBackend(f"{good}{pg.JOIN}contextchef_schema=Bad-Name")
        assert secret not in str(config.value)
    assert secret not in caplog.text


def test_memory_keeps_every_version_like_sqlite(fresh_schema: str) -> None:
    with PostgresBackend(pg.DSN, schema=fresh_schema, project="test:history") as backend:
        store = Store(backend, versioned=["memory"])  # what `Memory` declares
        assert store.namespace("memory").supports("history")
        assert not store.namespace("notes").supports("history")
        memory = Memory(store)
        memory.set("style", "tabs")
        memory.set("style", "spaces")
        view = store.namespace("memory")
        view.append("style", " (four)")
        backend.touch("memory", "style", 5.0)  # a read time is not a version
        assert memory.delete("style")
        memory.set("style", "tabs again")
        versions = memory.history("style")
        assert [v.value for v in versions] == ["tabs", "spaces", "spaces (four)", "tabs again"]
        raw = view.history("style")
        assert all("recorded_at" in v.meta for v in raw)
        assert ["superseded_at" in v.meta for v in raw] == [True, True, False, False]
        assert ["deleted_at" in v.meta for v in raw] == [False, False, True, False]
        with pytest.raises(StoreCapabilityError):
            backend.history("notes", "style")


def _structure(conn: Any, schema: str) -> dict[str, list[tuple[Any, ...]]]:
    """Tables, columns, indexes, triggers and functions of `schema`, its name masked."""

    def rows(sql: str) -> list[tuple[Any, ...]]:
        found = conn.execute(sql, (schema,)).fetchall()
        return sorted(tuple(str(v).replace(schema, "<schema>") for v in row) for row in found)

    return {
        "columns": rows(
            "SELECT table_name, column_name, ordinal_position, data_type, is_nullable, "
            "column_default, is_generated, generation_expression "
            "FROM information_schema.columns WHERE table_schema = %s"
        ),
        "indexes": rows("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s"),
        "triggers": rows(
            "SELECT t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c "
            "ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND NOT t.tgisinternal"
        ),
        "functions": rows(
            "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n "
            "ON n.oid = p.pronamespace WHERE n.nspname = %s"
        ),
        "migrations": rows(
            "SELECT table_name, 'bookkeeping' FROM information_schema.tables "
            "WHERE table_schema = %s"
        ),
    }


def test_a_migrated_schema_equals_a_fresh_one(fresh_schema: str) -> None:
    import psycopg

    old = fresh_schema + "_old"
    try:
        with psycopg.connect(pg.DSN, autocommit=True, options=f"-c search_path={old}") as conn:
            with conn.transaction():
                _run_plan(conn, migrate_plan(old, target=1))
            for ns, path, content in (("memory", "fact", "kept"), ("notes", "n.md", "note")):
                conn.execute(
                    "INSERT INTO entries(project, namespace, path, content, created_at, "
                    "updated_at, bytes) VALUES ('test:old', %s, %s, %s, 1, 2, 4)",
                    (ns, path, content),
                )
        with PostgresBackend(pg.DSN, schema=old, project="test:old") as backend:
            assert [v.content for v in backend.history("memory", "fact")] == ["kept"]
            assert backend.read("notes", "n.md") is not None
        PostgresBackend(pg.DSN, schema=fresh_schema, project="test:new").close()
        with psycopg.connect(pg.DSN) as conn:
            assert _structure(conn, old) == _structure(conn, fresh_schema)
            versions = conn.execute(
                f'SELECT version, name FROM "{old}".schema_migrations ORDER BY version'
            ).fetchall()
        assert versions == [(v, name) for v, (name, _) in enumerate(MIGRATIONS, start=1)]
    finally:
        with psycopg.connect(pg.DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{old}" CASCADE')


def _run_plan(conn: Any, plan: Any) -> Any:
    try:
        query = next(plan)
        while True:
            cursor = conn.execute(query.sql, query.params)
            query = plan.send(cursor.fetchall() if cursor.description else [])
    except StopIteration as done:
        return done.value


def test_write_many_lands_every_entry_or_none(fresh_schema: str) -> None:
    entries = {f"bulk/{i}.md": StoredEntry(f"entry {i}\x00 ü", {"i": i}) for i in range(50)}
    with PostgresBackend(pg.DSN, schema=fresh_schema, project="test:bulk") as backend:
        backend.write_many("notes", entries)
        backend.write_many("notes", {})
        assert backend.read_all("notes", "bulk/") == {
            path: backend.read("notes", path) for path in sorted(entries)
        }
        assert [backend.read("notes", p).content for p in entries] == [  # type: ignore[union-attr]
            e.content for e in entries.values()
        ]
        broken = {"bulk/new.md": StoredEntry("x"), "bulk/0.md": StoredEntry("y", {"t": {1}})}
        with pytest.raises(StoreError):
            backend.write_many("notes", broken)
        assert backend.read("notes", "bulk/new.md") is None  # nothing of the batch landed

        async def from_async() -> list[str]:
            async with AsyncPostgresBackend(
                pg.DSN, schema=fresh_schema, project="test:bulk"
            ) as native:
                await native.keep_versions("memory")  # what `Memory` declares
                await native.write_many("memory", {"a": StoredEntry("1"), "b": StoredEntry("2")})
                assert not await native.replace_if("memory", "a", StoredEntry("3"), "not-a-version")
                assert await native.search("memory", "1", limit=0) == []
                return [v.content for v in await native.history("memory", "a")]

        assert asyncio.run(from_async()) == ["1"]


def test_a_statement_past_its_timeout_is_cancelled_and_reported(fresh_schema: str) -> None:
    import psycopg

    with PostgresBackend(
        pg.DSN, schema=fresh_schema, project="test:slow", statement_timeout=0.3
    ) as backend:
        backend.write("notes", "busy.md", StoredEntry("v1"))
        with psycopg.connect(pg.DSN) as admin:  # holds the row lock until it rolls back
            admin.execute(
                f'SELECT 1 FROM "{fresh_schema}".entries WHERE path = %s FOR UPDATE',
                ("busy.md",),
            )
            start = time.monotonic()
            with pytest.raises(StoreUnavailableError, match="statement_timeout"):
                backend.write("notes", "busy.md", StoredEntry("v2"))
            assert time.monotonic() - start < 5
        backend.write("notes", "busy.md", StoredEntry("v3"))
        assert backend.read("notes", "busy.md").content == "v3"  # type: ignore[union-attr]


def test_a_search_for_a_nul_character_is_encoded_like_content(tmp_path: Any) -> None:
    """PostgreSQL text cannot hold NUL; a query holding one is encoded like stored content, so
    it finds the entry that holds one."""
    backend = pg.open_postgres(tmp_path)
    backend.write("notes", "a", StoredEntry("plain text"))
    backend.write("notes", "b", StoredEntry("nul \x00 inside"))
    assert [hit.path for hit in backend.search("notes", "\x00")] == ["b"]
    assert [hit.path for hit in backend.search("notes", "plain")] == ["a"]
