"""The `anthropic` payload against the real SDK: its request types and its HTTP client."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from contextchef.adapters import AdapterInput, AnthropicAdapter
from contextchef.messages import Message
from tests.adapters.sdk_anthropic import MAX_TOKENS, MODEL, compile_anthropic, validate_request
from tests.loopback import loopback_server

CANNED_REPLY = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [{"type": "text", "text": "Done."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 12, "output_tokens": 2},
}

GOOD: dict[str, Any] = {
    "messages": [{"content": [{"text": "hi", "type": "text"}], "role": "user"}],
    "system": [{"text": "s", "type": "text"}],
}


def _rich_history() -> list[Message]:
    return [
        {"role": "user", "content": "Plan the trip.", "_cache_breakpoint": True},
        {
            "role": "assistant",
            "content": "Looking up flights.",
            "thinking": {"thinking": "two lookups", "signature": "sig"},
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "t2", "type": "function", "function": {"name": "g", "arguments": '{"x":1}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "none"},
        {"role": "tool", "tool_call_id": "t2", "content": "two", "_cache_breakpoint": True},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "and this"},
                {"type": "image", "media_type": "image/png", "data": "iVBOR"},
            ],
        },
    ]


def test_the_real_client_sends_the_payload_unchanged() -> None:
    payload = compile_anthropic(
        _rich_history(),
        system=[{"role": "system", "content": "You plan trips.", "_cache_breakpoint": True}],
        tools=[
            {"name": "f", "description": "d", "parameters": {"properties": {}, "type": "object"}}
        ],
        prefill="Here",
    )
    with loopback_server(CANNED_REPLY) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0)
        reply = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, **payload)
    assert reply.content[0].type == "text"
    assert server.requests[-1].path == "/v1/messages"
    assert server.last_body == {"max_tokens": MAX_TOKENS, "model": MODEL, **payload}


@pytest.mark.parametrize(
    "bad",
    [
        {"messages": [{"content": "hi", "role": "tool"}]},
        {"messages": [{"content": [{"type": "text"}], "role": "user"}]},
        {
            "messages": [
                {
                    "content": [{"id": "a", "input": "{}", "name": "n", "type": "tool_use"}],
                    "role": "assistant",
                }
            ]
        },
        {"messages": [{"content": [{"text": "x", "type": "text", "cache": True}], "role": "user"}]},
        {"messages": [], "system": [{"text": "s", "type": "txt"}]},
    ],
)
def test_the_sdk_check_rejects_a_bad_payload(bad: dict[str, Any]) -> None:
    validate_request(GOOD)
    with pytest.raises(ValueError):
        validate_request(bad)


def test_compaction_blocks_go_back_first_and_pass_the_beta_types() -> None:
    compaction = {"content": "Earlier: planned Oslo.", "type": "compaction", "signature": "c-sig"}
    history: list[Message] = [
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": "ok", "anthropic_compaction": compaction, "pinned": True},
        {"role": "user", "content": "next"},
    ]
    payload = AnthropicAdapter().compile(AdapterInput([], history))
    validate_request(payload, beta=True)
    assert payload["messages"][1]["content"] == [
        {"content": "Earlier: planned Oslo.", "signature": "c-sig", "type": "compaction"},
        {"text": "ok", "type": "text"},
    ]
    with pytest.raises(ValueError):
        validate_request(payload)
