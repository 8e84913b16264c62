"""The built-in storage backends: `InMemoryBackend` (and its async-native twin),
`FileSystemBackend`, `SQLiteBackend`."""

from contextchef.store.backends.filesystem import FileSystemBackend
from contextchef.store.backends.inmemory import AsyncInMemoryBackend, InMemoryBackend
from contextchef.store.backends.sqlite import SQLiteBackend

__all__ = ["AsyncInMemoryBackend", "FileSystemBackend", "InMemoryBackend", "SQLiteBackend"]
