"""`from_openai_responses`: Responses items in, IR out — and back again."""

from __future__ import annotations

import logging

import pytest
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary

from contextchef.adapters import OpenAIResponsesAdapter, from_openai_responses
from contextchef.errors import MessageError
from contextchef.messages import Message, validate_history
from tests.adapters.samples import DOC_DATA, IMAGE_DATA, PDF, PNG, parallel_history, request
from tests.adapters.sdk_openai import validate_responses


def rs(item_id: str) -> dict[str, object]:
    return {"id": item_id, "summary": [], "type": "reasoning"}


def fc(call_id: str, name: str = "ls") -> dict[str, object]:
    return {"arguments": "{}", "call_id": call_id, "name": name, "type": "function_call"}


def out(call_id: str, output: str = "ok") -> dict[str, object]:
    return {"call_id": call_id, "output": output, "type": "function_call_output"}


def test_instructions_and_developer_messages_are_system() -> None:
    system, history, _ = from_openai_responses(
        [
            {"content": "Be brief.", "role": "developer"},
            {"content": "hi", "role": "user"},
            {
                "content": [{"text": "French now.", "type": "input_text"}],
                "role": "system",
                "type": "message",
            },
        ],
        instructions="Be kind.",
    )
    assert system == [
        {"content": "Be kind.", "role": "system"},
        {"content": "Be brief.", "role": "system"},
    ]
    assert history == [
        {"content": "hi", "role": "user"},
        {"content": "French now.", "role": "system"},
    ]


def test_a_plain_string_input_is_one_user_message() -> None:
    assert from_openai_responses("hello") == ([], [{"content": "hello", "role": "user"}], [])


def test_outputs_are_joined_to_their_calls_by_call_id() -> None:
    _, history, _ = from_openai_responses(
        [{"content": "go", "role": "user"}, fc("a"), fc("b"), out("b", "B"), out("a", "A")]
    )
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in history[1]["tool_calls"]] == ["a", "b"]
    assert [(m["tool_call_id"], m["content"]) for m in history[2:]] == [("a", "A"), ("b", "B")]


def test_reasoning_attaches_to_the_following_assistant_message_and_keeps_adjacency() -> None:
    items = [
        {"content": "go", "role": "user"},
        rs("rs_1"),
        fc("a"),
        rs("rs_2"),
        fc("b"),
        out("a"),
        out("b"),
        rs("rs_3"),
        {
            "content": [{"annotations": [], "text": "Done.", "type": "output_text"}],
            "id": "msg_1",
            "phase": "final_answer",
            "role": "assistant",
            "status": "completed",
            "type": "message",
        },
        rs("rs_4"),
    ]
    _, history, _ = from_openai_responses(items)
    validate_history(history)
    assert [m["role"] for m in history] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "assistant",
    ]
    assert history[1]["openai_reasoning"] == [rs("rs_1")]
    assert history[3]["openai_reasoning"] == [rs("rs_2")]
    assert history[5] == {
        "content": "Done.",
        "openai_phase": "final_answer",
        "openai_reasoning": [rs("rs_3")],
        "role": "assistant",
    }
    assert history[6] == {"content": None, "openai_reasoning": [rs("rs_4")], "role": "assistant"}
    again = OpenAIResponsesAdapter().compile(request(history, system=()))
    validate_responses(again)
    kinds = [item["type"] for item in again["input"]]
    for at, kind in enumerate(kinds[:-1]):
        if kind == "reasoning":
            assert kinds[at + 1] in ("function_call", "message", "reasoning")


def test_sdk_output_items_are_accepted() -> None:
    output = [
        ResponseReasoningItem(
            id="rs_1",
            summary=[Summary(text="think", type="summary_text")],
            type="reasoning",
            encrypted_content="enc",
        ),
        ResponseOutputMessage(
            id="msg_1",
            content=[ResponseOutputText(annotations=[], text="Let me look.", type="output_text")],
            role="assistant",
            status="completed",
            type="message",
        ),
        ResponseFunctionToolCall(
            arguments='{"p":1}', call_id="call_1", name="ls", type="function_call", id="fc_1"
        ),
    ]
    _, history, _ = from_openai_responses(
        [{"content": "go", "role": "user"}, *output, out("call_1")]
    )
    assistant = history[1]
    assert assistant["content"] == "Let me look."
    assert assistant["openai_reasoning"] == [
        {
            "encrypted_content": "enc",
            "id": "rs_1",
            "summary": [{"text": "think", "type": "summary_text"}],
            "type": "reasoning",
        }
    ]
    assert assistant["tool_calls"] == [
        {"function": {"arguments": '{"p":1}', "name": "ls"}, "id": "call_1", "type": "function"}
    ]


def test_unknown_items_are_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="contextchef.adapters.from_openai_responses"):
        _, history, _ = from_openai_responses(
            [
                {"content": "go", "role": "user"},
                {"id": "ws_1", "status": "completed", "type": "web_search_call"},
            ]
        )
    assert history == [{"content": "go", "role": "user"}]
    assert "web_search_call" in caplog.text


def test_orphan_outputs_are_dropped_by_the_repair_pass() -> None:
    _, history, fixes = from_openai_responses(
        [{"content": "go", "role": "user"}, out("ghost")], repair=True
    )
    assert history == [{"content": "go", "role": "user"}]
    assert [fix.kind for fix in fixes] == ["dropped_orphan_result"]
    raw = from_openai_responses([{"content": "go", "role": "user"}, out("ghost")], repair=False)[1]
    assert raw[-1]["tool_call_id"] == "ghost"


def test_parts_and_uploaded_file_references() -> None:
    _, history, _ = from_openai_responses(
        [
            {
                "content": [
                    {"text": "see", "type": "input_text"},
                    {
                        "detail": "auto",
                        "image_url": f"data:image/png;base64,{PNG}",
                        "type": "input_image",
                    },
                    {
                        "file_data": f"data:application/pdf;base64,{PDF}",
                        "filename": "spec.pdf",
                        "type": "input_file",
                    },
                ],
                "role": "user",
            }
        ]
    )
    assert history[0]["content"] == [{"text": "see", "type": "text"}, IMAGE_DATA, DOC_DATA]
    with pytest.raises(MessageError, match="file_id") as caught:
        from_openai_responses(
            [{"content": [{"file_id": "file-1", "type": "input_file"}], "role": "user"}]
        )
    assert caught.value.index == 0


def test_round_trip_through_the_responses_target() -> None:
    system: list[Message] = [{"content": "You are terse.", "role": "system"}]
    history = parallel_history()
    history[1] = {**history[1], "content": "Reading.", "openai_reasoning": [rs("rs_1")]}
    history[3] = {**history[3], "content": [{"text": "chart", "type": "text"}, IMAGE_DATA]}
    history += [
        {"content": "Both read.", "openai_phase": "final_answer", "role": "assistant"},
        {"content": "note", "role": "system"},
        {"content": [{"text": "Look:", "type": "text"}, DOC_DATA], "role": "user"},
    ]
    payload = OpenAIResponsesAdapter().compile(request(history, system=system))
    imported = from_openai_responses(payload["input"], payload["instructions"])
    assert imported[:2] == (system, history)
