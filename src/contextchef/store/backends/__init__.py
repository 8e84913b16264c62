"""The built-in storage backends: `InMemoryBackend`, `FileSystemBackend`, `SQLiteBackend`."""

from contextchef.store.backends.filesystem import FileSystemBackend
from contextchef.store.backends.inmemory import InMemoryBackend
from contextchef.store.backends.sqlite import SQLiteBackend

__all__ = ["FileSystemBackend", "InMemoryBackend", "SQLiteBackend"]
