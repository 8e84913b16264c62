"""The `anthropic` target: turn shape, tool pairing, thinking, attachments, prefill, empty text."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest

from contextchef import prompts
from contextchef.adapters import AnthropicAdapter, get_adapter, normalize_tools
from contextchef.errors import CompileError
from contextchef.messages import Message
from tests.adapters.sdk_anthropic import compile_anthropic, tool_call


def _text(text: str) -> dict[str, Any]:
    return {"text": text, "type": "text"}


def test_registered_as_anthropic() -> None:
    assert isinstance(get_adapter("anthropic"), AnthropicAdapter)
    assert get_adapter("anthropic").name == "anthropic"


def test_system_and_user_become_text_blocks() -> None:
    payload = compile_anthropic(
        [{"role": "user", "content": "hi"}],
        system=[{"role": "system", "content": "Be brief."}],
    )
    assert payload == {
        "messages": [{"content": [_text("hi")], "role": "user"}],
        "system": [_text("Be brief.")],
    }


def test_no_system_key_without_system_text() -> None:
    payload = compile_anthropic(
        [{"role": "user", "content": "hi"}], system=[{"role": "system", "content": "  "}]
    )
    assert "system" not in payload


def test_parallel_calls_results_and_next_user_share_turns() -> None:
    history: list[Message] = [
        {"role": "user", "content": "weather in Oslo and Rome?"},
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [
                tool_call("c1", "weather", '{"city": "Oslo", "units": "C"}'),
                tool_call("c2", "weather", '{"units": "C", "city": "Rome"}'),
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "4C"},
        {"role": "tool", "tool_call_id": "c2", "content": "19C"},
        {"role": "user", "content": "thanks"},
    ]
    payload = compile_anthropic(history)
    assert payload["messages"] == [
        {"content": [_text("weather in Oslo and Rome?")], "role": "user"},
        {
            "content": [
                _text("Checking both."),
                {
                    "id": "c1",
                    "input": {"city": "Oslo", "units": "C"},
                    "name": "weather",
                    "type": "tool_use",
                },
                {
                    "id": "c2",
                    "input": {"city": "Rome", "units": "C"},
                    "name": "weather",
                    "type": "tool_use",
                },
            ],
            "role": "assistant",
        },
        {
            "content": [
                {"content": "4C", "tool_use_id": "c1", "type": "tool_result"},
                {"content": "19C", "tool_use_id": "c2", "type": "tool_result"},
                _text("thanks"),
            ],
            "role": "user",
        },
    ]
    assert list(payload["messages"][1]["content"][2]["input"]) == ["city", "units"]


def test_consecutive_same_role_messages_merge() -> None:
    payload = compile_anthropic(
        [
            {"role": "user", "content": "one"},
            {"role": "user", "content": "two"},
            {"role": "assistant", "content": "a"},
            {"role": "assistant", "content": "b"},
        ]
    )
    assert payload["messages"] == [
        {"content": [_text("one"), _text("two")], "role": "user"},
        {"content": [_text("a"), _text("b")], "role": "assistant"},
    ]


def test_thinking_with_signature_leads_the_turn_and_unsigned_is_left_out() -> None:
    payload = compile_anthropic(
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": "answer",
                "thinking": {"thinking": "let me see", "signature": "sig-1"},
                "redacted_thinking": [{"data": "enc-a"}, {"data": "enc-b"}],
                "tool_calls": [tool_call("c1", "look")],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "seen"},
            {"role": "assistant", "content": "done", "thinking": {"thinking": "foreign"}},
        ]
    )
    assert payload["messages"][1]["content"] == [
        {"signature": "sig-1", "thinking": "let me see", "type": "thinking"},
        {"data": "enc-a", "type": "redacted_thinking"},
        {"data": "enc-b", "type": "redacted_thinking"},
        _text("answer"),
        {"id": "c1", "input": {}, "name": "look", "type": "tool_use"},
    ]
    assert payload["messages"][3] == {"content": [_text("done")], "role": "assistant"}


def test_attachments_become_image_and_document_blocks() -> None:
    notes = base64.b64encode(b"plain notes").decode()
    payload = compile_anthropic(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "see these"},
                    {"type": "image", "media_type": "image/png", "data": "iVBOR"},
                    {"type": "image", "url": "https://example.com/a.jpg"},
                    {
                        "type": "document",
                        "media_type": "application/pdf",
                        "data": "JVBER",
                        "filename": "r.pdf",
                    },
                    {"type": "document", "url": "https://example.com/b.pdf"},
                    {"type": "document", "media_type": "text/plain", "text": "inline"},
                    {"type": "document", "media_type": "text/markdown", "data": notes},
                ],
            }
        ]
    )
    assert payload["messages"][0]["content"] == [
        _text("see these"),
        {
            "source": {"data": "iVBOR", "media_type": "image/png", "type": "base64"},
            "type": "image",
        },
        {"source": {"type": "url", "url": "https://example.com/a.jpg"}, "type": "image"},
        {
            "source": {"data": "JVBER", "media_type": "application/pdf", "type": "base64"},
            "title": "r.pdf",
            "type": "document",
        },
        {"source": {"type": "url", "url": "https://example.com/b.pdf"}, "type": "document"},
        {
            "source": {"data": "inline", "media_type": "text/plain", "type": "text"},
            "type": "document",
        },
        {
            "source": {"data": "plain notes", "media_type": "text/plain", "type": "text"},
            "type": "document",
        },
    ]


def test_tool_result_keeps_its_attachments() -> None:
    payload = compile_anthropic(
        [
            {"role": "user", "content": "shot"},
            {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "screenshot")]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [
                    {"type": "text", "text": "here"},
                    {"type": "image", "media_type": "image/webp", "data": "UklG"},
                ],
            },
        ]
    )
    assert payload["messages"][2]["content"] == [
        {
            "content": [
                _text("here"),
                {
                    "source": {"data": "UklG", "media_type": "image/webp", "type": "base64"},
                    "type": "image",
                },
            ],
            "tool_use_id": "c1",
            "type": "tool_result",
        }
    ]


@pytest.mark.parametrize(
    ("part", "words"),
    [
        ({"type": "image", "media_type": "image/tiff", "data": "AA"}, "image/tiff"),
        ({"type": "document", "media_type": "application/msword", "data": "AA"}, "msword"),
        ({"type": "document", "media_type": "text/plain", "data": "@@@"}, "base64"),
    ],
)
def test_attachments_anthropic_cannot_read_fail_with_the_index(
    part: dict[str, Any], words: str
) -> None:
    history: Any = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    history.append({"role": "user", "content": [part]})
    with pytest.raises(CompileError, match=rf"^message 2: .*{words}") as caught:
        compile_anthropic(history)
    assert caught.value.index == 2


def test_attachment_in_a_system_message_is_a_compile_error() -> None:
    system: Any = [{"role": "system", "content": [{"type": "image", "url": "https://x/y.png"}]}]
    with pytest.raises(CompileError, match=r"system prompt message 0: .*text only"):
        compile_anthropic([{"role": "user", "content": "hi"}], system=system)


def test_mid_history_system_messages_are_hoisted_once_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="contextchef.adapters.anthropic")
    payload = compile_anthropic(
        [
            {"role": "user", "content": "a"},
            {"role": "system", "content": "mid one"},
            {"role": "assistant", "content": "b"},
            {"role": "system", "content": "mid two", "_cache_breakpoint": True},
            {"role": "user", "content": "c"},
        ],
        system=[{"role": "system", "content": "top"}],
    )
    assert payload["system"] == [
        _text("top"),
        _text("mid one"),
        {"cache_control": {"type": "ephemeral"}, "text": "mid two", "type": "text"},
    ]
    assert [m["role"] for m in payload["messages"]] == ["user", "assistant", "user"]
    hoists = [r for r in caplog.records if "hoisted" in r.getMessage()]
    assert len(hoists) == 1
    assert hoists[0].levelno == logging.DEBUG


def test_prefill_is_a_trailing_assistant_message() -> None:
    payload = compile_anthropic([{"role": "user", "content": "json please"}], prefill="{")
    assert payload["messages"][-1] == {"content": [_text("{")], "role": "assistant"}


def test_prefill_joins_a_trailing_assistant_turn() -> None:
    payload = compile_anthropic(
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": "Answer:"}],
        prefill="<answer>",
    )
    assert payload["messages"][-1] == {
        "content": [_text("Answer:"), _text("<answer>")],
        "role": "assistant",
    }


def test_final_assistant_text_loses_trailing_whitespace_only() -> None:
    history: list[Message] = [{"role": "user", "content": "q"}]
    payload = compile_anthropic(history, prefill="Sure, \n")
    assert payload["messages"][-1]["content"] == [_text("Sure,")]
    assert compile_anthropic(history, prefill=" \n")["messages"] == [
        {"content": [_text("q")], "role": "user"}
    ]
    history.append({"role": "assistant", "content": "mid \n"})
    history.append({"role": "user", "content": "again"})
    assert compile_anthropic(history)["messages"][1]["content"] == [_text("mid \n")]


def test_invalid_tool_arguments_name_the_message_and_the_call() -> None:
    history: list[Message] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [tool_call("c9", "run", '{"a": ')]},
        {"role": "tool", "tool_call_id": "c9", "content": "x"},
    ]
    with pytest.raises(CompileError, match=r"^message 1: tool call 'c9' \(run\): .*not valid JSON"):
        compile_anthropic(history)
    history[1]["tool_calls"][0]["function"]["arguments"] = "[1, 2]"
    with pytest.raises(CompileError, match=r"^message 1: .*must be a JSON object, got list"):
        compile_anthropic(history)


def test_blank_arguments_mean_no_arguments() -> None:
    payload = compile_anthropic(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "now", "")]},
            {"role": "tool", "tool_call_id": "c1", "content": "12:00"},
        ]
    )
    assert payload["messages"][1]["content"][0]["input"] == {}


def test_empty_text_never_makes_an_empty_block() -> None:
    payload = compile_anthropic(
        [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": ""},
            {
                "role": "user",
                "content": [{"type": "text", "text": " "}, {"type": "text", "text": "b"}],
            },
            {"role": "assistant", "content": "", "tool_calls": [tool_call("c1", "noop")]},
            {"role": "tool", "tool_call_id": "c1", "content": ""},
            {"role": "user", "content": None},
        ]
    )
    assert payload["messages"] == [
        {"content": [_text("a"), _text("b")], "role": "user"},
        {
            "content": [{"id": "c1", "input": {}, "name": "noop", "type": "tool_use"}],
            "role": "assistant",
        },
        {"content": [{"tool_use_id": "c1", "type": "tool_result"}], "role": "user"},
    ]


def test_foreign_tool_call_ids_are_rewritten_consistently() -> None:
    payload = compile_anthropic(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [tool_call("call.1:a", "x")]},
            {"role": "tool", "tool_call_id": "call.1:a", "content": "ok"},
        ]
    )
    use_id = payload["messages"][1]["content"][0]["id"]
    assert use_id.startswith("call_1_a_")
    assert payload["messages"][2]["content"][0]["tool_use_id"] == use_id


def test_tools_use_anthropic_schema() -> None:
    payload = compile_anthropic(
        [{"role": "user", "content": "hi"}],
        tools=[
            {
                "name": "search",
                "description": "Search the web.",
                "parameters": {"properties": {"q": {"type": "string"}}, "type": "object"},
                "strict": True,
            },
            {"name": "now"},
        ],
    )
    assert payload["tools"] == [
        {
            "description": "Search the web.",
            "input_schema": {"properties": {"q": {"type": "string"}}, "type": "object"},
            "name": "search",
            "strict": True,
        },
        {"description": "", "input_schema": {"properties": {}, "type": "object"}, "name": "now"},
    ]


def test_keys_are_emitted_in_sorted_order() -> None:
    history: Any = [
        {"content": "hi", "role": "user", "_cache_breakpoint": True},
        {
            "tool_calls": [tool_call("c1", "f", '{"zeta": 1, "alpha": {"y": 2, "b": 3}}')],
            "thinking": {"signature": "s", "thinking": "t"},
            "role": "assistant",
            "content": [{"text": "calling", "type": "text"}],
        },
        {"tool_call_id": "c1", "role": "tool", "content": "r", "_cache_breakpoint": True},
        {"role": "user", "content": [{"data": "AA", "type": "image", "media_type": "image/gif"}]},
    ]
    payload = compile_anthropic(
        history,
        system=[{"role": "system", "content": "s", "_cache_breakpoint": True}],
        tools=normalize_tools([{"name": "f", "parameters": {"type": "object", "properties": {}}}]),
        prefill="ok",
    )
    assert json.dumps(payload) == json.dumps(payload, sort_keys=True)


def test_an_assistant_left_first_gets_the_placeholder_user_turn() -> None:
    payload = compile_anthropic(
        [{"role": "user", "content": " "}, {"role": "assistant", "content": "hello"}]
    )
    assert payload["messages"] == [
        {"content": [_text(prompts.CONVERSATION_OPENS_WITH_ASSISTANT)], "role": "user"},
        {"content": [_text("hello")], "role": "assistant"},
    ]


def test_an_empty_conversation_still_sends_one_user_message() -> None:
    from contextchef import ContextChef, prompts

    payload = ContextChef().set_system_prompt("S").compile(target="anthropic")
    assert payload["messages"] == [
        {"content": [{"text": prompts.CONVERSATION_STARTS, "type": "text"}], "role": "user"}
    ]
