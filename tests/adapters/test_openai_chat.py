"""The `openai` (Chat Completions) target, checked against the openai SDK's request types."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from pydantic import ValidationError

from contextchef import prompts
from contextchef.adapters import ConversionCache, OpenAIChatAdapter
from contextchef.messages import Message
from tests.adapters.samples import (
    CHAT_RESPONSE,
    DOC_DATA,
    IMAGE_DATA,
    PDF,
    PNG,
    TOOLS,
    CountingCache,
    attachment_history,
    is_key_sorted,
    parallel_history,
    request,
)
from tests.adapters.sdk_openai import MODEL, PayloadMismatch, validate_chat
from tests.loopback import loopback_server

ADAPTER = OpenAIChatAdapter()


def compile_valid(messages: list[Message], **kwargs: Any) -> dict[str, Any]:
    payload = ADAPTER.compile(request(messages, **kwargs))
    validate_chat(payload)
    assert is_key_sorted(payload)
    return payload


def test_parallel_calls_validate_and_keep_their_results() -> None:
    messages = compile_valid(parallel_history(), tools=TOOLS)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["c1", "c2"]


def test_attachments_become_image_url_and_file_parts() -> None:
    parts = compile_valid(attachment_history())["messages"][1]["content"]
    assert parts[1] == {"image_url": {"url": f"data:image/png;base64,{PNG}"}, "type": "image_url"}
    assert parts[2] == {"image_url": {"url": "https://example.com/cat.jpg"}, "type": "image_url"}
    assert parts[3] == {
        "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "spec.pdf"},
        "type": "file",
    }
    assert parts[4] == {"text": "[document: https://example.com/a.pdf]", "type": "text"}


def test_prefill_keeps_the_attachments_of_the_last_user_message() -> None:
    history: list[Message] = [
        {"content": [{"text": "Read this.", "type": "text"}, DOC_DATA, IMAGE_DATA], "role": "user"}
    ]
    content = compile_valid(history, prefill="Summary:")["messages"][-1]["content"]
    assert [p["type"] for p in content] == ["text", "file", "image_url", "text"]
    assert content[-1]["text"] == prompts.prefill_instruction("Summary:")


def test_mid_history_system_messages_stay_in_place() -> None:
    history: list[Message] = [
        {"content": "hi", "role": "user"},
        {"content": "note", "role": "system"},
        {"content": "go on", "role": "user"},
    ]
    messages = compile_valid(history)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "system", "user"]


def test_an_empty_cache_is_used_from_the_first_compile() -> None:
    cache = CountingCache()
    assert bool(ConversionCache())
    history = parallel_history()
    first = ADAPTER.compile(request(history, cache=cache))
    before = cache.misses
    history.append({"content": "next", "role": "user"})
    second = ADAPTER.compile(request(history, cache=cache))
    assert cache.misses == before + 1
    assert second["messages"][2] is first["messages"][2]


def test_validator_walks_lazy_iterables_and_catches_dropped_keys() -> None:
    good = ADAPTER.compile(request(parallel_history(), tools=TOOLS))
    validate_chat(good)
    nested = json.loads(json.dumps(good))
    nested["messages"][2]["tool_calls"][0]["type"] = "not-a-type"  # inside Iterable fields
    with pytest.raises(ValidationError):
        validate_chat(nested)
    typo = json.loads(json.dumps(good))
    typo["messages"][3]["tool_call_idd"] = "c1"
    with pytest.raises(PayloadMismatch, match=r"tool_call_idd was dropped"):
        validate_chat(typo)
    bad_part = json.loads(json.dumps(good))
    bad_part["messages"][1]["content"] = [{"type": "image", "data": PNG}]
    with pytest.raises(ValidationError):
        validate_chat(bad_part)


def test_the_sdk_sends_the_compiled_payload() -> None:
    payload = compile_valid([*parallel_history(), *attachment_history()], tools=TOOLS)
    with loopback_server(CHAT_RESPONSE) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="test")
        completion = client.chat.completions.create(model=MODEL, **payload)
        body = server.last_body
        path = server.requests[-1].path
    assert completion.choices[0].message.content == "ok"
    assert path == "/v1/chat/completions"
    assert body == {"model": MODEL, **payload}
