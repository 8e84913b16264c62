"""`from_gemini`: Gemini contents in, IR out — synthetic ids, FIFO matching, signatures."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types

from contextchef.adapters import GeminiAdapter, from_gemini
from contextchef.errors import MessageError
from contextchef.messages import Message, validate_history
from tests.adapters.samples import IMAGE_DATA, PNG, call, parallel_history, request


def fcall(name: str, call_id: str | None = None, **args: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"args": args, "name": name}
    if call_id:
        body["id"] = call_id
    return {"function_call": body}


def fresponse(name: str, result: Any, call_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "response": result}
    if call_id:
        body["id"] = call_id
    return {"function_response": body}


def test_two_same_name_calls_get_synthetic_ids_and_fifo_results() -> None:
    contents = [
        {"parts": [{"text": "read a and b"}], "role": "user"},
        {"parts": [fcall("read", path="a"), fcall("read", path="b")], "role": "model"},
        {
            "parts": [fresponse("read", {"result": "A"}), fresponse("read", {"result": "B"})],
            "role": "user",
        },
        {"parts": [fcall("read", path="c")], "role": "model"},
        {"parts": [fresponse("read", {"lines": 3})], "role": "user"},
    ]
    _, history, _ = from_gemini(contents)
    validate_history(history)
    assert [c["id"] for c in history[1]["tool_calls"]] == [
        "gemini-call-read-1",
        "gemini-call-read-2",
    ]
    assert [(m["tool_call_id"], m["content"]) for m in history[2:4]] == [
        ("gemini-call-read-1", "A"),
        ("gemini-call-read-2", "B"),
    ]
    assert history[4]["tool_calls"][0]["id"] == "gemini-call-read-3"  # the counter runs on
    assert history[5] == {
        "content": '{"lines":3}',
        "role": "tool",
        "tool_call_id": "gemini-call-read-3",
    }


def test_fifo_matching_is_per_name_and_ids_win() -> None:
    contents = [
        {"parts": [{"text": "go"}], "role": "user"},
        {"parts": [fcall("ls"), fcall("read", "r-7"), fcall("ls")], "role": "model"},
        {
            "parts": [
                fresponse("read", {"result": "R"}),
                fresponse("ls", {"result": "first"}),
                fresponse("ls", {"result": "second"}),
            ],
            "role": "user",
        },
    ]
    _, history, _ = from_gemini(contents)
    ids = [c["id"] for c in history[1]["tool_calls"]]
    assert ids == ["gemini-call-ls-1", "r-7", "gemini-call-ls-2"]
    assert {m["tool_call_id"]: m["content"] for m in history[2:]} == {
        "r-7": "R",
        "gemini-call-ls-1": "first",
        "gemini-call-ls-2": "second",
    }


def test_signatures_thoughts_and_text_are_captured() -> None:
    contents = [
        {"parts": [{"text": "go"}], "role": "user"},
        {
            "parts": [
                {"text": "planning…", "thought": True},
                {"text": "On it.", "thought_signature": "c2lnLTE="},
                {**fcall("ls", "c1"), "thought_signature": "c2lnLTI="},
            ],
            "role": "model",
        },
    ]
    _, history, _ = from_gemini(contents, repair=False)
    assert history[1] == {
        "content": "On it.",
        "gemini_thought_signature": "c2lnLTE=",
        "role": "assistant",
        "thinking": {"thinking": "planning…"},
        "tool_calls": [
            {
                "function": {"arguments": "{}", "name": "ls"},
                "gemini_thought_signature": "c2lnLTI=",
                "id": "c1",
                "type": "function",
            }
        ],
    }


def test_sdk_content_objects_and_camel_case_dicts() -> None:
    sdk = [
        types.Content(
            role="user",
            parts=[
                types.Part(text="look"),
                types.Part.from_bytes(data=b"\x89PNG\r\n\x1a\n", mime_type="image/png"),
            ],
        ),
        types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(name="ls", args={"p": "."}),
                    thought_signature=b"sig",
                )
            ],
        ),
    ]
    camel = [
        {
            "parts": [{"text": "look"}, {"inlineData": {"data": PNG, "mimeType": "image/png"}}],
            "role": "user",
        },
        {
            "parts": [
                {"functionCall": {"args": {"p": "."}, "name": "ls"}, "thoughtSignature": "c2ln"}
            ],
            "role": "model",
        },
    ]
    from_sdk = from_gemini(sdk, repair=False)
    assert from_sdk == from_gemini(camel, repair=False)
    assert from_sdk[1][0]["content"] == [{"text": "look", "type": "text"}, IMAGE_DATA]
    assert from_sdk[1][1]["tool_calls"][0]["gemini_thought_signature"] == "c2ln"


def test_responses_come_before_the_rest_of_a_user_content() -> None:
    contents = [
        {"parts": [{"text": "go"}], "role": "user"},
        {"parts": [fcall("ls")], "role": "model"},
        {"parts": [{"text": "also this"}, fresponse("ls", {"result": "x"})], "role": "user"},
    ]
    _, history, _ = from_gemini(contents)
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "user"]


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("Be kind.", ["Be kind."]),
        ({"parts": [{"text": "One."}, {"text": "Two."}]}, ["One.", "Two."]),
        (types.Content(parts=[types.Part(text="One.")]), ["One."]),
        (["One.", {"text": "Two."}], ["One.", "Two."]),
    ],
)
def test_system_instruction_forms(instruction: Any, expected: list[str]) -> None:
    system, _, _ = from_gemini([], instruction)
    assert [m["content"] for m in system] == expected


def test_bad_contents_are_clear_errors() -> None:
    with pytest.raises(MessageError, match="unknown content role 'assistant'"):
        from_gemini([{"parts": [{"text": "x"}], "role": "assistant"}])
    with pytest.raises(MessageError, match="needs a name") as caught:
        from_gemini(
            [
                {"parts": [{"text": "x"}]},
                {"parts": [{"function_call": {"args": {}}}], "role": "model"},
            ]
        )
    assert caught.value.index == 1


def test_round_trip_through_the_gemini_target() -> None:
    system: list[Message] = [{"content": "You are terse.", "role": "system"}]
    history: list[Message] = [
        {"content": [{"text": "Read these.", "type": "text"}, IMAGE_DATA], "role": "user"},
        {
            "content": "Reading.",
            "gemini_thought_signature": "c2ln",
            "role": "assistant",
            "tool_calls": [
                call(
                    "gemini-call-read-1", "read", {"path": "a"}, gemini_thought_signature="c2lnMg=="
                ),
                call("gemini-call-read-2", "read", {"path": "b"}),
                call("native-id", "ls"),
            ],
        },
        {"content": "A", "role": "tool", "tool_call_id": "gemini-call-read-1"},
        {"content": "B", "role": "tool", "tool_call_id": "gemini-call-read-2"},
        {"content": '{"files":["x"]}', "role": "tool", "tool_call_id": "native-id"},
        {"content": "Done.", "role": "assistant"},
        {"content": "thanks", "role": "user"},
    ]
    payload = GeminiAdapter().compile(request(history, system=system))
    got_system, got_history, _ = from_gemini(
        payload["contents"], payload["config"]["system_instruction"]
    )
    assert got_system == system
    for call_ in got_history[1]["tool_calls"]:
        call_["function"]["arguments"] = json.dumps(json.loads(call_["function"]["arguments"]))
    assert got_history == history


def test_round_trip_of_a_plain_parallel_history_keeps_ids() -> None:
    payload = GeminiAdapter().compile(request(parallel_history(), system=()))
    _, history, _ = from_gemini(payload["contents"])
    assert [c["id"] for c in history[1]["tool_calls"]] == ["c1", "c2"]
    assert [m.get("tool_call_id") for m in history[2:]] == ["c1", "c2"]
