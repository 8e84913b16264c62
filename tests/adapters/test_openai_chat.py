"""The `openai` (Chat Completions) target, checked against the openai SDK's request types."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from pydantic import ValidationError

from contextchef import prompts
from contextchef.adapters import ConversionCache, OpenAIChatAdapter
from contextchef.messages import Message
from tests.adapters.samples import (
    CHAT_RESPONSE,
    DELETE,
    DOC_DATA,
    IMAGE_DATA,
    PDF,
    PNG,
    TOOLS,
    CountingCache,
    altered,
    attachment_history,
    compile_checked,
    parallel_history,
    request,
    through_openai,
)
from tests.adapters.sdk_openai import MODEL, PayloadMismatch, validate_chat

ADAPTER = OpenAIChatAdapter()


compile_valid = partial(compile_checked, ADAPTER, validate_chat)


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


@pytest.mark.parametrize(
    ("path", "value", "error", "match"),
    [
        (("messages", 2, "tool_calls", 0, "type"), "not-a-type", ValidationError, "not-a-type"),
        (("messages", 3, "tool_call_idd"), "c1", PayloadMismatch, "tool_call_idd was dropped"),
        (("messages", 1, "content"), [{"data": PNG, "type": "image"}], ValidationError, "image"),
        (("tools", 0, "function", "name"), DELETE, ValidationError, "name"),
    ],
)
def test_validator_walks_lazy_iterables_and_catches_dropped_keys(
    path: tuple[str | int, ...], value: Any, error: type[Exception], match: str
) -> None:
    good = ADAPTER.compile(request(parallel_history(), tools=TOOLS))
    validate_chat(good)
    with pytest.raises(error, match=match):
        validate_chat(altered(good, path, value))


def test_the_sdk_sends_the_compiled_payload() -> None:
    payload = compile_valid([*parallel_history(), *attachment_history()], tools=TOOLS)
    completion, sent = through_openai(
        CHAT_RESPONSE, lambda client: client.chat.completions.create(model=MODEL, **payload)
    )
    assert completion.choices[0].message.content == "ok"
    assert sent.path == "/v1/chat/completions"
    assert sent.body == {"model": MODEL, **payload}
