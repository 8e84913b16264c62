"""The memory block: one `<entry>` per fact, under a header and over the line naming the keys,
rendered deterministically and XML-escaped, within an optional byte cap. When a fact shown is
rated (`importance`), one line under `</memory>` says what the rating means."""

from __future__ import annotations

from collections.abc import Sequence

from contextchef.memory.entry import MemoryEntry
from contextchef.placement.xml import escape_xml
from contextchef.prompts import MEMORY_IMPORTANCE_NOTE, Vocabulary

__all__ = ["fit_memory_block", "render_entry", "render_memory_block"]


def render_entry(entry: MemoryEntry) -> str:
    """One `<entry>` element; keys, values and descriptions XML-escaped; an `<importance>` for a
    rated entry, so the model can weigh facts that pull different ways. No clock time enters it
    (the timestamps stay in the entry's metadata): the same memory renders to the same bytes
    whenever it was written."""
    lines = [f'<entry key="{escape_xml(entry.key)}">']
    if entry.description:
        lines.append(f"<description>{escape_xml(entry.description)}</description>")
    if entry.importance is not None:
        lines.append(f"<importance>{_number(entry.importance)}</importance>")
    lines.append(f"<update_count>{entry.update_count}</update_count>")
    lines.append(f"<value>{escape_xml(entry.value)}</value>")
    lines.append("</entry>")
    return "\n".join(lines)


def _number(value: float) -> str:
    """A number as the model reads it: `2`, `0.5` (a whole float without its `.0`)."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(value)


def render_memory_block(
    entries: Sequence[MemoryEntry],
    vocabulary: Vocabulary,
    allowed_keys: Sequence[str] | None,
    max_bytes: int | None = None,
) -> str:
    """The memory block in `vocabulary`: the header, `<memory>` with one `<entry>` per entry,
    and the line naming the allowed keys (or, without a key list or when the vocabulary's offer
    makes memory read-only, the keys shown). Without entries it is only that line when keys
    are limited, else `""`. With `max_bytes`, see `fit_memory_block`."""
    return fit_memory_block(entries, vocabulary, allowed_keys, max_bytes)[1]


def fit_memory_block(
    entries: Sequence[MemoryEntry],
    vocabulary: Vocabulary,
    allowed_keys: Sequence[str] | None,
    max_bytes: int | None,
) -> tuple[tuple[MemoryEntry, ...], str]:
    """The entries the block shows and the block, at most `max_bytes` UTF-8 bytes (None: no
    cap). Over the cap, entries are taken in order, each one that still fits; those left out
    are counted in one line under `</memory>` that says how to read them. Only a block whose
    fixed lines alone (header, key list, that note) pass the cap can be longer."""
    limited = allowed_keys if vocabulary.offer.memory_writable else None
    rendered = [render_entry(entry) for entry in entries]
    sizes = [_byte_size(text) for text in rendered]
    if max_bytes is None or sum(sizes) <= max_bytes:
        block = _assemble(vocabulary, entries, rendered, limited, 0, max_bytes)
        if max_bytes is None or _byte_size(block) <= max_bytes:
            return tuple(entries), block
    assert max_bytes is not None
    keys_line = vocabulary.memory_keys_line(limited or [], allowed=limited is not None)
    budget = max_bytes - (
        _byte_size(vocabulary.memory_block_header)
        + len("\n<memory>\n\n</memory>\n\n\n")
        + _byte_size(keys_line)
        + _byte_size(vocabulary.memory_omitted_line(len(entries), max_bytes))
        + (_byte_size(MEMORY_IMPORTANCE_NOTE) + 1 if _rated(entries) else 0)
    )
    # each entry costs its element and a newline, and (keys not limited) its name in the keys
    # line with what the line adds around each name (measured on a probe key)
    per_key = 0
    if limited is None:
        line = vocabulary.memory_keys_line
        per_key = _byte_size(line(["x", "x"], allowed=False)) - _byte_size(
            line(["x"], allowed=False)
        )
    shown: list[int] = []
    for index, size in enumerate(sizes):
        cost = size + 1 + (0 if limited is not None else per_key + _byte_size(entries[index].key))
        if cost <= budget:
            shown.append(index)
            budget -= cost
    kept = tuple(entries[index] for index in shown)
    omitted = len(entries) - len(kept)
    return kept, _assemble(
        vocabulary, kept, [rendered[index] for index in shown], limited, omitted, max_bytes
    )


def _assemble(
    vocabulary: Vocabulary,
    kept: Sequence[MemoryEntry],
    rendered: Sequence[str],
    limited: Sequence[str] | None,
    omitted: int,
    max_bytes: int | None,
) -> str:
    """The block of the `kept` entries (`rendered`), with the note on `omitted` ones."""
    names = limited if limited is not None else [entry.key for entry in kept]
    keys_line = vocabulary.memory_keys_line(names, allowed=limited is not None)
    if not kept and not omitted:
        return keys_line if limited is not None else ""
    parts = [vocabulary.memory_block_header]
    if kept:
        body = "\n".join(rendered)
        parts.append(f"<memory>\n{body}\n</memory>")
        if _rated(kept):
            parts.append(MEMORY_IMPORTANCE_NOTE)
    if omitted:
        parts.append(vocabulary.memory_omitted_line(omitted, max_bytes or 0))
    block = "\n".join(parts)
    return f"{block}\n\n{keys_line}" if kept or limited is not None else block


def _rated(entries: Sequence[MemoryEntry]) -> bool:
    return any(entry.importance is not None for entry in entries)


def _byte_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
