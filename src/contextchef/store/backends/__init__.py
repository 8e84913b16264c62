"""The built-in storage backends: `InMemoryBackend` (and its async-native twin),
`FileSystemBackend`, `SQLiteBackend`, and `PostgresBackend` / `AsyncPostgresBackend` (they need
the `contextchef[postgres]` extra when constructed, not when imported)."""

from contextchef.store.backends.filesystem import FileSystemBackend
from contextchef.store.backends.inmemory import AsyncInMemoryBackend, InMemoryBackend
from contextchef.store.backends.postgres import AsyncPostgresBackend, PostgresBackend
from contextchef.store.backends.sqlite import SQLiteBackend

__all__ = [
    "AsyncInMemoryBackend",
    "AsyncPostgresBackend",
    "FileSystemBackend",
    "InMemoryBackend",
    "PostgresBackend",
    "SQLiteBackend",
]
