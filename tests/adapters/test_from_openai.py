"""`from_openai`: Chat Completions history in, IR out."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessage
from openai.types.chat.chat_completion_message_function_tool_call import (
    ChatCompletionMessageFunctionToolCall,
    Function,
)

from contextchef import prompts
from contextchef.adapters import OpenAIChatAdapter, from_openai
from contextchef.errors import MessageError
from contextchef.messages import Message, validate_history
from tests.adapters.samples import (
    DOC_DATA,
    IMAGE_DATA,
    IMAGE_URL,
    PDF,
    PNG,
    parallel_history,
    request,
)


def test_leading_system_and_developer_form_the_system_prompt() -> None:
    system, history, _ = from_openai(
        [
            {"content": "Be kind.", "role": "system"},
            {"content": [{"text": "Be brief.", "type": "text"}], "role": "developer"},
            {"content": "hi", "role": "user"},
            {"content": "Now in French.", "role": "developer"},
        ]
    )
    assert system == [
        {"content": "Be kind.", "role": "system"},
        {"content": "Be brief.", "role": "system"},
    ]
    assert history == [
        {"content": "hi", "role": "user"},
        {"content": "Now in French.", "role": "system"},
    ]


def test_image_and_file_parts_become_attachments() -> None:
    _, history, _ = from_openai(
        [
            {
                "content": [
                    {"text": "see", "type": "text"},
                    {"image_url": {"url": f"data:image/png;base64,{PNG}"}, "type": "image_url"},
                    {"image_url": {"detail": "low", "url": IMAGE_URL["url"]}, "type": "image_url"},
                    {
                        "file": {
                            "file_data": f"data:application/pdf;base64,{PDF}",
                            "filename": "spec.pdf",
                        },
                        "type": "file",
                    },
                    {"file": {"file_data": PDF, "filename": "raw.pdf"}, "type": "file"},
                ],
                "role": "user",
            }
        ]
    )
    validate_history(history)
    assert history[0]["content"] == [
        {"text": "see", "type": "text"},
        IMAGE_DATA,
        {"type": "image", "url": IMAGE_URL["url"]},
        DOC_DATA,
        {"data": PDF, "filename": "raw.pdf", "media_type": "application/pdf", "type": "document"},
    ]


def test_sdk_message_objects_are_accepted() -> None:
    reply = ChatCompletionMessage(
        content=None,
        role="assistant",
        tool_calls=[
            ChatCompletionMessageFunctionToolCall(
                id="c1", type="function", function=Function(name="ls", arguments='{"p":"."}')
            )
        ],
    )
    _, history, _ = from_openai(
        [
            {"content": "list", "role": "user"},
            reply,
            {"content": "a", "role": "tool", "tool_call_id": "c1"},
        ]
    )
    assert history[1] == {
        "content": None,
        "role": "assistant",
        "tool_calls": [
            {"function": {"arguments": '{"p":"."}', "name": "ls"}, "id": "c1", "type": "function"}
        ],
    }


def test_assistant_refusal_and_text_parts() -> None:
    _, history, _ = from_openai(
        [
            {"content": "hi", "role": "user"},
            {
                "content": [
                    {"text": "Sorry", "type": "text"},
                    {"refusal": "cannot", "type": "refusal"},
                ],
                "name": "bot",
                "role": "assistant",
            },
        ]
    )
    assert history[1] == {
        "content": "Sorry",
        "name": "bot",
        "refusal": "cannot",
        "role": "assistant",
    }


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (
            {
                "content": [{"input_audio": {"data": "x", "format": "wav"}, "type": "input_audio"}],
                "role": "user",
            },
            "input_audio",
        ),
        ({"content": [{"file": {"file_id": "file-1"}, "type": "file"}], "role": "user"}, "file_id"),
        ({"content": "x", "name": "f", "role": "function"}, "unknown role 'function'"),
        ({"content": "x", "role": "tool"}, "tool_call_id"),
        (
            {
                "content": None,
                "function_call": {"arguments": "{}", "name": "f"},
                "role": "assistant",
            },
            "legacy",
        ),
    ],
)
def test_what_the_ir_cannot_carry_is_a_clear_error(message: dict[str, Any], match: str) -> None:
    with pytest.raises(MessageError, match=match) as caught:
        from_openai([{"content": "hi", "role": "user"}, message])
    assert caught.value.index == 1


def test_history_is_repaired_and_each_fix_logged(caplog: pytest.LogCaptureFixture) -> None:
    raw = [
        {"content": "hi", "role": "user"},
        {
            "content": None,
            "role": "assistant",
            "tool_calls": [
                {"function": {"arguments": "{}", "name": "ls"}, "id": "c1", "type": "function"}
            ],
        },
        {"content": "late", "role": "tool", "tool_call_id": "nope"},
    ]
    with caplog.at_level(logging.WARNING, logger="contextchef.adapters.from_openai"):
        _, history, _ = from_openai(raw, repair=True)
    assert history[-1] == {"content": prompts.NO_TOOL_RESULT, "role": "tool", "tool_call_id": "c1"}
    assert len(caplog.records) == 2
    _, unrepaired, _ = from_openai(raw, repair=False)
    assert unrepaired[-1]["tool_call_id"] == "nope"


def test_round_trip_through_the_openai_target() -> None:
    system: list[Message] = [{"content": "You are terse.", "role": "system"}]
    history: list[Message] = [
        *parallel_history(),
        {"content": "done", "role": "assistant"},
        {"content": [{"text": "Look:", "type": "text"}, IMAGE_DATA, DOC_DATA], "role": "user"},
        {"content": "note", "role": "system"},
    ]
    payload = OpenAIChatAdapter().compile(request(history, system=system))
    assert from_openai(payload["messages"])[:2] == (system, history)
