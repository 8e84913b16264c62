"""Property: any valid IR history compiles, on `openai`, `openai-responses` and `gemini`, to a
payload the official SDK types accept, with every tool call paired with its result."""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextchef import ensure_valid_history
from contextchef.adapters import GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter
from contextchef.messages import Message, validate_history
from tests.adapters.samples import TOOLS, is_key_sorted, request
from tests.adapters.sdk_gemini import validate_gemini
from tests.adapters.sdk_openai import validate_chat, validate_responses

texts = st.text(max_size=12)
signatures = st.binary(min_size=1, max_size=8).map(lambda b: base64.b64encode(b).decode())
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def attachments(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["image", "document"]))
    media_type = "image/png" if kind == "image" else "application/pdf"
    part: dict[str, Any] = {"media_type": media_type, "type": kind}
    if draw(st.booleans()):
        part["data"] = base64.b64encode(draw(st.binary(max_size=6))).decode()
    else:
        part["url"] = f"https://example.com/{draw(st.integers(0, 9))}"
    return part


contents = texts | st.lists(
    texts.map(lambda t: {"text": t, "type": "text"}) | attachments(), min_size=1, max_size=3
)


def reasoning(item_id: int) -> dict[str, Any]:
    return {"id": f"rs_{item_id}", "summary": [], "type": "reasoning"}


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """A history that may miss tool results, repaired the way the chef repairs it."""
    history: list[Message] = [{"content": draw(contents), "role": "user"}]
    serial = 0
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "system"]))
        if kind in ("user", "system"):
            content = draw(contents) if kind == "user" else draw(texts)
            history.append({"content": content, "role": kind})
            continue
        serial += 1
        message: Message = {"content": draw(texts), "role": "assistant"}
        if draw(st.booleans()):
            message["gemini_thought_signature"] = draw(signatures)
        if draw(st.booleans()):
            message["openai_reasoning"] = [reasoning(serial)]
        if kind == "assistant":
            message["content"] = draw(texts.filter(bool))
            history.append(message)
            continue
        calls = []
        for at in range(draw(st.integers(1, 3))):
            args = draw(st.dictionaries(texts, json_values, max_size=3))
            tool_call: Any = {
                "function": {
                    "arguments": json.dumps(args),
                    "name": draw(st.sampled_from(["read", "ls"])),
                },
                "id": f"call_{serial}_{at}",
                "type": "function",
            }
            if draw(st.booleans()):
                tool_call["gemini_thought_signature"] = draw(signatures)
            calls.append(tool_call)
        message["tool_calls"] = calls
        history.append(message)
        # results for any subset of the calls, in any order; the repair pass fills the gaps,
        # moves a system note that interrupts them, and drops a result that comes twice
        answered: list[Any] = draw(st.lists(st.sampled_from(calls), unique_by=lambda c: c["id"]))
        if draw(st.booleans()):
            answered.insert(draw(st.integers(0, len(answered))), None)
        if answered and answered[0] is not None and draw(st.integers(0, 3)) == 0:
            answered.append(answered[0])
        for tool_call in answered:
            if tool_call is None:
                history.append({"content": draw(texts), "role": "system"})
                continue
            result = draw(
                texts
                | json_values.map(json.dumps)
                | st.lists(attachments(), min_size=1, max_size=2)
            )
            history.append({"content": result, "role": "tool", "tool_call_id": tool_call["id"]})
    repaired, _ = ensure_valid_history(validate_history(history))
    return repaired


def assert_chat_pairs(payload: dict[str, Any]) -> None:
    messages = payload["messages"]
    for at, message in enumerate(messages):
        if message["role"] == "assistant" and message.get("tool_calls"):
            wanted = [c["id"] for c in message["tool_calls"]]
            following = []
            for later in messages[at + 1 :]:
                if later["role"] != "tool":
                    break
                following.append(later["tool_call_id"])
            assert sorted(following) == sorted(wanted)


def assert_responses_pairs(payload: dict[str, Any]) -> None:
    items = payload["input"]
    calls = [(at, i["call_id"]) for at, i in enumerate(items) if i["type"] == "function_call"]
    outputs = [
        (at, i["call_id"]) for at, i in enumerate(items) if i["type"] == "function_call_output"
    ]
    assert Counter(c for _, c in calls) == Counter(c for _, c in outputs)
    assert all(Counter(c for _, c in calls)[c] == 1 for _, c in calls)
    positions = {call_id: at for at, call_id in calls}
    assert all(at > positions[c] for at, c in outputs)
    for at, item in enumerate(items):
        if item["type"] == "reasoning":
            assert items[at + 1]["type"] in ("reasoning", "message", "function_call")


def assert_gemini_pairs(payload: dict[str, Any]) -> None:
    contents = payload["contents"]
    for at, content in enumerate(contents):
        calls = [p["function_call"] for p in content["parts"] if "function_call" in p]
        if not calls:
            continue
        answers = [
            p["function_response"] for p in contents[at + 1]["parts"] if "function_response" in p
        ]
        assert sorted((c["id"], c["name"]) for c in calls) == sorted(
            (r["id"], r["name"]) for r in answers
        )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories(), prefill=st.none() | texts, with_tools=st.booleans())
def test_random_histories_compile_to_valid_paired_payloads(
    history: list[Message], prefill: str | None, with_tools: bool
) -> None:
    tools = TOOLS if with_tools else ()
    req = request(history, tools=tools, prefill=prefill)
    chat = OpenAIChatAdapter().compile(req)
    validate_chat(chat)
    assert_chat_pairs(chat)
    responses = OpenAIResponsesAdapter().compile(req)
    validate_responses(responses)
    assert_responses_pairs(responses)
    gemini = GeminiAdapter().compile(req)
    validate_gemini(gemini)
    assert_gemini_pairs(gemini)
    assert all(is_key_sorted(p) for p in (chat, responses, gemini))
