"""PostgreSQL with and without pgvector, beyond the vectors contract suite: how the extension is
found, that the database's float32 ranking never changes the exact answer (a candidate pool
smaller than the namespace, float32 ties), vectors written without it, and a database where
the `vector` type is not installed."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextchef.errors import ConfigError, StoreCapabilityError, StoreError, StoreUnavailableError
from contextchef.store.backends.postgres import PostgresBackend, _pgvector
from contextchef.store.backends.postgres._vectors import POOL_SLACK
from contextchef.store.vectors import METRICS, rank
from tests.contract import pg


def _answers(plan: Any, *answers: Any) -> tuple[list[str], Any]:
    """Run a plan (or the backend's steps) against canned answers: the SQL (or the plans'
    descriptions) it issued, and its value."""
    issued: list[str] = []
    try:
        step = next(plan)
        for answer in answers:
            issued.append(step.sql if hasattr(step, "sql") else step[1])
            step = plan.send(answer)
        issued.append(step.sql if hasattr(step, "sql") else step[1])
    except StopIteration as done:
        return issued, done.value
    raise AssertionError(f"the plan asked more: {issued}")


def test_find_reports_the_installed_extension_or_whether_it_may_be_created() -> None:
    _, found = _answers(_pgvector.find(), [('"public"', "0.8.6", None)])
    assert found == (_pgvector.PgVector('"public"', "0.8.6"), False)
    _, found = _answers(_pgvector.find(), [(None, None, True)])
    assert found == (None, True)  # available, and this role may install it
    _, found = _answers(_pgvector.find(), [(None, None, None)])
    assert found == (None, False)  # not on this server
    _, found = _answers(_pgvector.find(), [(None, "0.8.6", True)])
    assert found == (None, False)  # installed where this role may not use it


class _Steps:
    """A backend's pgvector steps, without a server."""

    def __init__(self, mode: str) -> None:
        self.backend = PostgresBackend.__new__(PostgresBackend)
        self.backend.pgvector_mode = _pgvector.validate_mode(mode)
        self.backend.schema = "contextchef"

    def run(self, *answers: Any) -> tuple[list[str], Any]:
        return _answers(self.backend._pgvector_steps(), *answers)


def test_the_extension_is_installed_only_when_the_mode_and_the_server_allow() -> None:
    found = _pgvector.PgVector("public", "0.8.6")
    issued, value = _Steps("auto").run((None, True), None, (found, False), True, 0)
    assert issued == [
        "looking for pgvector",
        "installing pgvector",
        "looking for pgvector",
        "enabling pgvector",
        "embedding the vectors for pgvector",
    ]
    assert value == found
    issued, value = _Steps("installed").run((None, True))
    assert (issued, value) == (["looking for pgvector"], None)
    issued, value = _Steps("auto").run((None, False))
    assert (issued, value) == (["looking for pgvector"], None)  # not permitted: not tried
    assert _Steps("off").run() == ([], None)
    with pytest.raises(ConfigError, match="pgvector must be one of"):
        _pgvector.validate_mode("yes")


def test_a_failure_readying_pgvector_leaves_the_backend_scoring_in_the_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    steps = _Steps("installed")
    answers = iter([(_pgvector.PgVector("public", "0.8.6"), False)])

    def run(plan: Any, doing: str) -> Any:
        if doing == "enabling pgvector":  # e.g. a role that does not own the table
            raise StoreError("enabling pgvector: must be owner of table entry_vectors")
        return next(answers)

    steps.backend._run = run  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING):
        assert steps.backend._find_pgvector() is None
    assert "must be owner" in caplog.text

    def lost(plan: Any, doing: str) -> Any:
        raise StoreUnavailableError("looking for pgvector: the server is unavailable")

    steps.backend._run = lost  # type: ignore[method-assign]
    with pytest.raises(StoreUnavailableError):  # a lost server is not swallowed
        steps.backend._find_pgvector()


def test_the_dsn_may_choose_the_mode(tmp_path: Path) -> None:
    pg.require_server()
    with pytest.raises(ConfigError, match="pgvector must be one of"):
        PostgresBackend(pg.DSN + pg.JOIN + "contextchef_pgvector=yes", project="test:dsn")
    dsn = pg.DSN + pg.JOIN + "contextchef_pgvector=off"
    with PostgresBackend(dsn, schema=pg.SCHEMA, project=pg.project_of(tmp_path)) as backend:
        assert backend.pgvector_mode == "off" and backend.pgvector is None


def _gaussian(count: int, dims: int, seed: int) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.gauss(0.0, 1.0) for _ in range(dims)] for _ in range(count)]


@pytest.mark.parametrize("metric", METRICS)
def test_pgvector_answers_exactly_beyond_its_candidate_pool(tmp_path: Path, metric: str) -> None:
    backend = pg.open_postgres_pgvector(tmp_path)
    rows = _gaussian(4 * POOL_SLACK, 16, seed=7)
    vectors = {f"{'a' if i % 3 else 'b'}/{i:03d}": row for i, row in enumerate(rows)}
    backend.put_vectors("notes", vectors)
    query = _gaussian(1, 16, seed=8)[0]
    for prefix, limit in (("", 5), ("a/", 3), ("b/", 40)):
        items = [(path, v) for path, v in vectors.items() if path.startswith(prefix)]
        expected = rank(query, items, metric=metric, limit=limit)
        found = backend.nearest("notes", query, metric=metric, prefix=prefix, limit=limit)
        assert [path for path, _ in found] == [path for path, _ in expected]
        assert [score for _, score in found] == pytest.approx([s for _, s in expected], abs=1e-8)


@pytest.mark.parametrize("metric", METRICS)
def test_vectors_pgvector_cannot_rank_are_scored_exactly(tmp_path: Path, metric: str) -> None:
    backend = pg.open_postgres_pgvector(tmp_path)
    # Every vector points away from the query, so a zero vector (cosine 0 for the exact
    # scorer, undefined for pgvector) and one beyond float32 are among the best.
    rows = [[-abs(x) for x in row] for row in _gaussian(2 * POOL_SLACK, 4, seed=5)]
    vectors = {f"n/{i:03d}": row for i, row in enumerate(rows)}
    vectors["n/zero"] = [0.0, 0.0, 0.0, 0.0]
    vectors["n/huge"] = [1e39, 1.0, 1.0, 1.0]
    backend.put_vectors("notes", vectors)
    query = [1.0, 2.0, 3.0, 4.0]
    expected = rank(query, list(vectors.items()), metric=metric, limit=3)
    found = backend.nearest("notes", query, metric=metric, limit=3)
    assert [path for path, _ in found] == [path for path, _ in expected]
    assert [score for _, score in found] == pytest.approx([s for _, s in expected], abs=1e-8)


def test_float32_ties_are_ranked_by_the_exact_vectors(tmp_path: Path) -> None:
    backend = pg.open_postgres_pgvector(tmp_path)
    count = 2 * POOL_SLACK
    # One float32 vector for all: only float64 tells them apart, the last written best.
    vectors = {f"n/{i:03d}": [1.0, 1024.0 + i * 5e-7, 2.0] for i in range(count)}
    backend.put_vectors("notes", vectors)
    found = backend.nearest("notes", [0.0, 1.0, 0.0], metric="inner_product", limit=2)
    assert [path for path, _ in found] == [f"n/{count - 1:03d}", f"n/{count - 2:03d}"]


def test_an_hnsw_index_is_built_once_and_answers_with_exact_scores(tmp_path: Path) -> None:
    backend = pg.open_postgres_pgvector(tmp_path)
    rows = _gaussian(6 * POOL_SLACK, 12, seed=11)
    vectors = {f"{'a' if i % 3 else 'b'}/{i:03d}": row for i, row in enumerate(rows)}
    backend.put_vectors("notes", vectors)
    name = backend.build_vector_index(12, "l2")
    assert backend.build_vector_index(12, "l2") == name  # once
    native = pg.as_async(backend)
    assert asyncio.run(_build_and_close(native, 12, "l2")) == name
    query = _gaussian(1, 12, seed=12)[0]
    items = [(path, v) for path, v in vectors.items() if path.startswith("b/")]
    expected = rank(query, items, metric="l2", limit=5)
    found = backend.nearest("notes", query, metric="l2", prefix="b/", limit=5)
    assert len(found) == 5 and found[0] == expected[0]  # filtered, yet `limit` answers
    assert dict(found) == pytest.approx({p: s for p, s in expected if p in dict(found)})


async def _build_and_close(backend: Any, dims: int, metric: str) -> str:
    try:
        return str(await backend.build_vector_index(dims, metric))
    finally:
        await backend.close()


def test_vectors_written_without_pgvector_are_ranked_once_it_is_used(tmp_path: Path) -> None:
    exact = pg.open_postgres(tmp_path, pgvector="off")
    rows = _gaussian(3 * POOL_SLACK, 8, seed=3)
    exact.put_vectors("notes", {f"n/{i:03d}": row for i, row in enumerate(rows)})
    backend = pg.open_postgres_pgvector(tmp_path)  # gives them their embeddings on opening
    assert _unembedded(backend) == 0
    query = _gaussian(1, 8, seed=4)[0]
    exact.put_vectors("notes", {"n/005": [10.0 * x for x in query]})  # its embedding is stale
    assert _unembedded(backend) == 1
    found = backend.nearest("notes", query, metric="inner_product", limit=3)
    assert found == exact.nearest("notes", query, metric="inner_product", limit=3)
    assert found[0][0] == "n/005"


def _unembedded(backend: Any) -> int:
    import psycopg

    with psycopg.connect(pg.DSN) as conn:
        row = conn.execute(
            f'SELECT count(*) FROM "{pg.SCHEMA}".entry_vectors '
            "WHERE project = %s AND embedding IS NULL",
            (backend.project,),
        ).fetchone()
    return int(row[0]) if row else -1


@pytest.fixture
def database_without_pgvector() -> Iterator[str]:
    """A DSN of this server's `postgres` database (skips where it has pgvector installed)."""
    pg.require_server()
    import psycopg
    from psycopg.conninfo import make_conninfo

    dsn = make_conninfo(pg.DSN, dbname="postgres")
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
                pytest.skip("the server's `postgres` database has pgvector installed")
    except psycopg.OperationalError as exc:
        pytest.skip(f"no access to the server's `postgres` database: {exc}")
    yield dsn


def test_a_database_without_the_vector_type_keeps_and_ranks_vectors(
    database_without_pgvector: str, tmp_path: Path
) -> None:
    import psycopg

    schema = f"contextchef_novector_{pg.SCHEMA.rsplit('_', 2)[1]}"
    try:
        backend = PostgresBackend(
            database_without_pgvector,
            schema=schema,
            project=pg.project_of(tmp_path),
            pool_size=1,
            pgvector="installed",
        )
        with backend:
            assert backend.pgvector is None and not backend.supports("pgvector", "notes")
            backend.put_vectors("notes", {"a": [1.0, 0.0], "b": [0.6, 0.8], "c": [0.0, 1.0]})
            assert backend.nearest("notes", [1.0, 0.0], limit=2) == [("a", 1.0), ("b", 0.6)]
            backend.delete_vectors("notes", ["a"])
            assert backend.nearest("notes", [1.0, 0.0], limit=1) == [("b", 0.6)]
            with pytest.raises(StoreCapabilityError, match="pgvector"):
                backend.build_vector_index(2)
    finally:
        with psycopg.connect(database_without_pgvector, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
