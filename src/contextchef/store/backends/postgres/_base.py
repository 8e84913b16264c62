"""What both PostgreSQL drivers share: their options, the schema's versioned namespaces and the
capabilities they report, how often `transact` reruns after a race (see backend.py and
asynchronous.py for the drivers themselves)."""

from __future__ import annotations

import logging
import os
from collections.abc import Generator, Sequence
from typing import Any

from contextchef.errors import (
    ConfigError,
    StoreCapabilityError,
    StoreConflictError,
    StoreUnavailableError,
)
from contextchef.store.backend import CAPABILITIES
from contextchef.store.backends.postgres import _pgvector, _sql
from contextchef.store.backends.postgres._common import (
    chosen,
    connect_kwargs,
    project_identity,
    redact,
    require_psycopg,
    split_dsn,
    validate_schema,
)
from contextchef.store.backends.postgres._sql import Plan

__all__ = [
    "DEFAULT_SCHEMA",
    "DEFAULT_STATEMENT_TIMEOUT_S",
    "RACES",
    "Base",
    "PgVectorSteps",
    "raced",
]

log = logging.getLogger("contextchef.store.backends.postgres")

PgVectorSteps = Generator[tuple[Plan, str], Any, "_pgvector.PgVector | None"]
"""The plans finding pgvector, each with what it does; each receives its plan's value."""


DEFAULT_STATEMENT_TIMEOUT_S = 30.0
"""How long one statement may run before the server cancels it."""

DEFAULT_SCHEMA = "contextchef"
"""The schema used when neither `schema=` nor the DSN's `contextchef_schema` names one."""


RACES = 16
"""How often `transact` runs again after a path it found absent was created under it (each
rerun finds it present, so a second run is the rule; the bound only stops a pathological churn
of creates and deletes)."""


def raced(ns: str, paths: Sequence[str]) -> StoreConflictError:
    return StoreConflictError(
        f"{ns}/{paths[0]} kept being created and deleted while being edited; nothing was written",
        namespace=ns,
        path=paths[0],
    )


_WITHOUT = ("get_physical_path", "read_recent_where")
"""Capabilities it lacks: entries are rows, not files; filters are tested by the caller."""


class Base:
    """Options shared by both drivers; the capabilities they report."""

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        pool_size: int = 4,
        project: str | os.PathLike[str] | None = None,
        statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT_S,
        connect_timeout: float = 10.0,
        pgvector: _pgvector.PgVectorMode | None = None,
    ) -> None:
        """Open a store over `dsn` (the pool of the sync backend opens now, the async one's on
        first use), migrating `schema` to the latest version.

        Args:
            dsn: a libpq connection string or URI (`postgresql://user@host/db`); a URI may
                carry `contextchef_schema=` and `contextchef_project=` query parameters (read
                here as `schema` and `project`, removed before connecting).
            schema: the PostgreSQL schema holding the tables (created and migrated on open);
                default: the DSN's `contextchef_schema`, else `"contextchef"`.
            pool_size: the most connections this backend holds.
            project: a directory whose identity is derived, or an explicit identity string;
                default: the DSN's `contextchef_project`, else the working directory's project.
            statement_timeout: seconds one statement may run (server-side `statement_timeout`).
            connect_timeout: seconds to wait for a connection from the pool.
            pgvector: whether a semantic index ranks in the database with the `vector`
                extension: `"auto"` (use it when installed, install it when available and
                this role may), `"installed"` (only when installed), `"off"`; without it,
                vectors are scored exactly in the client. Default: the DSN's
                `contextchef_pgvector`, else `"auto"`. Found once per pool: `pgvector`.
        """
        require_psycopg()
        self.pgvector: _pgvector.PgVector | None = None
        """The `vector` extension this backend ranks with, once open (None: scored in the
        client); also declared as the `pgvector` capability."""
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ConfigError(f"pool_size must be an int of at least 1, got {pool_size!r}")
        self._dsn, params = split_dsn(dsn)
        self.schema = validate_schema(chosen("schema", schema, params) or DEFAULT_SCHEMA)
        self.project = project_identity(chosen("project", project, params))
        self.pgvector_mode = _pgvector.validate_mode(chosen("pgvector", pgvector, params) or "auto")
        """The `pgvector` option in force."""
        self._pool_size = pool_size
        self._kwargs = connect_kwargs(self.schema, statement_timeout, self._dsn)
        self._connect_timeout = connect_timeout
        self._versioned: frozenset[str] = frozenset()
        self._start()

    def _start(self) -> None:
        raise NotImplementedError

    def _pool_options(self) -> dict[str, Any]:
        """The pool's options (both drivers): opened explicitly, sized and named per schema."""
        return {
            "min_size": 1,
            "max_size": self._pool_size,
            "kwargs": self._kwargs,
            "open": False,
            "timeout": self._connect_timeout,
            "name": f"contextchef-{self.schema}",
        }

    def _unreachable(self) -> StoreUnavailableError:
        """The error of a pool that could not open: one line naming the DSN (password
        redacted) and why a direct connection fails."""
        import psycopg

        try:
            with psycopg.connect(self._dsn, connect_timeout=max(1, int(self._connect_timeout))):
                reason = f"no connection within {self._connect_timeout:g} s"
        except Exception as exc:  # the reason is all we want from it
            reason = str(exc)
        reason = " ".join(reason.split())
        return StoreUnavailableError(
            redact(f"cannot connect to PostgreSQL at {redact(self._dsn)}: {reason}")
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({redact(self._dsn)!r}, schema={self.schema!r})"

    def supports(self, capability: str, ns: str) -> bool:
        """Every capability but `get_physical_path` (rows, not files); `history` for the
        namespaces known to be versioned (an async backend knows them once open)."""
        if capability == "history":
            return ns in self._versioned
        if capability == "pgvector":
            return self.pgvector is not None
        return capability in CAPABILITIES and capability not in _WITHOUT

    def _pgvector_steps(self) -> PgVectorSteps:
        """Find pgvector (see `_pgvector`), install it when the mode and the server allow,
        ready the schema for it: the driver runs each plan and sends its value back."""
        if self.pgvector_mode == "off":
            return None
        found: _pgvector.PgVector | None
        found, creatable = yield _pgvector.find(), "looking for pgvector"
        if found is None and creatable and self.pgvector_mode == "auto":
            yield _pgvector.create_extension(), "installing pgvector"
            found, _ = yield _pgvector.find(), "looking for pgvector"
        if found is None or not (yield _pgvector.enable(self.schema), "enabling pgvector"):
            return None
        filled = yield _pgvector.backfill(found), "embedding the vectors for pgvector"
        if filled:
            log.info("pgvector: %d vectors of schema %s embedded", filled, self.schema)
        return found

    def _hnsw_plan(self, dims: int, metric: str) -> Plan:
        if self.pgvector is None:
            raise StoreCapabilityError(
                "*", ["pgvector"], hint="An HNSW index needs the `vector` extension."
            )
        return _pgvector.hnsw_index(self.pgvector, dims, metric)

    @staticmethod
    def _without_pgvector(exc: Exception) -> None:
        """A failure finding or readying pgvector leaves the backend scoring in the client."""
        log.warning("pgvector left unused (vectors are scored in the client): %s", exc)

    def _versioned_plan(self) -> tuple[Plan, str]:
        """The plan reading this project's versioned namespaces, and what it is doing."""
        return _sql.versioned_namespaces(self.project), "reading the versioned namespaces"

    def _history_plan(self, ns: str, path: str) -> Plan:
        if ns not in self._versioned:
            raise StoreCapabilityError(ns, ["history"])
        return _sql.history(self.project, ns, path)
