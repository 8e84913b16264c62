"""contextchef: compile an LLM agent's state into the best payload for the target provider."""

from contextchef.errors import (
    CompileAbortedError,
    CompileError,
    ConfigError,
    ContextChefError,
    DynamicStateError,
    EntryExistsError,
    EntryNotFoundError,
    InvalidPathError,
    MessageError,
    MigrationError,
    MissingDependencyError,
    SchemaTooNewError,
    StoreBusyError,
    StoreCapabilityError,
    StoreCorruptError,
    StoreError,
    ToolDefinitionError,
    UnknownTargetError,
)
from contextchef.store.backend import ListedEntry, SearchHit, StorageBackend, StoredEntry

__version__ = "0.1.0"

__all__ = [
    "CompileAbortedError",
    "CompileError",
    "ConfigError",
    "ContextChefError",
    "DynamicStateError",
    "EntryExistsError",
    "EntryNotFoundError",
    "InvalidPathError",
    "ListedEntry",
    "MessageError",
    "MigrationError",
    "MissingDependencyError",
    "SchemaTooNewError",
    "SearchHit",
    "StorageBackend",
    "StoreBusyError",
    "StoreCapabilityError",
    "StoreCorruptError",
    "StoreError",
    "StoredEntry",
    "ToolDefinitionError",
    "UnknownTargetError",
]
