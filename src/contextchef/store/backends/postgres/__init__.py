"""The PostgreSQL backends (extra `contextchef[postgres]`): one store shared across machines."""

from contextchef.store.backends.postgres.asynchronous import AsyncPostgresBackend
from contextchef.store.backends.postgres.backend import PostgresBackend

__all__ = ["AsyncPostgresBackend", "PostgresBackend"]
