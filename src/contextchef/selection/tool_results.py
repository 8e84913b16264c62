"""Tool results on their way into the payload: the user's rewrite hook, then the Offloader.

Both run once per tool-result message (memoised by the identity of the chef's private copy), so
the hook is not called again and nothing is re-written to the store on later compiles. The
chef's history keeps the full results; only the payload carries the previews.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any

from contextchef import prompts
from contextchef._effects import Call, Emit, Flow
from contextchef._sequences import Lineage, identical_prefix
from contextchef.events import OffloadCreated
from contextchef.messages import Message
from contextchef.selection.offload import OffloadConfig, preview
from contextchef.store.core import StoreCore

__all__ = ["ToolResultMemo", "TransformHook", "prepare_tool_results"]

logger = logging.getLogger("contextchef.selection.tool_results")

TransformHook = Callable[[str, dict[str, Any]], Any]


class ToolResultMemo:
    """Original tool message → the message sent in its place, for one chef; plus the last
    history seen and its result, so a new turn only looks at what follows the shared prefix."""

    __slots__ = ("_kept", "_positions", "_previews", "_spare", "last", "lineage")

    MAX_PREVIEWS = 1024
    """Previews kept by URI, for results that come back as new objects (a host reloading its
    history, a history rewritten by compaction): the preview of a long log is its costliest
    part, and the URI already names the content."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[Message, Message]] = {}  # replaced messages of `last`
        self._positions: list[int] = []  # where they are in `last`, ascending
        self._spare: dict[int, tuple[Message, Message]] = {}  # let go by the last `keep`
        self._previews: dict[str, str] = {}
        self.last: tuple[tuple[Message, ...], tuple[Message, ...]] = ((), ())
        self.lineage: Lineage | None = None
        """How the last result continues the one before it (see `Lineage`)."""

    def preview(
        self, text: str, uri: str, config: OffloadConfig, vocabulary: prompts.Vocabulary
    ) -> str:
        """`preview(text, uri, …)`, computed once per URI while it stays among the newest."""
        key = f"{id(config)}:{id(vocabulary)}:{uri}"
        found = self._previews.get(key)
        if found is None:
            found = preview(text, uri, config, vocabulary)
            if len(self._previews) >= self.MAX_PREVIEWS:
                del self._previews[next(iter(self._previews))]
            self._previews[key] = found
        return found

    def get(self, message: Message) -> Message | None:
        """What `message` was replaced by in the last history (or the one before), if it was."""
        entry = self._kept.get(id(message)) or self._spare.get(id(message))
        if entry is None or entry[0] is not message:
            return None
        return entry[1]

    def replaced_before(self, end: int) -> bool:
        """Whether the last result replaced any of its first `end` messages."""
        return bool(self._positions) and self._positions[0] < end

    def keep(self, history: tuple[Message, ...], result: tuple[Message, ...], shared: int) -> None:
        """Remember this history and its result, which share their first `shared` messages with
        the last ones. Only what follows the shared prefix is looked at; the replacements the
        last history had past it stay available for one more turn (a message that moved)."""
        previous, kept, positions = self.last[0], self._kept, self._positions
        cut = bisect_left(positions, shared)
        spare: dict[int, tuple[Message, Message]] = {}
        for at in positions[cut:]:
            key = id(previous[at])
            entry = kept.pop(key, None)
            if entry is not None:
                spare[key] = entry
        del positions[cut:]
        if result is not history:  # else nothing past `shared` was replaced
            for at in range(shared, len(history)):
                message, sent = history[at], result[at]
                if message is not sent:
                    kept[id(message)] = (message, sent)
                    positions.append(at)
        self._spare = spare
        self.lineage = Lineage(self.last[1], result, shared)
        self.last = (history, result)


def _tool_name(history: Sequence[Message], at: int) -> str:
    """The name of the call that the tool result at `at` answers: looked up in the assistant
    message before it (where a repaired history has it), else anywhere in the history."""
    call_id = history[at].get("tool_call_id", "")
    for index in range(at - 1, -1, -1):
        message = history[index]
        if message["role"] == "assistant":
            for call in message.get("tool_calls") or ():
                if call["id"] == call_id:
                    return str(call["function"]["name"])
            break
    return _tool_names(history).get(call_id, "")


def _tool_names(history: Sequence[Message]) -> dict[str, str]:
    return {
        call["id"]: call["function"]["name"]
        for message in history
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or ()
    }


def _prepare_one(
    message: Message,
    name: str,
    memo: ToolResultMemo,
    *,
    transform: TransformHook | None,
    config: OffloadConfig,
    store: StoreCore,
    vocabulary: prompts.Vocabulary,
    on_offload: tuple[Callable[[Any], Any], ...] = (),
) -> Flow[Message]:
    content = message.get("content")
    if not isinstance(content, str):
        return message
    text = content
    if transform is not None:
        info = {"tool_call_id": message.get("tool_call_id", ""), "tool_name": name}
        try:
            rewritten = yield Call.of(transform, text, info, what="transform_tool_result")
            if isinstance(rewritten, str):
                text = rewritten
            else:
                logger.warning("transform_tool_result returned %r, not a str; ignored", rewritten)
        except Exception as exc:
            logger.warning("transform_tool_result raised %r; the result is kept as it was", exc)
    if config.wants(text):
        try:
            ns = config.namespace
            stored = yield from store.put(ns, None, text, None)
            full, text = text, memo.preview(text, stored.uri, config, vocabulary)
        except Exception as exc:
            logger.warning("offloading a %d-character tool result failed: %r", len(text), exc)
        else:
            if on_offload:
                call_id = message.get("tool_call_id") or None
                event = OffloadCreated(
                    stored.uri, ns, stored.path, len(full), "tool_result", name or None, call_id
                )
                yield Emit(on_offload, event)
    if text == content:
        return message
    replacement: Message = {**message, "content": text}
    return replacement


def prepare_tool_results(
    history: tuple[Message, ...],
    memo: ToolResultMemo,
    *,
    transform: TransformHook | None,
    config: OffloadConfig,
    store: StoreCore,
    vocabulary: prompts.Vocabulary,
    on_offload: tuple[Callable[[Any], Any], ...] = (),
    known: Lineage | None = None,
) -> Flow[tuple[Message, ...]]:
    """`history` with every tool result rewritten and, when long, offloaded (each offload
    emitted to the `offload:created` handlers `on_offload`); `history` itself when no result
    is replaced. `known`: the lineage of `history` from the one set before (see `Lineage`)."""
    if transform is None and config.threshold is None:
        return history
    previous, previous_out = memo.last
    shared = identical_prefix(previous, history, known)
    # `config.wants(content)` inlined: longer than both the threshold and the preview.
    floor = (
        -1
        if config.threshold is None
        else max(config.threshold, config.head_chars + config.tail_chars)
    )
    unchanged = (  # most compiles: nothing to replace, found in one pass, no copy
        transform is None
        and not memo.replaced_before(shared)
        and not any(
            message["role"] == "tool"
            and isinstance(content := message.get("content"), str)
            and len(content) > floor
            for message in history[shared:]
        )
    )
    if unchanged:
        memo.keep(history, history, shared)
        return history
    fresh: list[Message] = []
    replaced = False
    for at in range(shared, len(history)):
        message = history[at]
        if message["role"] != "tool":
            fresh.append(message)
            continue
        if transform is None:
            content = message.get("content")
            if not isinstance(content, str) or len(content) <= floor:
                fresh.append(message)
                continue
        replacement = memo.get(message)
        if replacement is None:
            replacement = yield from _prepare_one(
                message,
                _tool_name(history, at),
                memo,
                transform=transform,
                config=config,
                store=store,
                vocabulary=vocabulary,
                on_offload=on_offload,
            )
        replaced = replaced or replacement is not message
        fresh.append(replacement)
    if not replaced and not memo.replaced_before(shared):
        result = history  # nothing replaced: no copy of a long history
    else:
        result = previous_out[:shared] + tuple(fresh)
    memo.keep(history, result, shared)
    return result
