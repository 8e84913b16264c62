"""The `context` tool: one static tool, seven commands, every namespace of the store.

    tool = ContextTool(store, memory=memory)            # writable=("memory", "notes")
    tool.run('{"command": "create", "path": "context://notes/plan.md", "file_text": "1. …"}')
    # 'Created context://notes/plan.md.'

`run` (and `arun`, its coroutine twin; both drive the same flow, see `contextchef._effects`)
never raises for a model mistake: invalid JSON, a missing argument, an unknown command, a
bad path, an unknown entry, a read-only namespace, a disallowed memory key, the host's veto, a
write or a call over its size cap (see `contextchef._limits`) or a capability the backend lacks
all come back as text starting with `Error: ` that says what to do
instead. Only failures the model cannot fix (a corrupt store, a failed migration) propagate.

Per namespace: `memory/` goes through Memory's flows (see `spaces.MemorySpace`); `vfs/`, `archive/`
and any other namespace straight to the store, and entries of the recall namespaces (`vfs/`,
`archive/` by default) are shown through `render_recalled`, so an archived conversation span
reads as a transcript. Reads are never restricted; writes only reach the `writable` namespaces
(the access policy lives here, never in the store: the host's own code writes anywhere).

Entries are shown with numbered lines (`paging.numbered`) and directories as recursive, sorted
listings; both come in pages of at most `MAX_VIEW_LINES` rows and `MAX_VIEW_CHARS` characters,
each ending with the `view_range` of the next page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

from contextchef import prompts
from contextchef._effects import Flow, drive_async, drive_sync
from contextchef._limits import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_ENTRY_BYTES,
    argument_bytes,
    byte_size,
    size_limit,
)
from contextchef.errors import (
    ConfigError,
    MemoryValueTooLargeError,
    StoreError,
)
from contextchef.memory.core import MemoryCore
from contextchef.memory.entry import MEMORY_NAMESPACE
from contextchef.memory.memory import AsyncMemory, Memory, memory_core
from contextchef.retrieval.arguments import (
    Address,
    ToolInputError,
    line_number,
    optional_text,
    parse_address,
    parse_arguments,
    required_text,
    text_argument,
    view_range,
)
from contextchef.retrieval.definitions import COMMANDS, get_context_tool_definition
from contextchef.retrieval.paging import join_lines, numbered, paginate, split_lines
from contextchef.retrieval.recall import render_recalled
from contextchef.retrieval.refusals import store_refusal
from contextchef.retrieval.spaces import MemorySpace, Space, StoreSpace
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.core import StoreCore
from contextchef.store.paths import format_uri, validate_namespace
from contextchef.store.store import StoreBase, core_of

if TYPE_CHECKING:
    from contextchef.adapters.base import ToolDefinition

__all__ = [
    "COMMANDS",
    "DEFAULT_WRITABLE",
    "MAX_SEARCH_HITS",
    "RECALL_NAMESPACES",
    "ContextTool",
    "get_context_tool_definition",
    "store_refusal",
]

DEFAULT_WRITABLE: Final = ("memory", "notes")
RECALL_NAMESPACES: Final = ("vfs", "archive")
MAX_SEARCH_HITS: Final = 50
"""Search results one call lists at most; the header still gives the full count."""

_Handler = Callable[[dict[str, Any]], Flow[str]]


class ContextTool:
    """Runs `context` tool calls against one store.

    Args:
        store: the `Store` or `AsyncStore` (or a backend, wrapped in one) behind every namespace.
        memory: the `Memory` (or `AsyncMemory`) that serves `memory/`; without it, `memory/` is
            "not available".
        writable: the namespaces the model may write (default: memory and notes).
        recall: the namespaces whose entries render through the recall path.
        max_entry_bytes: the most UTF-8 bytes an entry may have after a write (`create`,
            `str_replace`, `insert`) in any namespace; memory's own `max_value_bytes` applies
            too. None: no cap.
        max_argument_bytes: the most bytes of one call's arguments (the JSON string, or a
            dict as compact JSON); a larger call is refused before it is parsed. None: no cap.
    """

    def __init__(
        self,
        store: StoreBase[Any] | StorageBackend | AsyncStorageBackend | StoreCore,
        *,
        memory: Memory | AsyncMemory | MemoryCore | None = None,
        writable: Iterable[str] = DEFAULT_WRITABLE,
        recall: Iterable[str] = RECALL_NAMESPACES,
        max_entry_bytes: int | None = DEFAULT_MAX_ENTRY_BYTES,
        max_argument_bytes: int | None = DEFAULT_MAX_ARGUMENT_BYTES,
    ) -> None:
        if isinstance(writable, str) or isinstance(recall, str):
            raise ConfigError("writable and recall take a list of namespaces, not one string")
        core = memory_core(memory)
        if core is not None and not isinstance(core, MemoryCore):
            raise ConfigError(f"memory must be a Memory, got {type(memory).__name__}")
        self._store = core_of(store)
        self._memory = core
        self._writable = tuple(dict.fromkeys(validate_namespace(ns) for ns in writable))
        self._recall = frozenset(validate_namespace(ns) for ns in recall)
        self.max_entry_bytes = size_limit(max_entry_bytes, "max_entry_bytes")
        self.max_argument_bytes = size_limit(max_argument_bytes, "max_argument_bytes")
        self._handlers: dict[str, _Handler] = {
            "view": self._view,
            "create": self._create,
            "str_replace": self._str_replace,
            "insert": self._insert,
            "delete": self._delete,
            "rename": self._rename,
            "search": self._search,
        }

    def __repr__(self) -> str:
        return f"<ContextTool writable={list(self._writable)}>"

    @property
    def store(self) -> StoreCore:
        """The store flows every namespace runs on."""
        return self._store

    @property
    def memory(self) -> MemoryCore | None:
        """The memory flows behind `memory/`, if any."""
        return self._memory

    @property
    def writable(self) -> tuple[str, ...]:
        """The namespaces the model may write, in the order given."""
        return self._writable

    def can_write(self, ns: str) -> bool:
        """Whether the access policy lets the model write namespace `ns`."""
        return ns in self._writable

    @staticmethod
    def definition() -> ToolDefinition:
        """The tool definition (the same frozen object as `get_context_tool_definition()`)."""
        return get_context_tool_definition()

    def run(self, arguments: object) -> str:
        """Run one call (`arguments`: a JSON string, a dict, or None) and return its result."""
        return drive_sync(self.flow(arguments))

    async def arun(self, arguments: object) -> str:
        """`run`, awaited: an async-native store is awaited, a sync one runs in a thread."""
        return await drive_async(self.flow(arguments))

    def flow(self, arguments: object) -> Flow[str]:
        """The call as a flow of effects (for a driver of your own choosing)."""
        try:
            self.check_arguments(arguments)
            args = parse_arguments(arguments)
            command = required_text(args, "command")
            handler = self._handlers.get(command)
            if handler is None:
                return prompts.unknown_command(command, COMMANDS)
            return (yield from handler(args))
        except ToolInputError as exc:
            return exc.text
        except MemoryValueTooLargeError as exc:
            notes = format_uri("notes", "") if self.can_write("notes") else None
            uri = format_uri(MEMORY_NAMESPACE, exc.key)
            return prompts.memory_value_too_large(uri, exc.size, exc.limit, notes)
        except StoreError as exc:
            return store_refusal(exc)

    def check_arguments(self, arguments: object) -> None:
        """Refuse (`ToolInputError`) a call whose arguments pass `max_argument_bytes`."""
        limit = self.max_argument_bytes
        if limit is not None:
            size = argument_bytes(arguments)
            if size > limit:
                raise ToolInputError(prompts.arguments_too_large(size, limit))

    def _check_entry(self, address: Address, text: str, before: str = "") -> None:
        """Refuse a write that would leave the entry over `max_entry_bytes`, unless it does
        not grow the entry (`before`): an entry the host wrote long may still be edited."""
        limit = self.max_entry_bytes
        if limit is not None:
            size = byte_size(text)
            if size > limit and size > byte_size(before):
                raise ToolInputError(prompts.entry_too_large(address.uri, size, limit))

    # -- addressing -------------------------------------------------------------------------

    def _space(self, address: Address) -> Space:
        if address.ns == MEMORY_NAMESPACE:
            if self._memory is None:
                raise ToolInputError(prompts.MEMORY_UNAVAILABLE)
            return MemorySpace(self._memory)
        return StoreSpace(self._store, address.ns)

    def _target(self, args: dict[str, Any], command: str, name: str = "path") -> Address:
        """The entry a write command changes: writable, and not a directory."""
        address = parse_address(required_text(args, name))
        if not self.can_write(address.ns):
            roots = [format_uri(ns, "") for ns in self._writable]
            raise ToolInputError(prompts.read_only(address.uri, roots))
        if address.is_directory:
            raise ToolInputError(prompts.path_is_directory(address.uri, command))
        return address

    # -- commands ---------------------------------------------------------------------------

    def _view(self, args: dict[str, Any]) -> Flow[str]:
        address = parse_address(required_text(args, "path"))
        requested = view_range(args)
        space = self._space(address)
        if address.is_directory:
            return (yield from self._listing(space, address, requested))
        found = yield from space.read(address)
        if found is None:
            if (yield from space.listing(address.path + "/")):
                return (yield from self._listing(space, address.as_directory(), requested))
            raise ToolInputError(prompts.nothing_stored(address.uri, address.parent))
        text, description = found
        if address.ns in self._recall:
            text = render_recalled(text)
        lines, _ = split_lines(text)
        if not lines:
            return prompts.is_empty(address.uri)
        page = paginate(lines, requested, numbered, uri=address.uri, unit="line")
        header = prompts.entry_header(
            address.uri, page.first, page.last, page.total, whole=page.whole
        )
        about = [prompts.entry_description(description)] if description else []
        return "\n".join([header, *about, *page.rows, *page.notes])

    def _listing(
        self, space: Space, address: Address, requested: tuple[int, int] | None
    ) -> Flow[str]:
        rows = [
            prompts.listing_line(format_uri(address.ns, path), description)
            for path, description in (yield from space.listing(address.path))
        ]
        if not rows:
            return prompts.is_empty(address.uri)
        page = paginate(rows, requested, lambda _, row: row, uri=address.uri, unit="entry")
        header = prompts.directory_header(
            address.uri, page.first, page.last, page.total, whole=page.whole
        )
        return "\n".join([header, *page.rows, *page.notes])

    def _create(self, args: dict[str, Any]) -> Flow[str]:
        address = self._target(args, "create")
        text = text_argument(args, "file_text")
        description = optional_text(args, "description")
        self._check_entry(address, text)
        yield from self._space(address).create(address, text, description)
        return prompts.created(address.uri)

    def _str_replace(self, args: dict[str, Any]) -> Flow[str]:
        address = self._target(args, "str_replace")
        old = text_argument(args, "old_str")
        if old == "":
            raise ToolInputError(prompts.missing_argument("old_str"))
        new = optional_text(args, "new_str") or ""
        description = optional_text(args, "description")

        def change(text: str) -> str:
            start = text.find(old)
            if start < 0:
                raise ToolInputError(prompts.old_str_not_found(address.uri))
            if text.find(old, start + 1) >= 0:
                raise ToolInputError(
                    prompts.old_str_ambiguous(address.uri, _occurrence_lines(text, old))
                )
            result = text[:start] + new + text[start + len(old) :]
            self._check_entry(address, result, text)
            return result

        yield from self._space(address).edit(address, change, description)
        return prompts.edited(address.uri)

    def _insert(self, args: dict[str, Any]) -> Flow[str]:
        address = self._target(args, "insert")
        line = line_number(args, "insert_line")
        insertion = text_argument(args, "insert_text")
        description = optional_text(args, "description")
        added, added_trailing = split_lines(insertion)
        if not added:
            added = [""]

        def change(text: str) -> str:
            lines, trailing = split_lines(text)
            if not 0 <= line <= len(lines):
                raise ToolInputError(prompts.insert_out_of_range(line, address.uri, len(lines)))
            result = join_lines(
                lines[:line] + added + lines[line:], trailing if lines else added_trailing
            )
            self._check_entry(address, result, text)
            return result

        yield from self._space(address).edit(address, change, description)
        return prompts.inserted(address.uri, line + 1, len(added))

    def _delete(self, args: dict[str, Any]) -> Flow[str]:
        address = self._target(args, "delete")
        yield from self._space(address).delete(address)
        return prompts.deleted(address.uri)

    def _rename(self, args: dict[str, Any]) -> Flow[str]:
        address = self._target(args, "rename")
        new = parse_address(required_text(args, "new_path"))
        if new.ns != address.ns:
            raise ToolInputError(
                prompts.rename_across_namespaces(address.uri, new.uri, address.root)
            )
        if new.is_directory:
            raise ToolInputError(prompts.path_is_directory(new.uri, "rename"))
        if new.path == address.path:
            raise ToolInputError(prompts.rename_onto_itself(address.uri))
        yield from self._space(address).rename(address, new)
        return prompts.renamed(address.uri, new.uri)

    def _search(self, args: dict[str, Any]) -> Flow[str]:
        address = parse_address(required_text(args, "path"))
        query = required_text(args, "query")
        # One hit more than is shown tells whether there are others, without ranking them all
        # (a file address is filtered below, so it asks for every hit under its prefix).
        limit = MAX_SEARCH_HITS + 1 if address.is_directory else None
        hits = yield from self._space(address).search(address.path, query, limit)
        if not address.is_directory:
            inside = address.path + "/"
            hits = [hit for hit in hits if hit.path == address.path or hit.path.startswith(inside)]
        if not hits:
            return prompts.no_matches(query, address.uri)
        more = len(hits) > MAX_SEARCH_HITS
        shown = hits[:MAX_SEARCH_HITS]
        rows = [
            prompts.search_hit(format_uri(address.ns, hit.path), hit.snippet, hit.by_meaning)
            for hit in shown
        ]
        if any(hit.by_meaning for hit in shown):
            rows.append(prompts.search_by_meaning_note())
        if more:
            rows.append(prompts.search_truncated(MAX_SEARCH_HITS))
        return "\n".join([prompts.search_header(len(shown), query, address.uri, more=more), *rows])


def _occurrence_lines(text: str, needle: str, limit: int = 10) -> list[int]:
    """The 1-based lines where `needle` starts (overlapping matches included), at most `limit`."""
    lines: dict[int, None] = {}
    start = text.find(needle)
    while start >= 0 and len(lines) < limit:
        lines[text.count("\n", 0, start) + 1] = None
        start = text.find(needle, start + 1)
    return list(lines)
