"""The in-memory backends: `InMemoryBackend` (a dict per namespace, for tests and short-lived
agents; backend.py) and its async-native twin `AsyncInMemoryBackend` (asynchronous.py)."""

from contextchef.store.backends.inmemory.asynchronous import AsyncInMemoryBackend
from contextchef.store.backends.inmemory.backend import InMemoryBackend

__all__ = ["AsyncInMemoryBackend", "InMemoryBackend"]
