"""The tool vocabulary a chef compiles with: which tools the model is offered and how the text
around them names the store.

A `Vocabulary` answers every question on which the two vocabularies differ, so the layers
below the chef never compare mode strings: the chef picks one (`vocabulary(name)`) and hands
it down. `UnifiedVocabulary` speaks of the `context` tool and `context://` paths;
`LegacyVocabulary` of `create_memory` / `modify_memory` and plain memory keys.

A vocabulary also carries the `Offer`: what the payload gives the model (memory, whether it is
writable, the scratchpad, `new_context`). The chef binds its own
(`vocabulary.offering(offer)`), so every sentence is true for its configuration: nothing names a
tool the payload lacks, memory that is not configured, or invites a write the policy refuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Protocol, TypeVar, runtime_checkable

from contextchef.errors import ConfigError
from contextchef.prompts import common, context_tool, memory_tools

__all__ = [
    "DEFAULT_VOCABULARY",
    "VOCABULARY_NAMES",
    "LegacyVocabulary",
    "Offer",
    "ToolCatalog",
    "UnifiedVocabulary",
    "Vocabulary",
    "as_vocabulary",
    "vocabulary",
]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class ToolCatalog(Protocol[T_co]):
    """The library's tool definitions, as the layer that builds them supplies them."""

    def context_tool(self) -> T_co: ...

    def new_context_tool(self) -> T_co: ...

    def memory_tools(self, allowed_keys: Sequence[str] | None) -> Sequence[T_co]: ...


@dataclass(frozen=True, slots=True)
class Offer:
    """What the payload offers the model, as far as the text about it is concerned.

    The default offers everything (memory, writable, every tool): the unbound vocabularies
    render as they always have. A chef binds the offer its options make.
    """

    memory: bool = True
    """Memory is configured (its block is shown)."""
    memory_writable: bool = True
    """The model may write memory (the policy allows it, and some key may be written)."""
    notes_writable: bool = True
    """The model may write `notes/`, its scratchpad."""
    allowed_keys: tuple[str, ...] | None = None
    """The memory keys the host limits writes to, if it does."""
    handoff: bool = True
    """A handoff is configured, so `new_context` is offered (unified)."""


@runtime_checkable
class Vocabulary(Protocol):
    """Everything that differs between the tool vocabularies."""

    @property
    def name(self) -> str:
        """The `tools=` option that selects this vocabulary."""
        ...

    @property
    def offer(self) -> Offer:
        """What the payload offers the model; every sentence follows it."""
        ...

    def offering(self, offer: Offer) -> Vocabulary:
        """This vocabulary bound to `offer`."""
        ...

    @property
    def store_instruction(self) -> str | None:
        """The system text after the system prompt when no memory is configured, if any."""
        ...

    @property
    def memory_instruction(self) -> str:
        """The system text after the system prompt when memory is configured."""
        ...

    @property
    def memory_block_header(self) -> str:
        """The line above the `<memory>` block."""
        ...

    def memory_keys_line(self, keys: Sequence[str], *, allowed: bool) -> str:
        """The line under the memory block: the writable keys (`allowed`), else those shown."""
        ...

    def memory_omitted_line(self, count: int, limit: int) -> str:
        """The note under a memory block cut at `limit` bytes: `count` entries left out, and
        how to read them where the vocabulary can."""
        ...

    def offload_notice(
        self, *, uri: str, lines: int, chars: int, shown: str, error_lines: int
    ) -> str:
        """The block that stands in for the middle of a tool output offloaded to `uri`."""
        ...

    def handoff_notice(self) -> str:
        """The default one-per-window warning that the window is nearly full."""
        ...

    def summary_window(self, window: str) -> str | None:
        """The window id a summary names, or None when the vocabulary does not name it."""
        ...

    def archive_citation(self, count: int, uri: str) -> str:
        """Appended to a summary whose `count` evicted messages were archived at `uri`."""
        ...

    def tool_definitions(self, catalog: ToolCatalog[T]) -> tuple[T, ...]:
        """The tools the library adds to the payload, taken from `catalog`: those the offer
        holds, and no others."""
        ...


@dataclass(frozen=True)
class UnifiedVocabulary:
    """One `context` tool over every namespace of the store (plus `new_context` with handoff)."""

    offer: Offer = field(default_factory=Offer)

    @property
    def name(self) -> str:
        return "unified"

    def offering(self, offer: Offer) -> UnifiedVocabulary:
        return replace(self, offer=offer)

    @property
    def store_instruction(self) -> str | None:
        return context_tool.store_instruction(
            memory=False, memory_writable=False, notes_writable=self.offer.notes_writable
        )

    @property
    def memory_instruction(self) -> str:
        return context_tool.store_instruction(
            memory=True,
            memory_writable=self.offer.memory_writable,
            notes_writable=self.offer.notes_writable,
        )

    @property
    def memory_block_header(self) -> str:
        return context_tool.UNIFIED_MEMORY_BLOCK_HEADER

    def memory_keys_line(self, keys: Sequence[str], *, allowed: bool) -> str:
        return context_tool.memory_keys_line(keys, allowed=allowed)

    def memory_omitted_line(self, count: int, limit: int) -> str:
        return context_tool.memory_omitted_line(count, limit)

    def offload_notice(
        self, *, uri: str, lines: int, chars: int, shown: str, error_lines: int
    ) -> str:
        how = context_tool.offload_how(uri)
        return common.offloaded_output(
            how, lines=lines, chars=chars, shown=shown, error_lines=error_lines
        )

    def handoff_notice(self) -> str:
        offer = self.offer
        save = context_tool.handoff_save(
            notes=offer.notes_writable,
            memory=offer.memory and offer.memory_writable,
            new_context=offer.handoff,
        )
        return common.context_notice(save)

    def summary_window(self, window: str) -> str | None:
        return window

    def archive_citation(self, count: int, uri: str) -> str:
        return common.archive_citation(count, uri)

    def tool_definitions(self, catalog: ToolCatalog[T]) -> tuple[T, ...]:
        if self.offer.handoff:
            return catalog.context_tool(), catalog.new_context_tool()
        return (catalog.context_tool(),)


@dataclass(frozen=True)
class LegacyVocabulary:
    """`create_memory` / `modify_memory` over memory keys, offered only when memory may be
    written. Nothing names the `context` tool, and `recall_context` is never offered: a URI
    (an offloaded output, an archive) is cited as where the content is kept, never as
    something to read."""

    offer: Offer = field(default_factory=Offer)

    @property
    def name(self) -> str:
        return "legacy"

    def offering(self, offer: Offer) -> LegacyVocabulary:
        return replace(self, offer=offer)

    @property
    def store_instruction(self) -> str | None:
        return None

    @property
    def memory_instruction(self) -> str:
        if self.offer.memory_writable:
            return memory_tools.MEMORY_INSTRUCTION
        return memory_tools.MEMORY_READ_ONLY_INSTRUCTION

    @property
    def memory_block_header(self) -> str:
        return memory_tools.MEMORY_BLOCK_HEADER

    def memory_keys_line(self, keys: Sequence[str], *, allowed: bool) -> str:
        return memory_tools.memory_keys_line(keys, allowed=allowed)

    def memory_omitted_line(self, count: int, limit: int) -> str:
        return memory_tools.memory_omitted_line(
            count, limit, writable=self.offer.memory and self.offer.memory_writable
        )

    def offload_notice(
        self, *, uri: str, lines: int, chars: int, shown: str, error_lines: int
    ) -> str:
        how = memory_tools.offload_how(uri)
        return common.offloaded_output(
            how, lines=lines, chars=chars, shown=shown, error_lines=error_lines
        )

    def handoff_notice(self) -> str:
        return common.context_notice(memory_tools.HANDOFF_SAVE)

    def summary_window(self, window: str) -> str | None:
        return None

    def archive_citation(self, count: int, uri: str) -> str:
        return memory_tools.archive_citation(count, uri)

    def tool_definitions(self, catalog: ToolCatalog[T]) -> tuple[T, ...]:
        offer = self.offer
        if offer.memory and offer.memory_writable:
            return tuple(catalog.memory_tools(offer.allowed_keys))
        return ()


_VOCABULARIES: Final[dict[str, Vocabulary]] = {
    v.name: v for v in (LegacyVocabulary(), UnifiedVocabulary())
}
VOCABULARY_NAMES: Final = tuple(_VOCABULARIES)
"""The names `vocabulary()` accepts: `"legacy"` and `"unified"`."""
DEFAULT_VOCABULARY: Final = _VOCABULARIES["unified"]
"""The vocabulary a chef compiles with unless told otherwise (`tools="unified"`)."""


def vocabulary(name: str) -> Vocabulary:
    """The vocabulary called `name` (the chef's `tools=` option); ConfigError if none is."""
    found = _VOCABULARIES.get(name) if isinstance(name, str) else None
    if found is None:
        known = " or ".join(repr(known) for known in VOCABULARY_NAMES)
        raise ConfigError(f"tools must be {known}, got {name!r}")
    return found


def as_vocabulary(value: Vocabulary | str) -> Vocabulary:
    """`value` itself when it is a Vocabulary, else the vocabulary it names."""
    return value if isinstance(value, Vocabulary) else vocabulary(value)
