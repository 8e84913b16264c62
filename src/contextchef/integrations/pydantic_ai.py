"""pydantic-ai: a chef as a history processor, a `context` toolset, and a capability with both.

    agent = Agent(model, capabilities=[ContextChefCapability(chef)])

Before every model request the run's messages go through the chef: converted to the IR
(`to_ir`), given to the chef (pydantic-ai's leading system prompt as the chef's system prompt, the
rest as its history), compiled, and converted back. In pydantic-ai 2.x what a processor returns
*replaces* the run's messages, so what overflow evicted leaves the run for good: it is in the
chef's `archive/` namespace (with every part as pydantic-ai serialised it), long tool returns are
shortened to a preview whose full text is in `vfs/`, and the model reads both back with the
`context` tool the capability registers. Messages the chef kept come back as the very objects
pydantic-ai passed in; tool calls stay paired with their returns (overflow splits on turns).

What the chef adds for the model — the store instruction and the memory block after the system
prompt, the tail (live state, memory placed at the tail, notices) at the end — travels as
`SystemPromptPart`s marked with `metadata={"contextchef": ...}`: each request gets fresh ones and
the processor drops the old ones it finds, so they never pile up in the history.

Requires the `pydantic-ai` extra. Use one chef per conversation.
"""

from __future__ import annotations

import asyncio
import operator
import threading
from collections.abc import Callable, Sequence
from typing import Any

from contextchef.chef import AsyncContextChef, ContextChef
from contextchef.errors import ConfigError, MissingDependencyError
from contextchef.integrations._align import align
from contextchef.integrations._pydantic_ai_ir import from_ir, message_to_ir, to_ir
from contextchef.integrations._pydantic_ai_window import (
    MARKER,
    Entry,
    assemble,
    fresh_parts,
    is_marked,
    marked,
    rebuilt_part,
    same_window,
    tail_text,
)
from contextchef.messages import Message
from contextchef.payload import Payload
from contextchef.retrieval.definitions import get_context_tool_definition

try:
    from pydantic_ai import messages as pm
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.tools import RunContext, Tool
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as exc:  # pragma: no cover - exercised by simulating the missing extra
    raise MissingDependencyError(exc.name or "pydantic-ai", "pydantic-ai") from exc

__all__ = [
    "MARKER",
    "ContextChefCapability",
    "HistoryProcessor",
    "context_toolset",
    "from_ir",
    "history_processor",
    "to_ir",
]


Chef = ContextChef | AsyncContextChef
_Origin = tuple[pm.ModelMessage, int]


class HistoryProcessor:
    """Runs pydantic-ai messages through a chef (see the module docstring).

    Call it with the run's messages (sync for a `ContextChef`, awaited for an
    `AsyncContextChef`), or hand it to `ProcessHistory`. `last_payload` is the chef's compile of
    the latest window (its `meta` holds the token figures and what overflow did).
    """

    def __init__(self, chef: Chef) -> None:
        if not isinstance(chef, ContextChef | AsyncContextChef):
            raise ConfigError(
                "history_processor() takes a ContextChef or an AsyncContextChef, "
                f"not {type(chef).__name__}"
            )
        self.chef = chef
        self.last_payload: Payload | None = None
        self._memo: dict[int, tuple[pm.ModelMessage, list[Message]]] = {}
        self._last_input: list[pm.ModelMessage] = []
        self._cuts: list[tuple[int, int, bool]] = []
        self._system: list[Message] = []
        self._history: list[Message] = []
        self._origins: list[_Origin] = []
        self._marks: dict[str, pm.SystemPromptPart] = {}
        self._capturing = False
        self._before: list[Message] = []
        self._after: list[Message] = []
        self._assembled: list[Message] = []
        self._sync_lock = threading.Lock()
        self._async_lock: asyncio.Lock | None = None
        chef.use("before_overflow", self._on_before_overflow)
        chef.use("after_overflow", self._on_after_overflow)
        chef.use("before_adapt", self._on_before_adapt)

    # -- slot handlers: what the chef's compile saw, read only while this processor runs ------

    def _on_before_overflow(self, history: list[Message]) -> None:
        if self._capturing:
            self._before = history

    def _on_after_overflow(self, history: list[Message], _report: object) -> None:
        if self._capturing:
            self._after = history

    def _on_before_adapt(self, messages: Sequence[Message]) -> None:
        if self._capturing:
            self._assembled = list(messages)

    # -- the processor ---------------------------------------------------------------------

    def __call__(self, messages: list[pm.ModelMessage]) -> Any:
        if isinstance(self.chef, AsyncContextChef):
            return self.aprocess(messages)
        return self.process(messages)

    def process(self, messages: list[pm.ModelMessage]) -> list[pm.ModelMessage]:
        """The window for `messages`, with a `ContextChef`."""
        chef = self.chef
        if not isinstance(chef, ContextChef):
            raise ConfigError("use `await processor.aprocess(...)` with an AsyncContextChef")
        with self._sync_lock:
            system, history, origins = self._intake(messages)
            chef.set_system_prompt(system).set_history(history)
            self._capturing = True
            try:
                payload = chef.compile(target="openai")
            finally:
                self._capturing = False
            return self._window(messages, system, history, origins, payload)

    async def aprocess(self, messages: list[pm.ModelMessage]) -> list[pm.ModelMessage]:
        """The window for `messages`, with an `AsyncContextChef` (or a `ContextChef`)."""
        chef = self.chef
        if isinstance(chef, ContextChef):
            return await asyncio.to_thread(self.process, messages)
        if self._async_lock is None:
            self._async_lock = asyncio.Lock()
        async with self._async_lock:
            system, history, origins = self._intake(messages)
            chef.set_system_prompt(system).set_history(history)
            self._capturing = True
            try:
                payload = await chef.compile(target="openai")
            finally:
                self._capturing = False
            return self._window(messages, system, history, origins, payload)

    def _converted(self, message: pm.ModelMessage) -> list[Message]:
        """`message_to_ir`, memoised by identity: pydantic-ai hands the same objects every step."""
        entry = self._memo.get(id(message))
        if entry is None or entry[0] is not message:
            entry = self._memo[id(message)] = (message, message_to_ir(message))
        return entry[1]

    def _intake(
        self, messages: Sequence[pm.ModelMessage]
    ) -> tuple[list[Message], list[Message], list[_Origin]]:
        """The chef's system prompt and history for `messages`, and where each history message
        came from (the pydantic-ai message and part index). Parts this processor added earlier
        are dropped; the leading system prompt parts become the system prompt.

        Incremental: the messages shared (by identity) with the previous call's start keep
        what was worked out for them; only the rest is looked at."""
        last = self._last_input
        shared, limit = 0, min(len(last), len(messages))
        while shared < limit and messages[shared] is last[shared]:
            shared += 1
        system_count, history_count, leading = self._cuts[shared] if shared else (0, 0, True)
        system, history, origins = self._system, self._history, self._origins
        del system[system_count:], history[history_count:], origins[history_count:]
        del self._cuts[shared + 1 :]
        self._marks = {}
        for part in (
            messages[0].parts if shared and isinstance(messages[0], pm.ModelRequest) else ()
        ):
            if isinstance(part, pm.SystemPromptPart) and is_marked(part):
                self._marks[str((part.metadata or {})[MARKER])] = part
        for message in messages[shared:]:
            if not self._cuts:
                self._cuts.append((0, 0, True))
            converted = self._converted(message)
            if isinstance(message, pm.ModelResponse):
                leading = False
                history.append(converted[0])
                origins.append((message, 0))
            else:
                for index, (part, ir) in enumerate(zip(message.parts, converted, strict=True)):
                    if isinstance(part, pm.SystemPromptPart) and is_marked(part):
                        self._marks[str((part.metadata or {})[MARKER])] = part
                    elif leading and isinstance(part, pm.SystemPromptPart):
                        system.append(ir)
                    else:
                        leading = False
                        history.append(ir)
                        origins.append((message, index))
            self._cuts.append((len(system), len(history), leading))
        self._last_input = list(messages)
        if len(self._memo) > 2 * len(messages) + 64:  # forget messages no longer passed
            self._memo = {id(m): self._memo[id(m)] for m in messages if id(m) in self._memo}
        return list(system), list(history), list(origins)

    def _window(
        self,
        messages: Sequence[pm.ModelMessage],
        system: list[Message],
        history: list[Message],
        origins: list[_Origin],
        payload: Payload,
    ) -> list[pm.ModelMessage]:
        """The compiled window as pydantic-ai messages (see the module docstring)."""
        self.last_payload = payload
        before, after = self._before, self._after
        text = self._top_layer(payload, len(system), after)
        top = marked(text, "context", self._marks) if text else None
        text = tail_text(after, self._assembled, payload.meta.tail_index)
        tail = marked(text, "tail", self._marks, scope="request") if text else None
        if len(after) == len(before) == len(history) and all(map(operator.is_, after, before)):
            patches: dict[int, dict[int, Any]] = {}  # overflow kept everything: patch in place
            for at, message in enumerate(before):
                if message.get("content") != history[at].get("content"):
                    origin, index = origins[at]
                    changed = (
                        from_ir([message])[0]
                        if index == 0 and isinstance(origin, pm.ModelResponse)
                        else rebuilt_part(message)
                    )
                    patches.setdefault(id(origin), {})[index] = changed
            return same_window(messages, patches, top, tail)
        return assemble(self._entries(messages, history, origins, top, tail))

    def _entries(
        self,
        messages: Sequence[pm.ModelMessage],
        history: list[Message],
        origins: list[_Origin],
        top: pm.SystemPromptPart | None,
        tail: pm.SystemPromptPart | None,
    ) -> list[Entry]:
        """The window's pieces when overflow changed the history."""
        before, after = self._before, self._after
        position = align(before, history)
        entries: list[Entry] = []
        first = messages[0] if messages and isinstance(messages[0], pm.ModelRequest) else None
        if first is not None:
            for index, part in enumerate(first.parts[: self._leading_count(first)]):
                if not is_marked(part):
                    entries.append((first, index, part))
        if top is not None:
            entries.append((None, -1, top))
        for message in after:
            at = position.get(id(message))
            if at is None:
                entries.extend((None, -1, item) for item in fresh_parts(message))
                continue
            origin, index = origins[at]
            changed = message.get("content") != history[at].get("content")
            if isinstance(origin, pm.ModelResponse):
                entries.append((origin, 0, from_ir([message])[0] if changed else origin))
            elif changed:
                entries.append((origin, index, rebuilt_part(message)))
            else:
                entries.append((origin, index, origin.parts[index]))
        if tail is not None:
            entries.append((None, -1, tail))
        return entries

    @staticmethod
    def _leading_count(request: pm.ModelRequest) -> int:
        count = 0
        for part in request.parts:
            if not isinstance(part, pm.SystemPromptPart):
                break
            count += 1
        return count

    @staticmethod
    def _top_layer(payload: Payload, system_count: int, history: Sequence[Message]) -> str:
        """The system messages the chef placed after the system prompt (store instruction,
        memory block), as one text."""
        sent = payload.get("messages") or []
        lead = 0
        while lead < len(sent) and sent[lead].get("role") == "system":
            lead += 1
        own = 0
        while own < len(history) and history[own]["role"] == "system":
            own += 1
        layer = sent[system_count : max(system_count, lead - own)]
        return "\n\n".join(str(message.get("content") or "") for message in layer)


def history_processor(chef: Chef) -> HistoryProcessor:
    """A pydantic-ai history processor over `chef`: `capabilities=[ProcessHistory(it)]`.

    Give the agent the chef's `context` tool too (`context_toolset(chef)`), or use
    `ContextChefCapability(chef)`, which does both.
    """
    return HistoryProcessor(chef)


def context_toolset(chef: Chef) -> FunctionToolset[Any]:
    """The chef's `context` tool as a pydantic-ai toolset: the model reads the archive, the
    offloaded outputs, its notes and memory through it; calls go to `chef.handle_tool`."""
    definition = get_context_tool_definition()
    name = definition["name"]

    if isinstance(chef, AsyncContextChef):
        achef = chef

        async def call(**arguments: Any) -> str:
            return await achef.handle_tool(name, arguments)

        function: Callable[..., Any] = call
    else:
        schef = chef

        def call_sync(**arguments: Any) -> str:
            return schef.handle_tool(name, arguments)

        function = call_sync
    tool: Tool[Any] = Tool.from_schema(
        function, name, definition["description"], dict(definition["parameters"])
    )
    return FunctionToolset([tool])


class ContextChefCapability(AbstractCapability[Any]):
    """Everything in one capability: the history processor and the `context` toolset.

    `Agent(model, capabilities=[ContextChefCapability(chef)])`.
    """

    def __init__(self, chef: Chef) -> None:
        self.chef = chef
        self.processor = HistoryProcessor(chef)
        self._toolset = context_toolset(chef)

    def get_toolset(self) -> FunctionToolset[Any]:
        return self._toolset

    async def before_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        messages = await self.processor.aprocess(list(request_context.messages))
        request_context.messages = messages.copy()
        ctx.messages[:] = messages
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None
