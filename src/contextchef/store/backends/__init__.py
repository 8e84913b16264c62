"""The built-in storage backends: `InMemoryBackend` (and its async-native twin),
`FileSystemBackend`, `SQLiteBackend`, and `PostgresBackend` / `AsyncPostgresBackend` (they need
the `contextchef[postgres]` extra when constructed, not when imported)."""

from contextchef._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "contextchef.store.backends.filesystem": ("FileSystemBackend",),
        "contextchef.store.backends.inmemory": ("AsyncInMemoryBackend", "InMemoryBackend"),
        "contextchef.store.backends.postgres": ("AsyncPostgresBackend", "PostgresBackend"),
        "contextchef.store.backends.sqlite": ("SQLiteBackend",),
    },
)
