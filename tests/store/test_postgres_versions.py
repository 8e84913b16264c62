"""PostgreSQL's versioned namespaces: migration m004, declarations per project, the trigger that
records versions whichever statement writes, and another worker's declaration."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from contextchef.store.backend import StoredEntry
from contextchef.store.backends.postgres import PostgresBackend
from contextchef.store.backends.postgres.migrations import migrate_plan
from tests.contract import pg


@pytest.fixture
def schema() -> Iterator[str]:
    """A schema of its own, dropped afterwards."""
    yield from pg.throwaway_schema("contextchef_versions")


def _connect(schema: str) -> Any:
    import psycopg

    return psycopg.connect(pg.DSN, autocommit=True, options=f"-c search_path={schema}")


def _run_plan(conn: Any, plan: Any) -> Any:
    try:
        query = next(plan)
        while True:
            cursor = conn.execute(query.sql, query.params)
            query = plan.send(cursor.fetchall() if cursor.description else [])
    except StopIteration as done:
        return done.value


def _insert(conn: Any, project: str, ns: str, path: str, content: str) -> None:
    conn.execute(
        "INSERT INTO entries(project, namespace, path, content, created_at, updated_at, bytes) "
        "VALUES (%s, %s, %s, %s, 1, 2, %s)",
        (project, ns, path, content, len(content)),
    )


def test_m004_keeps_versioning_what_m002_versioned(schema: str) -> None:
    with _connect(schema) as conn:
        with conn.transaction():
            _run_plan(conn, migrate_plan(schema, target=3))
        _insert(conn, "test:old", "memory", "goal", "ship v1")  # m002's trigger versions it
        conn.execute(
            "UPDATE entries SET content = 'ship v2', version = version + 1 WHERE path = 'goal'"
        )
        _insert(conn, "test:notes-only", "notes", "n.md", "a note")
    with PostgresBackend(pg.DSN, schema=schema, project="test:old") as old:  # migrates
        assert old.supports("history", "memory") and not old.supports("history", "notes")
        assert [v.content for v in old.history("memory", "goal")] == ["ship v1", "ship v2"]
        old.write("memory", "goal", StoredEntry("ship v3"))
        old.write("notes", "n.md", StoredEntry("not versioned"))
        assert len(old.history("memory", "goal")) == 3
    with PostgresBackend(pg.DSN, schema=schema, project="test:notes-only") as other:
        assert not other.supports("history", "memory")
    with _connect(schema) as conn:
        rows = conn.execute("SELECT project, namespace FROM versioned_namespaces").fetchall()
        assert rows == [("test:old", "memory")]
        counted = conn.execute("SELECT namespace, count(*) FROM memory_versions GROUP BY 1")
        assert counted.fetchall() == [("memory", 3)]


def test_the_trigger_versions_declared_namespaces_of_their_project_only(schema: str) -> None:
    with (
        PostgresBackend(pg.DSN, schema=schema, project="test:a") as a,
        PostgresBackend(pg.DSN, schema=schema, project="test:b") as b,
    ):
        a.write("facts", "k", StoredEntry("before"))
        a.keep_versions("facts")
        b.write("facts", "k", StoredEntry("b's"))
        with _connect(schema) as conn:  # any statement that writes the row is recorded
            conn.execute(
                "UPDATE entries SET content = 'by hand', version = version + 1 "
                "WHERE project = 'test:a' AND namespace = 'facts'"
            )
        a.delete("facts", "k")
        history = a.history("facts", "k")
        assert [v.content for v in history] == ["before", "by hand"]
        assert "superseded_at" in history[0].meta and "deleted_at" in history[1].meta
        assert not b.supports("history", "facts")


def test_a_declaration_by_another_worker_is_seen_by_history(schema: str) -> None:
    with (
        PostgresBackend(pg.DSN, schema=schema, project="test:p") as early,
        PostgresBackend(pg.DSN, schema=schema, project="test:p") as late,
    ):
        late.keep_versions("facts")
        early.write("facts", "k", StoredEntry("written by the other worker"))
        assert [v.content for v in early.history("facts", "k")] == ["written by the other worker"]
