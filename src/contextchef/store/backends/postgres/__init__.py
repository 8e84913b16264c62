"""The PostgreSQL backends (extra `contextchef[postgres]`): one store shared across machines."""

from contextchef.store.backends.postgres.backend import AsyncPostgresBackend, PostgresBackend

__all__ = ["AsyncPostgresBackend", "PostgresBackend"]
