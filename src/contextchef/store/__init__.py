"""Persistence axis: one `Store` over one `StorageBackend` holds memory/, notes/, vfs/, archive/."""

from contextchef.store.backend import (
    CAPABILITIES,
    AsyncStorageBackend,
    Capability,
    ListedEntry,
    SearchHit,
    StorageBackend,
    StoredEntry,
    backend_supports,
)

__all__ = [
    "CAPABILITIES",
    "AsyncStorageBackend",
    "Capability",
    "ListedEntry",
    "SearchHit",
    "StorageBackend",
    "StoredEntry",
    "backend_supports",
]
