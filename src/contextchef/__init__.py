"""contextchef: compile an LLM agent's state into the best payload for the target provider.

The names a user writes are importable from here; the "Public API" section of
docs/reference/index.md lists them (a test keeps the two equal) and says which public module
holds everything else. Modules whose names start with `_` are private. Each name's module is
imported when the name is first used (`contextchef._lazy`), so `import contextchef` and its
submodules start fast.
"""

from contextchef._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
if TYPE_CHECKING:
    from contextchef._repair import ensure_valid_history
    from contextchef._version import __version__
    from contextchef.adapters import ImportedHistory
    from contextchef.adapters.from_anthropic import from_anthropic
    from contextchef.adapters.from_gemini import from_gemini
    from contextchef.adapters.from_openai import from_openai
    from contextchef.adapters.from_openai_responses import from_openai_responses
    from contextchef.cache.economics import CacheReport
    from contextchef.chef import AsyncContextChef, ContextChef, Snapshot
    from contextchef.errors import (
        CompileError,
        ConfigError,
        ContextChefError,
        EntryExistsError,
        EntryNotFoundError,
        MemoryRefusedError,
        MessageError,
        MissingDependencyError,
        SkillError,
        SnapshotError,
        StoreBusyError,
        StoreConflictError,
        StoreError,
        StoreUnavailableError,
        ToolCallError,
        ToolDefinitionError,
        UnknownTargetError,
    )
    from contextchef.events import CompileStart, WindowExceeded
    from contextchef.memory import AsyncMemory, Memory, MemoryChange
    from contextchef.messages import Message
    from contextchef.payload import CompileDone, CompileMeta, Payload
    from contextchef.pool import AsyncChefPool, ChefPool
    from contextchef.retrieval import get_context_tool_definition
    from contextchef.selection import (
        BudgetConfig,
        CompressEnd,
        CompressStart,
        OverflowConfig,
        Strategy,
        chain,
        reset,
        summarize,
    )
    from contextchef.selection.anchored import anchored
    from contextchef.selection.background import background
    from contextchef.selection.server import server
    from contextchef.skills import Skill, load_skill, load_skills
    from contextchef.store import (
        AsyncNamespaceView,
        AsyncStorageBackend,
        AsyncStore,
        NamespaceView,
        StorageBackend,
        Store,
    )
    from contextchef.store.backends import (
        AsyncInMemoryBackend,
        AsyncPostgresBackend,
        FileSystemBackend,
        InMemoryBackend,
        PostgresBackend,
        SQLiteBackend,
    )
    from contextchef.tokens import Tokenizer, estimate

__all__ = [
    "AsyncChefPool",
    "AsyncContextChef",
    "AsyncInMemoryBackend",
    "AsyncMemory",
    "AsyncNamespaceView",
    "AsyncPostgresBackend",
    "AsyncStorageBackend",
    "AsyncStore",
    "BudgetConfig",
    "CacheReport",
    "ChefPool",
    "CompileDone",
    "CompileError",
    "CompileMeta",
    "CompileStart",
    "CompressEnd",
    "CompressStart",
    "ConfigError",
    "ContextChef",
    "ContextChefError",
    "EntryExistsError",
    "EntryNotFoundError",
    "FileSystemBackend",
    "ImportedHistory",
    "InMemoryBackend",
    "Memory",
    "MemoryChange",
    "MemoryRefusedError",
    "Message",
    "MessageError",
    "MissingDependencyError",
    "NamespaceView",
    "OverflowConfig",
    "Payload",
    "PostgresBackend",
    "SQLiteBackend",
    "Skill",
    "SkillError",
    "Snapshot",
    "SnapshotError",
    "StorageBackend",
    "Store",
    "StoreBusyError",
    "StoreConflictError",
    "StoreError",
    "StoreUnavailableError",
    "Strategy",
    "Tokenizer",
    "ToolCallError",
    "ToolDefinitionError",
    "UnknownTargetError",
    "WindowExceeded",
    "__version__",
    "anchored",
    "background",
    "chain",
    "ensure_valid_history",
    "estimate",
    "from_anthropic",
    "from_gemini",
    "from_openai",
    "from_openai_responses",
    "get_context_tool_definition",
    "load_skill",
    "load_skills",
    "reset",
    "server",
    "summarize",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "contextchef._repair": ("ensure_valid_history",),
        "contextchef._version": ("__version__",),
        "contextchef.adapters": ("ImportedHistory",),
        "contextchef.adapters.from_anthropic": ("from_anthropic",),
        "contextchef.adapters.from_gemini": ("from_gemini",),
        "contextchef.adapters.from_openai": ("from_openai",),
        "contextchef.adapters.from_openai_responses": ("from_openai_responses",),
        "contextchef.cache.economics": ("CacheReport",),
        "contextchef.chef": ("AsyncContextChef", "ContextChef", "Snapshot"),
        "contextchef.errors": (
            "CompileError",
            "ConfigError",
            "ContextChefError",
            "EntryExistsError",
            "EntryNotFoundError",
            "MemoryRefusedError",
            "MessageError",
            "MissingDependencyError",
            "SkillError",
            "SnapshotError",
            "StoreBusyError",
            "StoreConflictError",
            "StoreError",
            "StoreUnavailableError",
            "ToolCallError",
            "ToolDefinitionError",
            "UnknownTargetError",
        ),
        "contextchef.events": ("CompileStart", "WindowExceeded"),
        "contextchef.memory": ("AsyncMemory", "Memory", "MemoryChange"),
        "contextchef.messages": ("Message",),
        "contextchef.payload": ("CompileDone", "CompileMeta", "Payload"),
        "contextchef.pool": ("AsyncChefPool", "ChefPool"),
        "contextchef.retrieval": ("get_context_tool_definition",),
        "contextchef.selection": (
            "BudgetConfig",
            "CompressEnd",
            "CompressStart",
            "OverflowConfig",
            "Strategy",
            "chain",
            "reset",
            "summarize",
        ),
        "contextchef.selection.anchored": ("anchored",),
        "contextchef.selection.background": ("background",),
        "contextchef.selection.server": ("server",),
        "contextchef.skills": ("Skill", "load_skill", "load_skills"),
        "contextchef.store": (
            "AsyncNamespaceView",
            "AsyncStorageBackend",
            "AsyncStore",
            "NamespaceView",
            "StorageBackend",
            "Store",
        ),
        "contextchef.store.backends": (
            "AsyncInMemoryBackend",
            "AsyncPostgresBackend",
            "FileSystemBackend",
            "InMemoryBackend",
            "PostgresBackend",
            "SQLiteBackend",
        ),
        "contextchef.tokens": ("Tokenizer", "estimate"),
    },
    renamed={"JanitorConfig": "BudgetConfig"},
)
