"""Properties of the `anthropic` target over random valid histories (hypothesis)."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef.adapters import AdapterInput, AnthropicAdapter, from_anthropic
from contextchef.messages import Message, validate_history
from tests.adapters.sdk_anthropic import validate_request

texts = st.one_of(st.sampled_from(["", " ", "\n\t"]), st.text(max_size=24))
attachments = st.one_of(
    st.builds(
        lambda t: {"type": "image", "media_type": t, "data": "iVBOR"},
        st.sampled_from(["image/png", "image/jpeg"]),
    ),
    st.just({"type": "image", "url": "https://x.test/i.png"}),
    st.just(
        {"type": "document", "media_type": "application/pdf", "data": "JVBER", "filename": "f.pdf"}
    ),
    st.builds(
        lambda t: {"type": "document", "media_type": "text/plain", "text": t}, st.text(max_size=10)
    ),
)
contents = st.one_of(
    texts,
    st.lists(
        st.one_of(st.builds(lambda t: {"type": "text", "text": t}, texts), attachments), max_size=3
    ),
)
thinking = st.one_of(
    st.none(),
    st.builds(
        lambda t, s: {"thinking": t, "signature": s},
        st.text(max_size=12),
        st.text(min_size=1, max_size=6),
    ),
    st.builds(lambda t: {"thinking": t}, st.text(max_size=12)),
)
arguments = st.dictionaries(
    st.text(max_size=4), st.one_of(st.integers(), st.text(max_size=4), st.booleans()), max_size=3
)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    history: list[Message] = []
    next_id = 0
    for _ in range(draw(st.integers(1, 6))):
        history.append({"role": "user", "content": draw(contents)})
        kind = draw(st.sampled_from(["text", "tools", "silent"]))
        if kind == "silent":
            continue
        assistant: Message = {"role": "assistant", "content": draw(st.one_of(st.none(), texts))}
        if (reasoning := draw(thinking)) is not None:
            assistant["thinking"] = reasoning
        if draw(st.booleans()):
            assistant["redacted_thinking"] = [{"data": "enc"}]
        if kind == "text":
            history.append(assistant)
            continue
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            next_id += 1
            function = {"name": "tool", "arguments": json.dumps(draw(arguments))}
            calls.append({"id": f"call_{next_id}", "type": "function", "function": function})
        assistant["tool_calls"] = calls  # type: ignore[typeddict-item]
        history.append(assistant)
        for call in draw(st.permutations(calls)):
            history.append({"role": "tool", "tool_call_id": call["id"], "content": draw(contents)})
    if draw(st.booleans()):
        at = draw(st.integers(0, len(history)))
        history.insert(at, {"role": "system", "content": draw(texts)})
    for message in history:
        if draw(st.integers(0, 3)) == 0:
            message["_cache_breakpoint"] = True
    return validate_history(history)


def _check_shape(payload: dict[str, Any]) -> None:
    messages = payload["messages"]
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    assert not roles or roles[0] == "user"
    marks = sum("cache_control" in b for b in payload.get("system", []))
    for at, message in enumerate(messages):
        blocks = message["content"]
        assert blocks
        marks += sum("cache_control" in b for b in blocks)
        for block in blocks:
            assert block["type"] != "text" or block["text"].strip()
        uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if uses:
            following = messages[at + 1]["content"]
            assert sorted(uses) == sorted(
                b["tool_use_id"] for b in following if b["type"] == "tool_result"
            )
        if results:
            previous = messages[at - 1]["content"]
            assert sorted(results) == sorted(b["id"] for b in previous if b["type"] == "tool_use")
    assert marks <= 4
    assert json.dumps(payload) == json.dumps(payload, sort_keys=True)


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


@settings(max_examples=150, deadline=None)
@given(histories(), st.one_of(st.none(), texts))
def test_random_histories_compile_to_valid_paired_payloads(
    history: list[Message], prefill: str | None
) -> None:
    system: list[Message] = [{"role": "system", "content": "Top.", "_cache_breakpoint": True}]
    payload = AnthropicAdapter().compile(AdapterInput(system, history, prefill=prefill))
    validate_request(payload)
    _check_shape(payload)


@settings(max_examples=100, deadline=None)
@given(histories())
def test_importing_a_compiled_payload_compiles_back_to_it(history: list[Message]) -> None:
    adapter = AnthropicAdapter()
    payload = adapter.compile(AdapterInput([], history))
    imported = from_anthropic(payload["messages"], system=payload.get("system"))
    assert imported.fixes == []
    again = adapter.compile(AdapterInput(imported.system, imported.history))
    assert _without_cache_control(again) == _without_cache_control(payload)
