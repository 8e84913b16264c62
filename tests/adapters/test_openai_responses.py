"""The `openai-responses` target: instructions, input items, reasoning, tools, prefill, caching."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from pydantic import ValidationError

from contextchef import prompts
from contextchef.adapters import OpenAIResponsesAdapter, builtin_registry
from contextchef.messages import Message
from tests.adapters.samples import (
    DELETE,
    DOC_DATA,
    IMAGE_DATA,
    PDF,
    PNG,
    RESPONSES_RESPONSE,
    TOOLS,
    CountingCache,
    altered,
    attachment_history,
    compile_checked,
    is_key_sorted,
    parallel_history,
    request,
    through_openai,
)
from tests.adapters.sdk_openai import MODEL, PayloadMismatch, validate_responses

ADAPTER = OpenAIResponsesAdapter()

REASONING = {
    "encrypted_content": "gAAAA-opaque",
    "id": "rs_1",
    "summary": [{"text": "Need both files.", "type": "summary_text"}],
    "type": "reasoning",
}


compile_valid = partial(compile_checked, ADAPTER, validate_responses)


def test_registered_under_openai_responses() -> None:
    assert isinstance(builtin_registry().get("openai-responses"), OpenAIResponsesAdapter)


def test_parallel_calls_become_function_call_items_and_outputs() -> None:
    items = compile_valid(parallel_history())["input"]
    assert items[0] == {
        "content": [{"text": "Read both files.", "type": "input_text"}],
        "role": "user",
        "type": "message",
    }
    assert items[1:] == [
        {"arguments": '{"path": "a"}', "call_id": "c1", "name": "read", "type": "function_call"},
        {"arguments": '{"path": "b"}', "call_id": "c2", "name": "read", "type": "function_call"},
        {"call_id": "c1", "output": "A", "type": "function_call_output"},
        {"call_id": "c2", "output": '{"lines": 2, "body": "B"}', "type": "function_call_output"},
    ]


def test_instructions_join_the_top_layer_and_are_omitted_when_empty() -> None:
    system: list[Message] = [
        {"content": "One.", "role": "system"},
        {"content": "", "role": "system"},
        {"content": "Two.", "role": "system"},
    ]
    payload = compile_valid([{"content": "hi", "role": "user"}], system=system)
    assert payload["instructions"] == "One.\n\nTwo."
    assert "instructions" not in compile_valid([{"content": "hi", "role": "user"}], system=())


def test_reasoning_items_come_verbatim_right_before_their_message() -> None:
    history = parallel_history()
    history[1] = {**history[1], "content": "Reading.", "openai_reasoning": [REASONING]}
    history.append(
        {
            "content": "Both read.",
            "openai_phase": "final_answer",
            "openai_reasoning": [{**REASONING, "id": "rs_2"}],
            "role": "assistant",
        }
    )
    items = compile_valid(history)["input"]
    assert items[1] == REASONING
    assert items[2] == {"content": "Reading.", "role": "assistant", "type": "message"}
    assert items[3]["type"] == items[4]["type"] == "function_call"
    assert items[7]["id"] == "rs_2"
    assert items[8] == {
        "content": "Both read.",
        "phase": "final_answer",
        "role": "assistant",
        "type": "message",
    }


def test_reasoning_before_calls_only_sends_no_empty_message() -> None:
    history = parallel_history()
    history[1] = {**history[1], "openai_reasoning": [REASONING]}
    items = compile_valid(history)["input"]
    assert [item["type"] for item in items[1:4]] == ["reasoning", "function_call", "function_call"]


def test_mid_history_system_messages_are_inline_system_items() -> None:
    history: list[Message] = [
        {"content": "hi", "role": "user"},
        {"content": "Switch to French.", "role": "system"},
        {"content": "ok", "role": "user"},
    ]
    items = compile_valid(history)["input"]
    assert items[1] == {
        "content": [{"text": "Switch to French.", "type": "input_text"}],
        "role": "system",
        "type": "message",
    }


def test_attachments_become_input_image_and_input_file() -> None:
    parts = compile_valid(attachment_history())["input"][0]["content"]
    assert parts == [
        {"text": "Compare these.", "type": "input_text"},
        {"detail": "auto", "image_url": f"data:image/png;base64,{PNG}", "type": "input_image"},
        {"detail": "auto", "image_url": "https://example.com/cat.jpg", "type": "input_image"},
        {
            "file_data": f"data:application/pdf;base64,{PDF}",
            "filename": "spec.pdf",
            "type": "input_file",
        },
        {"file_url": "https://example.com/a.pdf", "type": "input_file"},
    ]


def test_a_tool_result_with_attachments_is_sent_as_parts() -> None:
    history = parallel_history()
    history[2] = {**history[2], "content": [{"text": "chart:", "type": "text"}, IMAGE_DATA]}
    output = compile_valid(history)["input"][3]["output"]
    assert output == [
        {"text": "chart:", "type": "input_text"},
        {"detail": "auto", "image_url": f"data:image/png;base64,{PNG}", "type": "input_image"},
    ]


def test_tools_are_flat_with_explicit_strict() -> None:
    tools = compile_valid([{"content": "hi", "role": "user"}], tools=TOOLS)["tools"]
    assert tools[0] == {
        "description": "Read a file.",
        "name": "read",
        "parameters": TOOLS[0]["parameters"],
        "strict": False,
        "type": "function",
    }
    strict = [{**TOOLS[0], "strict": True}]
    assert (
        compile_valid([{"content": "hi", "role": "user"}], tools=strict)["tools"][0]["strict"]
        is True
    )


def test_prefill_goes_after_the_last_user_attachments() -> None:
    history: list[Message] = [
        {"content": "first", "role": "user"},
        {"content": "reply", "role": "assistant"},
        {"content": [{"text": "Read.", "type": "text"}, DOC_DATA], "role": "user"},
    ]
    content = compile_valid(history, prefill="{")["input"][-1]["content"]
    assert [p["type"] for p in content] == ["input_text", "input_file", "input_text"]
    assert content[-1]["text"] == prompts.prefill_instruction("{")


def test_prefill_without_a_user_message_goes_to_instructions() -> None:
    history: list[Message] = [{"content": "hello", "role": "assistant"}]
    payload = compile_valid(history, prefill="{")
    assert payload["instructions"] == "You are terse.\n\n" + prompts.prefill_instruction("{")
    empty = compile_valid([], system=(), prefill="{")
    assert "instructions" not in empty  # the placeholder user turn takes the instruction
    assert empty["input"] == [
        {
            "content": [
                {"text": prompts.CONVERSATION_STARTS, "type": "input_text"},
                {"text": prompts.prefill_instruction("{"), "type": "input_text"},
            ],
            "role": "user",
            "type": "message",
        }
    ]


def test_second_compile_converts_only_the_new_message_and_never_mutates_the_cache() -> None:
    cache = CountingCache()
    history = parallel_history()
    first = ADAPTER.compile(request(history, cache=cache, prefill="X"))
    assert cache.misses == len(history)
    history.append({"content": "next", "role": "user"})
    second = ADAPTER.compile(request(history, cache=cache))
    assert cache.misses == len(history)
    assert second["input"][0] is not first["input"][0]  # the prefilled copy was not cached…
    assert second["input"][0]["content"] == [{"text": "Read both files.", "type": "input_text"}]
    assert second["input"][1] is first["input"][1]  # …while the calls were


def test_key_order_is_sorted() -> None:
    history = parallel_history()
    history[1] = {**history[1], "openai_reasoning": [dict(reversed(list(REASONING.items())))]}
    assert is_key_sorted(ADAPTER.compile(request(history, tools=TOOLS, prefill="x")))


@pytest.mark.parametrize(
    ("path", "value", "error", "match"),
    [
        (("input", 1, "type"), "function_kall", ValidationError, "function_kall"),
        (("input", 3, "call_idd"), "c1", PayloadMismatch, "call_idd was dropped"),
        (("input", 0, "content", 0, "type"), "output_text", ValidationError, "output_text"),
        (("tools", 0, "strict"), DELETE, ValidationError, "strict"),
    ],
)
def test_validator_rejects_bad_items(
    path: tuple[str | int, ...], value: Any, error: type[Exception], match: str
) -> None:
    good = ADAPTER.compile(request(parallel_history(), tools=TOOLS))
    validate_responses(good)
    with pytest.raises(error, match=match):
        validate_responses(altered(good, path, value))


def test_the_sdk_sends_the_compiled_payload() -> None:
    history = parallel_history()
    history[1] = {**history[1], "openai_reasoning": [REASONING]}
    history.append({"content": [{"text": "Look", "type": "text"}, IMAGE_DATA], "role": "user"})
    payload = compile_valid(history, tools=TOOLS, prefill="Answer:")
    response, sent = through_openai(
        RESPONSES_RESPONSE, lambda client: client.responses.create(model=MODEL, **payload)
    )
    assert response.output_text == "ok"
    assert sent.path == "/v1/responses"
    assert sent.body == {"model": MODEL, **payload}
    assert sent.body["input"][1] == REASONING
