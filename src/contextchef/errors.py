"""Every exception contextchef raises, under one root.

```
ContextChefError                      catch-all: `except contextchef.ContextChefError`
├── ConfigError                       developer misuse: a bad option, an unknown target, a bad call
│   ├── UnknownTargetError            no adapter registered under that target name
│   ├── UnknownToolError              handle_tool got a tool name the library does not own
│   ├── UnknownSkillError             skills.activate named a skill neither registered nor stored
│   └── SnapshotError                 a snapshot's data is malformed (carries .field)
│       └── SnapshotTooNewError       the snapshot was written by a newer format version
├── SkillError                        a SKILL.md is malformed (carries .path and .line)
│   └── UnknownToolNameError          the pruner was given a tool name nothing defines
├── MessageError                      a history message is malformed (carries .index and .field)
├── DynamicStateError                 dynamic state failed its schema; the previous state is kept
├── ToolDefinitionError               a registered tool's name or JSON schema is invalid
│   └── ToolCollisionError            two tools, namespaces or toolkits claim one name or tool
├── ToolCallError                     a model's namespace call cannot be resolved (carries .reply)
├── CompileError                      the state cannot be expressed for the target (carries .index)
├── CompileAbortedError               the caller's signal asked compile() to stop
├── StoreError                        persistence failed (carries .namespace and .path where known)
│   ├── InvalidPathError              a namespace or path breaks the path rules
│   ├── StoreCapabilityError          the backend lacks an optional capability
│   ├── EntryNotFoundError            no entry at that address
│   ├── EntryExistsError              an entry already exists where a new one was asked for
│   ├── StoreConflictError            an entry kept changing under a read-modify-write
│   ├── StoreBusyError                the store stayed locked for longer than the retry budget
│   │   └── StoreInUseError           maintenance refused: other processes have the database open
│   ├── StoreCorruptError             the store's files are damaged; run `contextchef db check`
│   ├── StoreUnavailableError         the server is unreachable or the connection was lost
│   ├── ForeignDatabaseError          the file is not a contextchef database; it is left untouched
│   └── MigrationError                a schema migration failed or cannot run
│       └── SchemaTooNewError         the store was written by a newer contextchef
├── MemoryRefusedError                a model-path memory write was refused (carries .key)
│   ├── MemoryKeyNotAllowedError      the key is outside `allowed_keys` (carries .allowed)
│   ├── MemoryVetoedError             the host's `on_memory_update` hook vetoed the write
│   └── MemoryValueTooLargeError      the value is over `max_value_bytes` (carries .size, .limit)
├── ClosedError                       the object was closed and cannot be used (also a RuntimeError)
└── MissingDependencyError            an optional extra is not installed (also an ImportError)
```

The model never sees these: tool results turn them into `Error: …` text. Backends translate
native errors (`sqlite3`, `OSError`, psycopg) into the `StoreError` family with `raise … from`.
"""

from __future__ import annotations

__all__ = [
    "ClosedError",
    "CompileAbortedError",
    "CompileError",
    "ConfigError",
    "ContextChefError",
    "DynamicStateError",
    "EntryExistsError",
    "EntryNotFoundError",
    "ForeignDatabaseError",
    "InvalidPathError",
    "MemoryKeyNotAllowedError",
    "MemoryRefusedError",
    "MemoryValueTooLargeError",
    "MemoryVetoedError",
    "MessageError",
    "MigrationError",
    "MissingDependencyError",
    "SchemaTooNewError",
    "SkillError",
    "SnapshotError",
    "SnapshotTooNewError",
    "StoreBusyError",
    "StoreCapabilityError",
    "StoreConflictError",
    "StoreCorruptError",
    "StoreError",
    "StoreInUseError",
    "StoreUnavailableError",
    "ToolCallError",
    "ToolCollisionError",
    "ToolDefinitionError",
    "UnknownSkillError",
    "UnknownTargetError",
    "UnknownToolError",
    "UnknownToolNameError",
]


class ContextChefError(Exception):
    """Root of every exception contextchef raises."""


class ConfigError(ContextChefError):
    """The library was configured or called in a way it does not support."""


class UnknownTargetError(ConfigError):
    """`compile(target=...)` named a target no adapter is registered for."""

    def __init__(self, target: str, registered: list[str]) -> None:
        listing = ", ".join(registered) if registered else "(none)"
        super().__init__(
            f"unknown target {target!r}; registered targets: {listing}. "
            "Give the chef a registry holding your adapter: "
            f"ContextChef(adapters=adapter_registry.with_adapters({{{target!r}: adapter}}))."
        )
        self.target = target
        self.registered = registered


class UnknownToolError(ConfigError):
    """`handle_tool` was asked to run a tool the library does not own: a routing bug in the host
    (check `owns_tool(name)` first), never something the model can fix."""

    def __init__(self, name: object, owned: tuple[str, ...]) -> None:
        super().__init__(
            f"unknown tool {name!r}: this dispatcher owns only {', '.join(owned)}. "
            "Route other tools to your own code (check owns_tool(name) first)."
        )
        self.name = name
        self.owned = owned


class UnknownSkillError(ConfigError):
    """`chef.skills.activate(name)` named a skill that is neither registered nor in the store."""

    def __init__(self, name: str, available: list[str]) -> None:
        listing = ", ".join(available) if available else "(none)"
        super().__init__(
            f"no skill named {name!r} is registered or stored under context://skills/; "
            f"available: {listing}. Register it with chef.skills.register([...]) or pass the Skill."
        )
        self.name = name
        self.available = available


class SnapshotError(ConfigError):
    """A snapshot's data is malformed: a field is missing, unknown or of the wrong shape.

    `field` names it (`history[3]`, `dynamic_state.schema`…); restoring nothing was changed.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(f"snapshot field {field!r}: {message}" if field else message)
        self.field = field


class SnapshotTooNewError(SnapshotError):
    """The snapshot was written by a newer contextchef (a higher `format_version`)."""

    def __init__(self, version: object, supported: int) -> None:
        super().__init__(
            f"format_version {version!r} is newer than this contextchef reads (up to "
            f"{supported}); upgrade contextchef where the snapshot is restored",
            field="format_version",
        )
        self.version = version
        self.supported = supported


class SkillError(ContextChefError):
    """A SKILL.md file cannot be loaded; names the file and the line, and shows a correct form."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        where = f"{path}, line {line}" if line is not None else path
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.reason = message


class UnknownToolNameError(ConfigError):
    """A tool name given to the pruner (`allow_only`, `set_blocked_tools`, a namespace or a
    toolkit) names no registered tool; `.names` are the unknown ones, `.known` what exists."""

    def __init__(self, names: list[str], known: list[str], *, where: str) -> None:
        listing = ", ".join(known) if known else "(none)"
        super().__init__(
            f"{where}: unknown tool name(s) {names}; the known names are: {listing}. "
            "Register the tools first (chef.tools.register) or fix the spelling."
        )
        self.names = names
        self.known = known


class MessageError(ContextChefError):
    """A message of the history is malformed; says which message and which field."""

    def __init__(self, message: str, *, index: int | None = None, field: str | None = None) -> None:
        where = []
        if index is not None:
            where.append(f"message {index}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = f"{', '.join(where)}: " if where else ""
        super().__init__(prefix + message)
        self.index = index
        self.field = field


class DynamicStateError(ContextChefError):
    """The dynamic state did not validate against its schema."""


class ToolDefinitionError(ContextChefError):
    """A tool definition has no usable name, description or JSON schema."""


class ToolCollisionError(ToolDefinitionError):
    """Two tools, namespaces or toolkits claim the same name, or one tool is claimed by two
    groups: the compiled payload (or `resolve_namespace`) could not tell them apart."""


class ToolCallError(ContextChefError):
    """A model's call of a namespace tool cannot be resolved (an unknown action, arguments that
    are not a JSON object…). `.reply` is the `Error: …` text to send back as the tool result;
    the model can correct its call from it."""

    def __init__(self, message: str, *, reply: str) -> None:
        super().__init__(message)
        self.reply = reply


class CompileError(ContextChefError):
    """The state cannot be expressed in the target's wire format."""

    def __init__(self, message: str, *, index: int | None = None) -> None:
        super().__init__(f"message {index}: {message}" if index is not None else message)
        self.index = index


class CompileAbortedError(ContextChefError):
    """The signal passed to `compile()` was set; the compile stopped between phases."""


class StoreError(ContextChefError):
    """Persistence failed. `.namespace` and `.path` name the entry where known."""

    def __init__(
        self, message: str, *, namespace: str | None = None, path: str | None = None
    ) -> None:
        super().__init__(message)
        self.namespace = namespace
        self.path = path


class InvalidPathError(StoreError):
    """A namespace or path is not allowed (traversal, control characters, empty segments…)."""


class StoreCapabilityError(StoreError):
    """The backend does not implement an optional capability this operation needs."""

    def __init__(self, namespace: str, missing: list[str], *, hint: str | None = None) -> None:
        super().__init__(
            f"namespace {namespace!r} needs the storage backend to implement: "
            f"{', '.join(missing)}; the configured backend does not."
            + (f" {hint}" if hint else ""),
            namespace=namespace,
        )
        self.missing = missing


class EntryNotFoundError(StoreError):
    """No entry is stored at that namespace and path."""


class EntryExistsError(StoreError):
    """An entry already exists where the operation wanted to create one."""


class StoreConflictError(StoreError):
    """An entry kept changing under a read-modify-write: every compare-and-swap attempt found
    a newer version than the one it read, so nothing was written. Read it again and retry."""


class StoreBusyError(StoreError):
    """Another writer held the store for longer than the retry budget allows."""


class StoreInUseError(StoreBusyError):
    """Maintenance (repair, restore, migrate) needs the database to itself, and other processes
    have it open. `.holders` is how many (None when the platform cannot tell)."""

    def __init__(self, message: str, *, holders: int | None = None) -> None:
        super().__init__(message)
        self.holders = holders


class StoreUnavailableError(StoreError):
    """The store's server could not be reached, or the connection was lost mid-operation.

    The operation may or may not have been applied; the next call reconnects (through the pool).
    """


class StoreCorruptError(StoreError):
    """The store's files are damaged. `contextchef db check` and `db repair` can help."""


class ForeignDatabaseError(StoreError):
    """The file is not a contextchef database (not SQLite, or not our schema); it is refused
    and left byte-for-byte untouched."""


class MigrationError(StoreError):
    """A schema migration failed or cannot run."""


class SchemaTooNewError(MigrationError):
    """The store's schema is newer than this build understands; it is refused, never reset."""

    def __init__(self, found: int, supported: int, *, location: str = "the store") -> None:
        super().__init__(
            f"{location} has schema version {found}, but this contextchef understands "
            f"versions up to {supported}. Upgrade contextchef to open it; do not delete or "
            f"reset the database, it holds data a newer version wrote."
        )
        self.found = found
        self.supported = supported


class MemoryRefusedError(ContextChefError):
    """A memory write on the model's path (create, update, remove, rename) was refused."""

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


class MemoryKeyNotAllowedError(MemoryRefusedError):
    """The key is not one of the memory's `allowed_keys`."""

    def __init__(self, key: str, allowed: tuple[str, ...]) -> None:
        listing = ", ".join(allowed) if allowed else "(none)"
        super().__init__(f"memory key {key!r} is not allowed; allowed keys: {listing}", key=key)
        self.allowed = allowed


class MemoryVetoedError(MemoryRefusedError):
    """The host's `on_memory_update` hook returned False (or raised) for this write."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the host vetoed the write to memory key {key!r}", key=key)


class MemoryValueTooLargeError(MemoryRefusedError):
    """The value the model wrote is over the memory's `max_value_bytes` (UTF-8 bytes)."""

    def __init__(self, key: str, size: int, limit: int) -> None:
        super().__init__(
            f"the value for memory key {key!r} is {size} bytes, over the {limit}-byte limit",
            key=key,
        )
        self.size = size
        self.limit = limit


class ClosedError(ContextChefError, RuntimeError):
    """The object (a session, a store) was closed; every later use raises this. The message
    names it: `"<ClassName> is closed"`."""


class MissingDependencyError(ContextChefError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"{package} is not installed; install it with: pip install 'contextchef[{extra}]'"
        )
        self.package = package
        self.extra = extra
