"""An X-ray of one compile, as data: layers, cache breakpoints, repairs, and a byte diff.

`inspect_compile` turns a `Compiled` (see `compiling`) into an `Inspection`, which renders
nowhere by itself: `inspect_view` prints it as rich tables or JSON, and an HTML report can take
the same object (`Inspection.to_dict()` is plain JSON data).

Layers follow the sandwich: the system layer (every system block the target receives: the
host's system prompt, then what the library adds after it, memory or the store instruction), the
history grouped by turns (a turn opens with a user message that is not only tool results), the
tail parts stitched into the last user message (the dynamic state and its anchor line), and the
tools. Token figures of the four layers are the compile's own (`payload.meta.tokens`), and
every figure below or beside them is made of the same per-part counts (`part_tokens`), so they
add up: the turns sum to the history, the parts of the system and of the tail to their layer,
and a breakpoint's prefix is a partial sum of the total. The compile counts the tail as its
message before conversion and leaves the rest of the converted item (its JSON framing) in the
history, so the turn that holds the tail shows that rest; in bytes the whole item is the tail.
Bytes are those of compact JSON, as the provider receives them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from contextchef import prompts
from contextchef.cli.compiling import Compiled
from contextchef.cli.payload_diff import PayloadDiff, diff_payloads, part_bytes, prompt_parts
from contextchef.payload import part_tokens
from contextchef.tokens import EstimateTokenizer

__all__ = ["Breakpoint", "Inspection", "LayerRow", "RepairRow", "inspect_compile"]

_SEQUENCE_KEYS = ("messages", "input", "contents")
_LAYER_KEYS = ("tools", "system", "instructions", "system_instruction", *_SEQUENCE_KEYS)
_SYSTEM_ROLES = frozenset({"system", "developer"})
_CACHE_NOTES = {
    "openai": "OpenAI caches the longest prompt prefix it has seen automatically; no markers",
    "openai-responses": "OpenAI caches the longest prompt prefix it has seen automatically; "
    "no markers",
    "gemini": "Gemini caches repeated prefixes implicitly; no markers",
    "anthropic": "no cache_control markers: mark a message with _cache_breakpoint to add one",
}


@dataclass(frozen=True, slots=True)
class LayerRow:
    """One row of the layer table: a layer (depth 0) or a part of one (depth 1)."""

    layer: str
    """system, history, tail or tools."""
    label: str
    tokens: int
    bytes: int
    detail: str = ""
    depth: int = 0


@dataclass(frozen=True, slots=True)
class Breakpoint:
    """A `cache_control` marker: where it sits and the prompt prefix it caches."""

    part: str
    """Where the marker is, e.g. `messages[3].content[0]`."""
    prefix_bytes: int
    prefix_tokens: int
    before: str
    """What the cached prefix holds, e.g. `tools[0..2], system[0], messages[0..3]`."""


@dataclass(frozen=True, slots=True)
class RepairRow:
    """A change `ensure_valid_history` made to the history (message index, kind, detail)."""

    index: int
    kind: str
    detail: str


@dataclass(frozen=True, slots=True)
class Inspection:
    """Everything `contextchef inspect` shows about one compile."""

    source: str
    format: str
    target: str
    total_tokens: int
    total_bytes: int
    layers: tuple[LayerRow, ...]
    breakpoints: tuple[Breakpoint, ...]
    cache_note: str
    repairs: tuple[RepairRow, ...]
    findings: tuple[str, ...] = ()
    """What the cache audit found in the layout (`cache_audit=True`), one sentence each."""
    diff: PayloadDiff | None = None
    diff_source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (what `inspect --json` prints)."""
        return {
            "source": self.source,
            "format": self.format,
            "target": self.target,
            "total_tokens": self.total_tokens,
            "total_bytes": self.total_bytes,
            "layers": [asdict(row) for row in self.layers],
            "breakpoints": [asdict(point) for point in self.breakpoints],
            "cache_note": self.cache_note,
            "repairs": [asdict(repair) for repair in self.repairs],
            "findings": list(self.findings),
            "diff": self.diff.to_dict() if self.diff is not None else None,
            "diff_source": self.diff_source,
        }


def _sequence(payload: Mapping[str, Any]) -> tuple[str, list[Any]]:
    for key in _SEQUENCE_KEYS:
        value = payload.get(key)
        if isinstance(value, list):
            return key, value
    return "messages", []


def _all_blocks(blocks: Any, kind: str) -> bool:
    """Whether `blocks` is a non-empty list of blocks that are all of `kind`."""
    if not isinstance(blocks, list) or not blocks:
        return False
    return all(isinstance(b, Mapping) and (b.get("type") == kind or kind in b) for b in blocks)


def _opens_turn(item: Any) -> bool:
    """A user message that is not only tool results (in any target's shape)."""
    if not isinstance(item, Mapping) or item.get("role") != "user":
        return False
    if _all_blocks(item.get("content"), "tool_result"):
        return False
    return not _all_blocks(item.get("parts"), "function_response")


def _turns(items: Sequence[Any], start: int) -> Iterator[tuple[int, int, int]]:
    """(turn number, first index, end index) over `items[start:]`; turn 0 precedes any user."""
    number, first = 0, start
    for index in range(start, len(items)):
        if _opens_turn(items[index]):
            if index > first:
                yield number, first, index
            number, first = number + 1, index
    if first < len(items):
        yield number, first, len(items)


def _count(name: str, value: Any, tokenizer: EstimateTokenizer) -> int:
    """The tokens `meta.tokens` gives the prompt part `name`: 0 outside the four layers (the
    model's settings) and for an empty value that is no list item, as the compile counts."""
    key = name.removeprefix("config.").split("[")[0]
    if key not in _LAYER_KEYS or not (value or name.endswith("]")):
        return 0
    return part_tokens(tokenizer, value)


def _tail_item(items: Sequence[Any], lead: int, state_xml: str | None) -> int | None:
    """The index of the payload item the tail was stitched into (it holds the state's text)."""
    if not state_xml:
        return None
    needle = json.dumps(state_xml, ensure_ascii=False)[1:-1].encode()
    for index in range(len(items) - 1, lead - 1, -1):
        if needle in part_bytes(items[index]):
            return index
    return None


def _history_rows(
    payload: Mapping[str, Any],
    state_xml: str | None,
    tail_tokens: int,
    tokenizer: EstimateTokenizer,
) -> tuple[int, int | None, list[LayerRow]]:
    """(leading system items, the item holding the tail, one row per turn).

    The turn holding the tail leaves out what the tail layer counts: `tail_tokens` of its
    tokens and all of that item's bytes, so the turns add up to the history layer.
    """
    key, items = _sequence(payload)
    lead = 0
    while lead < len(items) and isinstance(items[lead], Mapping):
        if items[lead].get("role") not in _SYSTEM_ROLES:
            break
        lead += 1
    tail = _tail_item(items, lead, state_xml)
    rows: list[LayerRow] = []
    for number, first, end in _turns(items, lead):
        size = sum(len(part_bytes(items[at])) for at in range(first, end))
        tokens = sum(_count(f"{key}[{at}]", items[at], tokenizer) for at in range(first, end))
        label = f"turn {number}" if number else "before the first user message"
        span = f"{key}[{first}]" if end - first == 1 else f"{key}[{first}..{end - 1}]"
        detail = f"{span}, {end - first} item(s)"
        if tail is not None and first <= tail < end:
            tokens -= tail_tokens
            size -= len(part_bytes(items[tail]))
            detail += f"; {key}[{tail}] holds the tail: {tail_tokens:,} of its tokens and all"
            detail += " its bytes are under tail"
        rows.append(LayerRow("history", label, tokens, size, detail, depth=1))
    return lead, tail, rows


def _tail_parts(
    compiled: Compiled, tokens: int, size: int, tokenizer: EstimateTokenizer
) -> list[LayerRow]:
    """The blocks stitched into the last user message (the dynamic state and its anchor line),
    each counted on its own text, then the rest of the message: they add up to the tail layer's
    `tokens` and `size`."""
    state = compiled.chef.prompt.dynamic_state
    if state is None or not state.xml or state.placement != "last_user":
        return []
    rows: list[LayerRow] = []
    for label, text in (("dynamic state", state.xml), ("state anchor", prompts.STATE_ANCHOR)):
        own_tokens = min(tokens, tokenizer.count_text(text))
        own_bytes = min(size, len(text.encode()))
        rows.append(LayerRow("tail", label, own_tokens, own_bytes, depth=1))
        tokens, size = tokens - own_tokens, size - own_bytes
    detail = "the user's own text and what wraps the message"
    return [*rows, LayerRow("tail", "the rest of the message", tokens, size, detail, depth=1)]


def _system_rows(
    compiled: Compiled, tokens: int, size: int, tokenizer: EstimateTokenizer
) -> list[LayerRow]:
    """The system layer split into the host's system prompt and what the library adds after
    it (the memory block with its instruction, or the context store instruction)."""
    texts = [
        m["content"] if isinstance(m["content"], str) else part_bytes(m["content"]).decode()
        for m in compiled.chef.prompt.system_prompt
    ]
    own_tokens = min(tokens, sum(tokenizer.count_text(text) for text in texts))
    own_bytes = min(size, sum(len(text.encode()) for text in texts))
    own = LayerRow("system", "system prompt", own_tokens, own_bytes, f"{len(texts)} message(s)")
    keys = compiled.payload.meta.memory_keys
    if compiled.inputs.memory:
        label, detail = "memory", f"{len(keys)} entries: {', '.join(keys)}" if keys else "empty"
    elif compiled.chef.tools.vocabulary.store_instruction is not None:
        label, detail = "store instruction", "how to reach the context store"
    else:
        return []  # the host's prompt is the whole layer: the layer's row says it all
    added = LayerRow("system", label, tokens - own_tokens, size - own_bytes, detail, depth=1)
    return [replace(own, depth=1), added]


def _system_parts(payload: Mapping[str, Any], lead: int) -> list[tuple[str, Any]]:
    names = ("system", "instructions", "system_instruction", "config.system_instruction")
    key, items = _sequence(payload)
    found = [(n, v) for n, v in prompt_parts(payload) if n.split("[")[0] in names]
    found.extend((f"{key}[{at}]", items[at]) for at in range(lead))
    return found


def _tool_parts(payload: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [
        (n, v) for n, v in prompt_parts(payload) if n.split("[")[0] in ("tools", "config.tools")
    ]


def _tool_names(tools: list[tuple[str, Any]]) -> str:
    names: list[str] = []
    for _, tool in tools:
        if not isinstance(tool, Mapping):
            continue
        inner = tool.get("function")
        if isinstance(inner, Mapping):
            names.append(str(inner.get("name")))
        elif "function_declarations" in tool:
            names.extend(str(d.get("name")) for d in tool["function_declarations"])
        elif "name" in tool:
            names.append(str(tool["name"]))
    return ", ".join(names)


def _markers(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, Mapping):
        if "cache_control" in value:
            yield path
        for key, item in value.items():
            if key != "cache_control":
                yield from _markers(item, f"{path}.{key}")
    elif isinstance(value, list):
        for at, item in enumerate(value):
            yield from _markers(item, f"{path}[{at}]")


def _spans(names: Sequence[str]) -> str:
    """`tools[0..2], system[0], messages[0..3]` for a run of part names."""
    groups: dict[str, list[str]] = {}
    for name in names:
        base, _, index = name.partition("[")
        groups.setdefault(base, []).append(index.rstrip("]"))
    out = []
    for base, indices in groups.items():
        if indices == [""]:
            out.append(base)
        elif len(indices) == 1:
            out.append(f"{base}[{indices[0]}]")
        else:
            out.append(f"{base}[{indices[0]}..{indices[-1]}]")
    return ", ".join(out)


def _breakpoints(payload: Mapping[str, Any], tokenizer: EstimateTokenizer) -> list[Breakpoint]:
    found: list[Breakpoint] = []
    size = tokens = 0
    seen: list[str] = []
    for name, value in prompt_parts(payload):
        size += len(part_bytes(value))
        tokens += _count(name, value, tokenizer)
        seen.append(name)
        for where in _markers(value, name):
            found.append(Breakpoint(where, size, tokens, _spans(seen)))
    return found


def inspect_compile(
    compiled: Compiled,
    *,
    previous: Mapping[str, Any] | None = None,
    previous_source: str | None = None,
) -> Inspection:
    """The `Inspection` of one compile, diffed against `previous` (another payload) if given."""
    payload = compiled.payload
    figures = payload.meta.tokens
    tokenizer = EstimateTokenizer()
    state = compiled.chef.prompt.dynamic_state
    state_xml = state.xml if state is not None and state.placement == "last_user" else None
    lead, tail, turn_rows = _history_rows(payload, state_xml, figures.tail, tokenizer)
    key, items = _sequence(payload)
    tail_bytes = len(part_bytes(items[tail])) if tail is not None else 0
    history_bytes = sum(len(part_bytes(item)) for item in items[lead:]) - tail_bytes
    system = _system_parts(payload, lead)
    tools = _tool_parts(payload)
    system_bytes = sum(len(part_bytes(v)) for _, v in system)
    tool_bytes = sum(len(part_bytes(v)) for _, v in tools)
    rows = [
        LayerRow("system", "system", figures.system, system_bytes, f"{len(system)} block(s)"),
        *_system_rows(compiled, figures.system, system_bytes, tokenizer),
        LayerRow("history", "history", figures.history, history_bytes, f"{len(turn_rows)} turn(s)"),
        *turn_rows,
    ]
    if tail is not None:
        detail = f"{key}[{tail}]: the last user message, with the parts below stitched in"
        rows.append(LayerRow("tail", "tail", figures.tail, tail_bytes, detail))
        rows.extend(_tail_parts(compiled, figures.tail, tail_bytes, tokenizer))
    rows.append(LayerRow("tools", "tools", figures.tools, tool_bytes, _tool_names(tools)))
    breakpoints = _breakpoints(payload, tokenizer)
    note = "" if breakpoints else _CACHE_NOTES.get(payload.meta.target, "no cache markers")
    repairs = tuple(RepairRow(f.index, f.kind, f.detail) for f in payload.meta.repairs)
    findings = tuple(f"{f.kind}: {f.message}" for f in payload.meta.cache.findings)
    return Inspection(
        source=str(compiled.inputs.history),
        format=compiled.loaded.format,
        target=payload.meta.target,
        total_tokens=figures.total,
        total_bytes=sum(len(part_bytes(v)) for _, v in prompt_parts(payload)),
        layers=tuple(rows),
        breakpoints=tuple(breakpoints),
        cache_note=note,
        repairs=repairs,
        findings=findings,
        diff=diff_payloads(payload, previous) if previous is not None else None,
        diff_source=previous_source,
    )
