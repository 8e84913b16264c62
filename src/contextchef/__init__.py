"""contextchef: compile an LLM agent's state into the best payload for the target provider."""

from contextchef.adapters import (
    AdapterInput,
    AdapterRegistry,
    OpenAIChatAdapter,
    TargetAdapter,
    ToolDefinition,
    adapter_registry,
    get_adapter,
)
from contextchef.chef import AsyncContextChef, ContextChef, Snapshot
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
from contextchef.events import CompileDone, CompileStart
from contextchef.messages import (
    HistoryFix,
    Message,
    ensure_valid_history,
    group_turns,
    validate_history,
)
from contextchef.pipeline import CompileMeta, LayerTokens, Payload
from contextchef.placement.xml import object_to_xml
from contextchef.store.backend import ListedEntry, SearchHit, StorageBackend, StoredEntry
from contextchef.tokens import (
    EstimateTokenizer,
    Tokenizer,
    TokenizerAdapter,
    estimate,
    estimate_object,
)

__version__ = "0.1.0"

__all__ = [
    "AdapterInput",
    "AdapterRegistry",
    "AsyncContextChef",
    "CompileAbortedError",
    "CompileDone",
    "CompileError",
    "CompileMeta",
    "CompileStart",
    "ConfigError",
    "ContextChef",
    "ContextChefError",
    "DynamicStateError",
    "EntryExistsError",
    "EntryNotFoundError",
    "EstimateTokenizer",
    "HistoryFix",
    "InvalidPathError",
    "LayerTokens",
    "ListedEntry",
    "Message",
    "MessageError",
    "MigrationError",
    "MissingDependencyError",
    "OpenAIChatAdapter",
    "Payload",
    "SchemaTooNewError",
    "SearchHit",
    "Snapshot",
    "StorageBackend",
    "StoreBusyError",
    "StoreCapabilityError",
    "StoreCorruptError",
    "StoreError",
    "StoredEntry",
    "TargetAdapter",
    "Tokenizer",
    "TokenizerAdapter",
    "ToolDefinition",
    "ToolDefinitionError",
    "UnknownTargetError",
    "adapter_registry",
    "ensure_valid_history",
    "estimate",
    "estimate_object",
    "get_adapter",
    "group_turns",
    "object_to_xml",
    "validate_history",
]
