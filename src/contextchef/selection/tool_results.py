"""Tool results on their way into the payload: the user's rewrite hook, then the Offloader.

Both run once per tool-result message (memoised by the identity of the chef's private copy), so
the hook is not called again and nothing is re-written to the store on later compiles. The
chef's history keeps the full results; only the payload carries the previews.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from contextchef import prompts
from contextchef._effects import Call, Flow
from contextchef.messages import Message
from contextchef.selection.offload import OffloadConfig, offload_uri, preview
from contextchef.store.core import StoreCore

__all__ = ["ToolResultMemo", "TransformHook", "prepare_tool_results"]

logger = logging.getLogger("contextchef.selection.tool_results")

TransformHook = Callable[[str, dict[str, Any]], Any]


class ToolResultMemo:
    """Original tool message → the message sent in its place, for one chef; plus the last
    history seen and its result, so a new turn only looks at what follows the shared prefix."""

    __slots__ = ("_current", "_previews", "_previous", "last")

    MAX_PREVIEWS = 1024
    """Previews kept by URI, for results that come back as new objects (a host reloading its
    history, a history rewritten by compaction): the preview of a long log is its costliest
    part, and the URI already names the content."""

    def __init__(self) -> None:
        self._previous: dict[int, tuple[Message, Message]] = {}
        self._current: dict[int, tuple[Message, Message]] = {}
        self._previews: dict[str, str] = {}
        self.last: tuple[tuple[Message, ...], tuple[Message, ...]] = ((), ())

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
        entry = self._current.get(id(message)) or self._previous.get(id(message))
        if entry is None or entry[0] is not message:
            return None
        self._current[id(message)] = entry
        return entry[1]

    def put(self, message: Message, replacement: Message) -> None:
        self._current[id(message)] = (message, replacement)

    def keep(self, history: tuple[Message, ...], result: tuple[Message, ...]) -> None:
        """Remember this history and exactly the replacements it still uses."""
        self.last = (history, result)
        self._previous = {}
        self._current = {id(a): (a, b) for a, b in zip(history, result, strict=True) if a is not b}


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
            yield from store.put(ns, None, text, None)
            text = memo.preview(text, offload_uri(ns, text), config, vocabulary)
        except Exception as exc:
            logger.warning("offloading a %d-character tool result failed: %r", len(text), exc)
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
) -> Flow[tuple[Message, ...]]:
    """`history` with every tool result rewritten and, when long, offloaded."""
    if transform is None and config.threshold is None:
        return history
    previous, previous_out = memo.last
    shared, limit = 0, min(len(previous), len(history))
    while shared < limit and previous[shared] is history[shared]:
        shared += 1
    out = list(previous_out[:shared])
    names: dict[str, str] | None = None
    # `config.wants(content)` inlined: longer than both the threshold and the preview.
    floor = (
        -1
        if config.threshold is None
        else max(config.threshold, config.head_chars + config.tail_chars)
    )
    for message in history[shared:]:
        if message["role"] != "tool":
            out.append(message)
            continue
        if transform is None:
            content = message.get("content")
            if not isinstance(content, str) or len(content) <= floor:
                out.append(message)
                continue
        replacement = memo.get(message)
        if replacement is None:
            if names is None:
                names = _tool_names(history)
            name = names.get(message.get("tool_call_id", ""), "")
            replacement = yield from _prepare_one(
                message,
                name,
                memo,
                transform=transform,
                config=config,
                store=store,
                vocabulary=vocabulary,
            )
            memo.put(message, replacement)
        out.append(replacement)
    result = tuple(out)
    memo.keep(history, result)
    return result
