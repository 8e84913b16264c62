"""Gemini's `contents`, merged from converted messages and kept between compiles.

Consecutive contents of one role merge into one, and a tool result is named after the call that
an earlier assistant message made. An agent loop compiles the same history plus a turn or two:
`Contents` keeps the previous compile's merge and the call names as they stood at every
message, and restarts at the content holding the last unchanged message (which may absorb the
new ones). Every earlier content keeps its object. Contents handed out are never mutated: one
that grows is a new dict, and what a compile changes for one request only (the prefill
instruction, a trailing model text taken off) the adapter does on copies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol, cast

from contextchef._sequences import Lineage, identical_prefix
from contextchef.adapters.base import ConversionCache
from contextchef.adapters.merged_groups import MergedGroups, same_items
from contextchef.errors import CompileError
from contextchef.messages import Message

__all__ = ["Contents", "Converter", "Unconvertible"]

Content = dict[str, Any]
_MISSING = ""  # a call id had no name yet (names are never empty: Gemini needs them)


class Unconvertible(Exception):
    """A message the target cannot take; re-raised as `CompileError` with its index."""


class Converter(Protocol):
    """The adapter's per-message conversions, as `Contents` calls them."""

    def model_content(self, message: Message) -> Content | None: ...

    def user_content(self, message: Message) -> Content | None: ...

    def tool_content(self, message: Message, name: str) -> Content: ...


class _Named:
    """A tool result's content and the function name it was built with (what is memoised)."""

    __slots__ = ("content", "name")

    def __init__(self, _: object = None) -> None:
        self.name = ""
        self.content: Content = {}


def _call_name(message: Message, names: dict[str, str]) -> str:
    """The function a tool result answers (by `names`, call id -> name, else its own `name`)."""
    call_id = message["tool_call_id"]
    name = names.get(call_id) or message.get("name")
    if not name:
        raise Unconvertible(
            f"tool result for call {call_id!r} has no matching tool call earlier in the "
            "history, and Gemini needs the called function's name; repair the history "
            "with ensure_valid_history() or give the result a 'name'"
        )
    return name


class Contents(MergedGroups[Content, Content]):
    """The contents a history merges into, resumable after a shared prefix.

    Content `c` merges `sizes[c]` converted contents (the first from message `firsts[c]`)
    and is sent as `wires[c]`. `hoisted` are the system parts of the history's system messages
    (part `p` from message `hoisted_at[p]`); `names` maps call ids to function names, and
    `log` records (message index, call id, name before) to undo them back to any message, flat
    (three items per record: no tuple per tool call for the collector to count).
    """

    __slots__ = ("log", "messages", "names", "runs")

    def __init__(self) -> None:
        super().__init__()
        self.messages: Sequence[Message] = ()
        self.names: dict[str, str] = {}
        self.log: list[int | str] = []
        self.runs = 0  # updates completed

    def _clear(self) -> None:
        self.messages = ()
        self.forget()
        del self.log[:]
        self.names.clear()

    def _rewind(self, shared: int) -> tuple[int, dict[int, Content]]:
        """Forget what the messages from the restart point on made: (restart message, the
        merged contents dropped, by the identity of their first)."""
        start, _, reuse = self.rewind(shared)
        log, names = self.log, self.names
        while log and cast(int, log[-3]) >= start:
            before, call_id = cast(str, log.pop()), cast(str, log.pop())
            del log[-1]
            if before is _MISSING:
                del names[call_id]
            else:
                names[call_id] = before
        return start, reuse

    def update(
        self,
        converter: Converter,
        system_parts: Callable[[Message], list[Any]],
        messages: Sequence[Message],
        cache: ConversionCache,
        known: Lineage | None = None,
    ) -> None:
        """Convert and merge `messages`, resuming from the previous call's merge. `known`: the
        lineage of `messages` from the previous call's (see `Lineage`); then `messages` (its
        maker's own, never mutated) is kept as it is rather than copied."""
        sequence = messages if known is not None and known.sequence is messages else tuple(messages)
        shared = identical_prefix(self.messages, sequence, known)
        start, reuse = self._rewind(shared)
        self.messages = ()  # until the update is complete
        # A first update converts without the memo (nothing to reuse yet) and then memoises
        # only the messages of its last content, which the next update starts from.
        memo = bool(self.runs)
        convert = cache.convert
        model_content, user_content = converter.model_content, converter.user_content
        names, log, firsts, sizes, wires = self.names, self.log, self.firsts, self.sizes, self.wires
        # A merged content is memoised by its first content's parts for a later update that
        # converts through the memo; a first update's contents are not memoised (but for the
        # last content's, which `rewind` hands back anyway), so no later one could find it.
        merge = partial(_merged, reuse=reuse, cache=cache) if memo else _joined
        # The message at `start` opens a content: it opened one last time, after the same ones.
        group: list[Content] = []  # the content being merged (not yet in `sizes`)
        last_role = ""
        # A first update's conversions, one per message from `kept` on (the first message of
        # the content being merged): only those are memoised at the end, and holding the
        # others until then would keep them alive through the collector's passes.
        values: list[object] = []
        kept = start
        for index in range(start, len(sequence)):
            message = sequence[index]
            role = message["role"]
            content: Content | None
            value: object
            try:
                if role == "tool":
                    name = names.get(message["tool_call_id"]) or _call_name(message, names)
                    if memo:
                        named: _Named = convert(message, _Named)
                        if named.name != name:  # new, or the same object now answers another
                            named.name, named.content = name, converter.tool_content(message, name)
                        content, value = named.content, named
                    else:  # named when memoised, at the end
                        content = value = converter.tool_content(message, name)
                elif role == "assistant":
                    content = value = (
                        convert(message, model_content) if memo else model_content(message)
                    )
                    for call in message.get("tool_calls") or ():
                        call_id = call["id"]
                        log += (index, call_id, names.get(call_id, _MISSING))
                        names[call_id] = call["function"]["name"]
                elif role == "system":
                    parts = convert(message, system_parts) if memo else system_parts(message)
                    self.hoisted.extend(parts)
                    self.hoisted_at.extend([index] * len(parts))
                    content, value = None, parts
                else:
                    content = value = (
                        convert(message, user_content) if memo else user_content(message)
                    )
            except Unconvertible as exc:
                self._clear()  # start over next time
                raise CompileError(str(exc), index=index) from None
            if not memo:
                values.append(value)
            if content is None:
                continue
            if content["role"] == last_role:
                group.append(content)
                continue
            if group:  # `close`, inline: once per content
                sizes.append(len(group))
                wires.append(group[0] if len(group) == 1 else merge(group, firsts[-1]))
            group = [content]
            firsts.append(index)
            last_role = content["role"]
            if not memo:
                del values[: index - kept]
                kept = index
        if group:
            self.close(group, merge)
        if values and firsts:  # memoise the messages the next update starts from
            for message, value in zip(
                sequence[firsts[-1] :], values[firsts[-1] - kept :], strict=True
            ):
                if message["role"] == "tool":  # no call is made in a content's run of results:
                    named = _Named()  # every name is still the one its result was built with
                    named.name = names.get(message["tool_call_id"]) or message.get("name", "")
                    named.content, value = cast(Content, value), named
                cache.remember(message, value)
        self.messages = sequence
        self.runs += 1


def _merged(
    group: list[Content], first: int, reuse: dict[int, Content], cache: ConversionCache
) -> Content:
    """Same-role neighbours (the first from message `first`) as one content, the same object
    while its parts are the same objects (what memoises by identity, token counts and the cache
    ledger, then skips it): the content this update dropped there (`reuse`), else the cache's
    memo (by the first content's parts)."""
    prior = reuse.get(first)
    if prior is not None and same_items(prior, group, "parts"):
        return prior
    key = group[0]["parts"]
    wire: Content = cache.convert(key, _unmerged)
    if wire is _NO_WIRE or not same_items(wire, group, "parts"):
        parts = [part for content in group for part in content["parts"]]
        wire = {"parts": parts, "role": group[0]["role"]}
        cache.remember(key, wire)
    return wire


def _joined(group: list[Content], first: int) -> Content:
    """Same-role neighbours as one content, made anew."""
    return {
        "parts": [part for content in group for part in content["parts"]],
        "role": group[0]["role"],
    }


_NO_WIRE: Content = {}
"""The memo's answer for a first content no merged content starts with yet (never handed out)."""


def _unmerged(_: object) -> Content:
    return _NO_WIRE
