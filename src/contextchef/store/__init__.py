"""Persistence axis: one `Store` over one `StorageBackend` holds memory/, notes/, vfs/, archive/.

- `backend`: the protocol every backend implements (`StorageBackend`, `AsyncStorageBackend`).
- `paths`: namespace and path rules, `context://` URIs, content-addressed names.
- `store` / `aio`: `Store` + `NamespaceView` and their async twins, over the flows in `core`.
- `eviction`: per-namespace caps and the typed `CleanupReport`.
- `indexing` / `vectors`: the optional semantic index (`Store(index=...)`), exact scoring.
- `offloads`: manual offload (`store.offload`, with the chef's marker) and `store.resolve(uri)`.
- `legacy41`: `import_from_41`, the TypeScript 4.1 `.mem` memory and VFS files into a store.
- `backends`: the built-in backends (`inmemory`, `filesystem/`, `sqlite/`).
"""

from contextchef._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
if TYPE_CHECKING:
    from contextchef.store.aio import AsyncNamespaceView, AsyncStore
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
    from contextchef.store.backends.filesystem import FileSystemBackend, Layout
    from contextchef.store.backends.inmemory import InMemoryBackend
    from contextchef.store.core import PutResult
    from contextchef.store.eviction import (
        CleanupReport,
        Evicted,
        EvictionFailure,
        EvictionPolicy,
        EvictionReason,
    )
    from contextchef.store.indexing import IndexConfig, SearchMode
    from contextchef.store.legacy41 import ImportedEntry, LegacyImport, SkippedFile, import_from_41
    from contextchef.store.offloads import Offloaded
    from contextchef.store.paths import URI_PREFIX, ContextAddress
    from contextchef.store.store import NamespaceView, Store

__all__ = [
    "CAPABILITIES",
    "URI_PREFIX",
    "AsyncNamespaceView",
    "AsyncStorageBackend",
    "AsyncStore",
    "Capability",
    "CleanupReport",
    "ContextAddress",
    "Evicted",
    "EvictionFailure",
    "EvictionPolicy",
    "EvictionReason",
    "FileSystemBackend",
    "ImportedEntry",
    "InMemoryBackend",
    "IndexConfig",
    "Layout",
    "LegacyImport",
    "ListedEntry",
    "NamespaceView",
    "Offloaded",
    "PutResult",
    "SearchHit",
    "SearchMode",
    "SkippedFile",
    "StorageBackend",
    "Store",
    "StoredEntry",
    "backend_supports",
    "import_from_41",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "contextchef.store.aio": ("AsyncNamespaceView", "AsyncStore"),
        "contextchef.store.backend": (
            "CAPABILITIES",
            "AsyncStorageBackend",
            "Capability",
            "ListedEntry",
            "SearchHit",
            "StorageBackend",
            "StoredEntry",
            "backend_supports",
        ),
        "contextchef.store.backends.filesystem": ("FileSystemBackend", "Layout"),
        "contextchef.store.backends.inmemory": ("InMemoryBackend",),
        "contextchef.store.core": ("PutResult",),
        "contextchef.store.eviction": (
            "CleanupReport",
            "Evicted",
            "EvictionFailure",
            "EvictionPolicy",
            "EvictionReason",
        ),
        "contextchef.store.indexing": ("IndexConfig", "SearchMode"),
        "contextchef.store.legacy41": (
            "ImportedEntry",
            "LegacyImport",
            "SkippedFile",
            "import_from_41",
        ),
        "contextchef.store.offloads": ("Offloaded",),
        "contextchef.store.paths": ("URI_PREFIX", "ContextAddress"),
        "contextchef.store.store": ("NamespaceView", "Store"),
    },
)
