"""Incremental compiles equal from-scratch ones, on every target (a hypothesis state machine).

Each adapter keeps state between compiles in the chef's `ConversionCache` (converted messages,
merged turns, flat items) and resumes after the prefix a history shares with the previous one.
Whatever the host does between compiles — append, edit or replace an old message, truncate,
insert in the middle, reload the whole history as fresh dicts, move breakpoints, change the
system prompt, tools or prefill — the payload must be exactly the one a fresh cache gives, with
the same bytes, or fail with the same error; and no payload handed out earlier may change.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from contextchef._jsonvalue import sorted_keys
from contextchef.adapters import (
    AdapterInput,
    AnthropicAdapter,
    ConversionCache,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    TargetAdapter,
    normalize_tools,
)
from contextchef.messages import Message
from contextchef.placement.breakpoints import AUTO_MARK

texts = st.one_of(st.sampled_from(["", " ", "done \n", '{"k": [1, 2]}']), st.text(max_size=8))
call_ids = st.sampled_from(["c1", "c2", "c3", "bad id!", "gemini-call-read-1"])
arguments = st.one_of(
    st.dictionaries(
        st.text(max_size=3),
        st.one_of(st.integers(-5, 5), st.text(max_size=3), st.booleans(), st.none()),
        max_size=3,
    ).map(json.dumps),
    st.sampled_from(["", "  ", '{"b": 1, "a": {"d": 2, "c": 3}}', "[1]", "{bad", "1e999"]),
)
parts = st.one_of(
    st.builds(lambda t: {"text": t, "type": "text"}, texts),
    st.just({"data": "iVBOR", "media_type": "image/png", "type": "image"}),
    st.just({"type": "image", "url": "https://x.test/i.png"}),
    st.just(
        {"data": "JVBER", "filename": "f.pdf", "media_type": "application/pdf", "type": "document"}
    ),
)
contents = st.one_of(st.none(), texts, st.lists(parts, max_size=2))
calls = st.lists(
    st.builds(
        lambda i, name, args: {
            "function": {"arguments": args, "name": name},
            "id": i,
            "type": "function",
        },
        call_ids,
        st.sampled_from(["read", "write"]),
        arguments,
    ),
    max_size=2,
)


@st.composite
def messages(draw: st.DrawFn) -> Message:
    role = draw(st.sampled_from(["user", "user", "assistant", "assistant", "tool", "system"]))
    message: dict[str, Any] = {"role": role}
    if role == "tool":
        message["tool_call_id"] = draw(call_ids)
        message["content"] = draw(st.one_of(texts, st.lists(parts, max_size=2)))
    elif role == "system":
        message["content"] = draw(texts)
    else:
        message["content"] = draw(contents)
    if role == "assistant":
        if tool_calls := draw(calls):
            message["tool_calls"] = tool_calls
        if draw(st.integers(0, 3)) == 0:
            message["thinking"] = {"signature": "sig", "thinking": draw(texts)}
    mark = draw(st.integers(0, 5))
    if mark == 0:
        message["_cache_breakpoint"] = True
    elif mark == 1:
        message[AUTO_MARK] = True
    return sorted_keys(message)  # type: ignore[no-any-return]


TOOLS = normalize_tools(
    [
        {"name": "read", "description": "Read a file.", "parameters": {"type": "object"}},
        {
            "name": "write",
            "parameters": {"type": "object", "properties": {"p": {"type": "string"}}},
        },
    ]
)
systems = st.lists(
    st.builds(lambda t: sorted_keys({"content": t, "role": "system"}), texts), max_size=2
)


def outcome(adapter: TargetAdapter, request: AdapterInput) -> tuple[str, Any]:
    """The payload and its bytes, or the error's type, message and index."""
    try:
        payload = adapter.compile(request)
    except Exception as exc:  # the error itself is what is compared
        return "error", (type(exc).__name__, str(exc), getattr(exc, "index", None))
    return json.dumps(payload, sort_keys=False), payload


class IncrementalCompile(RuleBasedStateMachine):
    adapter: TargetAdapter

    def __init__(self) -> None:
        super().__init__()
        self.cache = ConversionCache()
        self.history: list[Message] = []
        self.system: list[Message] = []
        self.tools: tuple[Any, ...] = ()
        self.prefill: str | None = None
        self.max_breakpoints: int | None = None
        self.handed_out: list[tuple[dict[str, Any], str]] = []

    @initialize(history=st.lists(messages(), max_size=8))
    def start(self, history: list[Message]) -> None:
        self.history = history

    @rule(new=st.lists(messages(), min_size=1, max_size=3))
    def append(self, new: list[Message]) -> None:
        self.history.extend(new)

    @rule(data=st.data(), message=messages())
    def replace_one(self, data: st.DataObject, message: Message) -> None:
        if self.history:
            self.history[data.draw(st.integers(0, len(self.history) - 1))] = message

    @rule(data=st.data())
    def copy_one(self, data: st.DataObject) -> None:
        if self.history:
            at = data.draw(st.integers(0, len(self.history) - 1))
            self.history[at] = copy.deepcopy(self.history[at])

    @rule(data=st.data())
    def move_breakpoint(self, data: st.DataObject) -> None:
        if self.history:
            at = data.draw(st.integers(0, len(self.history) - 1))
            flag = data.draw(st.sampled_from(["_cache_breakpoint", AUTO_MARK]))
            message = dict(self.history[at])
            if message.pop(flag, None) is None:
                message[flag] = True
            self.history[at] = sorted_keys(message)

    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        del self.history[data.draw(st.integers(0, len(self.history))) :]

    @rule(data=st.data(), new=st.lists(messages(), min_size=1, max_size=2))
    def insert(self, data: st.DataObject, new: list[Message]) -> None:
        at = data.draw(st.integers(0, len(self.history)))
        self.history[at:at] = new

    @rule()
    def reload(self) -> None:
        self.history = copy.deepcopy(self.history)

    @rule(system=systems)
    def set_system(self, system: list[Message]) -> None:
        self.system = system

    @rule(tools=st.sampled_from([(), tuple(TOOLS), tuple(TOOLS[:1])]))
    def set_tools(self, tools: tuple[Any, ...]) -> None:
        self.tools = tools

    @rule(prefill=st.one_of(st.none(), texts))
    def set_prefill(self, prefill: str | None) -> None:
        self.prefill = prefill

    @rule(budget=st.one_of(st.none(), st.integers(0, 4)))
    def set_breakpoint_budget(self, budget: int | None) -> None:
        self.max_breakpoints = budget

    def request(self, cache: ConversionCache) -> AdapterInput:
        return AdapterInput(
            system=tuple(self.system),
            messages=tuple(self.history),
            tools=self.tools,
            prefill=self.prefill,
            cache=cache,
            max_breakpoints=self.max_breakpoints,
        )

    @invariant()
    def compiles_like_a_fresh_cache(self) -> None:
        incremental = outcome(self.adapter, self.request(self.cache))
        fresh = outcome(self.adapter, self.request(ConversionCache()))
        assert incremental[0] == fresh[0]
        assert incremental[1] == fresh[1]
        if incremental[0] != "error":
            self.handed_out.append((incremental[1], incremental[0]))

    @invariant()
    def payloads_handed_out_never_change(self) -> None:
        for payload, sent in self.handed_out:
            assert json.dumps(payload, sort_keys=False) == sent


def machine(adapter: TargetAdapter) -> Any:
    cls = type(f"Incremental_{adapter.name}", (IncrementalCompile,), {"adapter": adapter})
    cls.TestCase.settings = settings(
        max_examples=40,
        stateful_step_count=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    return cls.TestCase


TestOpenAIChat = machine(OpenAIChatAdapter())
TestOpenAIResponses = machine(OpenAIResponsesAdapter())
TestAnthropic = machine(AnthropicAdapter())
TestGemini = machine(GeminiAdapter())
TestGeminiWithoutCallIds = machine(GeminiAdapter(send_call_ids=False))
