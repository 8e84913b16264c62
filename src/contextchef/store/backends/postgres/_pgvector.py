"""Finding pgvector (the `vector` extension) once per pool, and readying the schema for it.

`PostgresBackend(dsn, pgvector=…)` chooses: `"auto"` (default) uses the extension when it is
installed in the database, and installs it (`CREATE EXTENSION vector SCHEMA public`) when the
server has it available and this role may (a superuser, or a trusted extension and `CREATE` on
the database); `"installed"` uses it only when someone already installed it; `"off"` never
uses it. Whichever is chosen, a backend never fails for want of the extension: it then keeps
scoring exactly in the client (see `_vectors.py`).

Once found, `entry_vectors_enable_pgvector()` (migration m006) adds the `embedding vector`
column if it is missing (the extension may come after the schema), under the schema's
advisory lock, and the rows written without one (before the extension came, or by a backend
with `pgvector="off"`) get theirs here. What was found is the backend's `pgvector`
(`PgVector`, or None), declared with its capabilities (`supports("pgvector", ns)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from contextchef.errors import ConfigError
from contextchef.store.backends.postgres._sql import Plan, Query
from contextchef.store.vectors import unpack

__all__ = [
    "PGVECTOR_MODES",
    "PgVector",
    "PgVectorMode",
    "backfill",
    "create_extension",
    "embedding_of",
    "enable",
    "find",
    "hnsw_index",
    "validate_mode",
]

PgVectorMode = Literal["auto", "installed", "off"]
PGVECTOR_MODES: tuple[PgVectorMode, ...] = ("auto", "installed", "off")

FLOAT32_MAX = 3.4028234e38
"""Beyond this a number has no float32 (an `embedding`): such a vector is scored in the client."""


@dataclass(frozen=True, slots=True)
class PgVector:
    """The `vector` extension as a backend found it: its schema (quoted as an identifier,
    since SQL names its type and operators through it) and version."""

    schema: str
    version: str

    @property
    def type(self) -> str:
        return f"{self.schema}.vector"

    @property
    def iterative_scans(self) -> bool:
        """Whether an HNSW scan can go on past its first `ef_search` candidates until the
        query's filters let `LIMIT` rows through (pgvector 0.8 and later)."""
        numbers = [int(part) if part.isdigit() else 0 for part in self.version.split(".")[:2]]
        return tuple(numbers) >= (0, 8)

    def operator(self, name: str) -> str:
        """`OPERATOR(schema.<name>)`: the backend's `search_path` is its own schema only."""
        return f"OPERATOR({self.schema}.{name})"


def validate_mode(mode: object) -> PgVectorMode:
    for known in PGVECTOR_MODES:
        if mode == known:
            return known
    raise ConfigError(f"pgvector must be one of {', '.join(PGVECTOR_MODES)}, got {mode!r}")


def find() -> Plan:
    """`(installed, creatable)`: the `PgVector` installed and usable by this role (or None),
    and whether this role may install it (available on the server, and a superuser or a
    trusted extension with `CREATE` on the database)."""
    rows = yield Query(
        "SELECT quote_ident(n.nspname), e.extversion, "
        "(SELECT coalesce(bool_or(v.trusted), false) "
        "  AND has_database_privilege(current_database(), 'CREATE') "
        "  OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) "
        "  FROM pg_available_extension_versions AS v WHERE v.name = 'vector' HAVING count(*) > 0) "
        "FROM (SELECT 1) AS one LEFT JOIN pg_extension AS e ON e.extname = 'vector' "
        "LEFT JOIN pg_namespace AS n ON n.oid = e.extnamespace "
        "AND has_schema_privilege(n.oid, 'USAGE')",
        alone=True,
    )
    schema, version, creatable = rows[0]
    if schema is None:
        return None, bool(creatable) and version is None
    return PgVector(str(schema), str(version)), False


def create_extension() -> Plan:
    """Install the extension in `public` (never in the backend's schema: dropping that would
    drop the extension for every schema of the database)."""
    yield Query("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public", alone=True)


def enable(schema: str) -> Plan:
    """Whether the `embedding` column exists once the extension is found (adding it if not),
    under the advisory lock migrations take, so concurrent openers add it once."""
    yield Query("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"contextchef:{schema}",))
    rows = yield Query("SELECT entry_vectors_enable_pgvector()")
    return bool(rows and rows[0][0])


HNSW_MAX_DIMS = 2000
"""The most dimensions pgvector indexes a `vector` with."""

_OPERATOR_CLASSES = {
    "cosine": "vector_cosine_ops",
    "l2": "vector_l2_ops",
    "inner_product": "vector_ip_ops",
}


def hnsw_index(pv: PgVector, dims: int, metric: str) -> Plan:
    """Build the HNSW index of the `dims`-long embeddings for `metric` (once; its name is
    returned). It runs in one transaction without a statement timeout, and writers of vectors
    wait until it is built (minutes for millions of vectors)."""
    if metric not in _OPERATOR_CLASSES:
        raise ConfigError(f"unknown metric {metric!r}; known: {', '.join(_OPERATOR_CLASSES)}")
    if isinstance(dims, bool) or not isinstance(dims, int) or not 1 <= dims <= HNSW_MAX_DIMS:
        raise ConfigError(f"an HNSW index needs dims between 1 and {HNSW_MAX_DIMS}, got {dims!r}")
    name = f"entry_vectors_hnsw_{metric}_{dims}"
    yield Query("SET LOCAL statement_timeout = 0")
    yield Query(
        f"CREATE INDEX IF NOT EXISTS {name} ON entry_vectors USING hnsw "
        f"((embedding::{pv.type}({dims})) {pv.schema}.{_OPERATOR_CLASSES[metric]}) "
        f"WHERE dims = {dims}"
    )
    return name


def embedding_of(vector: Sequence[float]) -> list[float] | None:
    """`vector` as the `embedding` to store, or None when the database must not rank it: a
    number beyond float32, or a zero vector (whose cosine pgvector leaves undefined where the
    exact scorer says 0). Such rows are scored in the client (see `_vectors.nearest`)."""
    if not any(vector) or not all(abs(x) < FLOAT32_MAX for x in vector):
        return None
    return [float(x) for x in vector]


def backfill(pv: PgVector, batch: int = 1000) -> Plan:
    """Give an `embedding` to the rows without one, a batch at a time in key order (a row
    rewritten meanwhile keeps its own); returns how many got one."""
    done = 0
    after = ("", "", "")
    while True:
        rows = yield Query(
            "SELECT project, namespace, path, vector FROM entry_vectors "
            "WHERE embedding IS NULL AND (project, namespace, path) > (%s, %s, %s) "
            "ORDER BY project, namespace, path LIMIT %s",
            (*after, batch),
        )
        updates = []
        for project, ns, path, blob in rows:
            embedding = embedding_of(unpack(bytes(blob)))
            if embedding is not None:
                updates.append((embedding, project, ns, path, bytes(blob)))
        if updates:
            yield Query(
                f"UPDATE entry_vectors SET embedding = %b::float8[]::{pv.type} "
                "WHERE project = %b AND namespace = %b AND path = %b AND vector = %b",
                updates,
                many=True,
            )
            done += len(updates)
        if len(rows) < batch:
            return done
        after = (str(rows[-1][0]), str(rows[-1][1]), str(rows[-1][2]))
