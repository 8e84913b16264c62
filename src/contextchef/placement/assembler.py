"""The sandwich: a stable top layer, the rolling history, and a volatile tail at the very end.

The top layer (system prompt, then anything placed after it) never changes from turn to turn,
so it is the provider's cache prefix. The live task state and the guardrails are stitched into
the *last user message* (the spot the model attends to most) instead of a new system message,
so the role structure of the history stays intact.

Where the stitch goes, given the history:

1. the last message that is a user message or a tool result is found;
2. a user message gets the stitch appended to its content (a copy; the history is never
   mutated) — unless it carries a `_cache_breakpoint`, in which case the stitch goes into a new
   user message right after it, so the cached prefix does not change every turn;
3. a tool result gets a new user message right after it;
4. with neither, a new user message goes before any trailing assistant messages (a prefill
   stays last).

Messages built here have their keys in sorted order, like the chef's private copies: adapters
may emit any IR message as it is when it already has their wire shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextchef import prompts
from contextchef.messages import Message
from contextchef.placement.guardrail import Guardrails
from contextchef.placement.state import DynamicState

__all__ = ["Sandwich", "assemble", "compose_tail", "inject_tail"]


@dataclass(frozen=True, slots=True)
class Sandwich:
    """The assembled layers, ready for an adapter.

    `tail_index` is the index in `messages` of the message holding the stitch (`None` without a
    tail); every message before it is byte-identical to the history it came from. `auto_marks`
    are the positions in `(*system, *messages)` of the automatic cache breakpoints, ascending
    (see `placement.breakpoints`; none until it marks them).
    """

    system: list[Message]
    messages: list[Message]
    prefill: str | None
    tail: str
    tail_index: int | None
    auto_marks: tuple[int, ...] = ()


def compose_tail(
    *,
    context_blocks: Sequence[str] = (),
    state_blocks: Sequence[str] = (),
    closing_blocks: Sequence[str] = (),
) -> str:
    """Join the tail's blocks with blank lines, in a fixed order.

    `context_blocks` (memory, skill instructions) come first; `state_blocks` (dynamic state,
    injected context, announcements) next and, when present, are followed by the anchor line
    that tells the model what they are; `closing_blocks` (guardrails) come last.
    """
    parts = [block for block in context_blocks if block]
    states = [block for block in state_blocks if block]
    if states:
        parts.extend(states)
        parts.append(prompts.STATE_ANCHOR)
    parts.extend(block for block in closing_blocks if block)
    return "\n\n".join(parts)


def _with_text_appended(message: Message, text: str) -> Message:
    content = message.get("content")
    copy: Message = dict(message)  # type: ignore[assignment]  # keeps the sorted key order
    if isinstance(content, list):
        copy["content"] = [*content, {"type": "text", "text": text}]
    else:
        copy["content"] = f"{content}\n\n{text}" if content else text
    return copy


def inject_tail(history: Sequence[Message], tail: str) -> tuple[list[Message], int | None]:
    """Place `tail` by the rules in the module docstring; return the messages and its index."""
    messages = list(history)
    if not tail:
        return messages, None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        role = message["role"]
        if role == "user" and not message.get("_cache_breakpoint"):
            messages[index] = _with_text_appended(message, tail)
            return messages, index
        if role in ("user", "tool"):
            messages.insert(index + 1, {"content": tail, "role": "user"})
            return messages, index + 1
    at = len(messages)
    while at > 0 and messages[at - 1]["role"] == "assistant":
        at -= 1
    messages.insert(at, {"content": tail, "role": "user"})
    return messages, at


def assemble(
    system_prompt: Sequence[Message],
    history: Sequence[Message],
    *,
    state: DynamicState | None = None,
    guardrails: Guardrails | None = None,
    context_blocks: Sequence[str] = (),
    notices: Sequence[str] = (),
) -> Sandwich:
    """Build the sandwich from the chef's layers. A dynamic state or a guardrail placed as
    `"system"` becomes a system message after the history (state first), not part of the tail.

    `context_blocks` (memory, skills) open the tail; `notices` (one-off announcements such as
    the handoff warning) follow the dynamic state.
    """
    state_blocks: list[str] = []
    trailing_system: list[Message] = []
    if state is not None and state.xml:
        if state.placement == "system":
            content = f"{prompts.SYSTEM_STATE_HEADER}\n{state.xml}"
            trailing_system.append({"content": content, "role": "system"})
        else:
            state_blocks.append(state.xml)
    state_blocks.extend(notices)
    instruction = guardrails.instruction() if guardrails else None
    if instruction and guardrails and guardrails.placement == "system":
        trailing_system.append({"content": instruction, "role": "system"})
        instruction = None
    tail = compose_tail(
        context_blocks=context_blocks,
        state_blocks=state_blocks,
        closing_blocks=[instruction] if instruction else (),
    )
    messages, tail_index = inject_tail(history, tail)
    messages.extend(trailing_system)
    return Sandwich(
        system=list(system_prompt),
        messages=messages,
        prefill=guardrails.prefill if guardrails else None,
        tail=tail,
        tail_index=tail_index,
    )
