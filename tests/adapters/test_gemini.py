"""The `gemini` target: contents, config, merging, signatures, attachments, prefill, caching."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
from google import genai
from google.genai import types
from pydantic import ValidationError

from contextchef import prompts
from contextchef.adapters import GeminiAdapter, builtin_registry
from contextchef.errors import CompileError
from contextchef.messages import Message
from tests.adapters.samples import (
    DOC_DATA,
    DOC_URL,
    GEMINI_RESPONSE,
    IMAGE_DATA,
    IMAGE_URL,
    PNG,
    TOOLS,
    CountingCache,
    altered,
    attachment_history,
    call,
    compile_checked,
    is_key_sorted,
    parallel_history,
    request,
)
from tests.adapters.sdk_gemini import validate_gemini
from tests.adapters.sdk_openai import PayloadMismatch
from tests.loopback import loopback_server

ADAPTER = GeminiAdapter()


compile_valid = partial(compile_checked, ADAPTER, validate_gemini)


def test_registered_under_gemini() -> None:
    assert isinstance(builtin_registry().get("gemini"), GeminiAdapter)


def test_parallel_calls_and_results_make_three_contents() -> None:
    payload = compile_valid(parallel_history(), tools=TOOLS)
    contents = payload["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"] == [
        {"function_call": {"args": {"path": "a"}, "id": "c1", "name": "read"}},
        {"function_call": {"args": {"path": "b"}, "id": "c2", "name": "read"}},
    ]
    assert contents[2]["parts"] == [
        {"function_response": {"id": "c1", "name": "read", "response": {"result": "A"}}},
        {"function_response": {"id": "c2", "name": "read", "response": {"body": "B", "lines": 2}}},
    ]


def test_system_prompt_and_mid_history_system_go_to_system_instruction() -> None:
    history: list[Message] = [
        {"content": "hi", "role": "user"},
        {"content": "hello", "role": "assistant"},
        {"content": "Be brief from now on.", "role": "system"},
        {"content": "more", "role": "user"},
    ]
    payload = compile_valid(history)
    assert payload["config"]["system_instruction"] == {
        "parts": [{"text": "You are terse."}, {"text": "Be brief from now on."}]
    }
    assert [c["role"] for c in payload["contents"]] == ["user", "model", "user"]


def test_hoisting_a_system_message_merges_the_users_around_it() -> None:
    history: list[Message] = [
        {"content": "one", "role": "user"},
        {"content": "note", "role": "system"},
        {"content": "two", "role": "user"},
    ]
    payload = compile_valid(history)
    assert payload["contents"] == [{"parts": [{"text": "one"}, {"text": "two"}], "role": "user"}]


def test_no_system_and_no_tools_give_an_empty_config() -> None:
    payload = compile_valid([{"content": "hi", "role": "user"}], system=())
    assert payload == {"config": {}, "contents": [{"parts": [{"text": "hi"}], "role": "user"}]}


def test_tools_use_the_standard_json_schema_field() -> None:
    payload = compile_valid([{"content": "hi", "role": "user"}], tools=TOOLS)
    declarations = payload["config"]["tools"][0]["function_declarations"]
    assert declarations[0] == {
        "description": "Read a file.",
        "name": "read",
        "parameters_json_schema": TOOLS[0]["parameters"],
    }
    assert declarations[1]["parameters_json_schema"] == {"properties": {}, "type": "object"}


def test_thought_signatures_go_back_on_their_parts() -> None:
    history: list[Message] = [
        {"content": "go", "role": "user"},
        {
            "content": "Checking.",
            "gemini_thought_signature": "c2lnLXRleHQ=",
            "role": "assistant",
            "tool_calls": [
                call("c1", "ls", gemini_thought_signature="c2lnLWNhbGw="),
                call("c2", "ls"),
            ],
        },
        {"content": "x", "role": "tool", "tool_call_id": "c1"},
        {"content": "y", "role": "tool", "tool_call_id": "c2"},
    ]
    parts = compile_valid(history)["contents"][1]["parts"]
    assert parts[0] == {"text": "Checking.", "thought_signature": "c2lnLXRleHQ="}
    assert parts[1]["thought_signature"] == "c2lnLWNhbGw="
    assert "thought_signature" not in parts[2]


def test_a_signature_without_text_keeps_a_part_to_ride_on() -> None:
    history: list[Message] = [
        {"content": "go", "role": "user"},
        {"content": "", "gemini_thought_signature": "c2ln", "role": "assistant"},
        {"content": "and?", "role": "user"},
    ]
    assert compile_valid(history)["contents"][1]["parts"] == [
        {"text": "", "thought_signature": "c2ln"}
    ]


def test_empty_text_makes_no_parts_and_empty_messages_vanish() -> None:
    history: list[Message] = [
        {"content": [{"text": "", "type": "text"}, {"text": "hi", "type": "text"}], "role": "user"},
        {"content": "", "role": "assistant"},
        {"content": "", "role": "user"},
    ]
    assert compile_valid(history)["contents"] == [{"parts": [{"text": "hi"}], "role": "user"}]


def test_an_empty_history_gets_a_placeholder_user_content() -> None:
    payload = compile_valid([])
    assert payload["contents"] == [
        {"parts": [{"text": prompts.CONVERSATION_STARTS}], "role": "user"}
    ]


def test_attachments_become_inline_and_file_data() -> None:
    parts = compile_valid(attachment_history())["contents"][0]["parts"]
    assert parts == [
        {"text": "Compare these."},
        {"inline_data": {"data": PNG, "mime_type": "image/png"}},
        {"file_data": {"file_uri": IMAGE_URL["url"], "mime_type": "image/jpeg"}},
        {"inline_data": {"data": DOC_DATA["data"], "mime_type": "application/pdf"}},
        {"file_data": {"file_uri": DOC_URL["url"], "mime_type": "application/pdf"}},
    ]


def test_prefill_is_appended_to_the_last_user_content_keeping_attachments() -> None:
    history: list[Message] = [
        {"content": [{"text": "What is this?", "type": "text"}, IMAGE_DATA], "role": "user"},
    ]
    parts = compile_valid(history, prefill="<answer>")["contents"][-1]["parts"]
    assert parts == [
        {"text": "What is this?"},
        {"inline_data": {"data": PNG, "mime_type": "image/png"}},
        {"text": prompts.prefill_instruction("<answer>")},
    ]


def test_prefill_without_user_content_goes_to_the_placeholder_user_content() -> None:
    payload = ADAPTER.compile(request([], prefill="{"))
    # the placeholder user content is a user content, so it takes the instruction
    assert payload["contents"][0]["parts"][-1] == {"text": prompts.prefill_instruction("{")}
    only_model: list[Message] = [{"content": "hello", "role": "assistant"}]
    payload = ADAPTER.compile(request(only_model, prefill="{"))
    # the trailing model text leads the prefill, and the contents end with a user turn
    assert payload["contents"] == [
        {
            "parts": [
                {"text": prompts.CONVERSATION_STARTS},
                {"text": prompts.prefill_instruction("hello{")},
            ],
            "role": "user",
        }
    ]


def test_prefill_never_mutates_cached_conversions() -> None:
    cache = CountingCache()
    history: list[Message] = [{"content": "hi", "role": "user"}]
    with_prefill = ADAPTER.compile(request(history, prefill="X", cache=cache))
    without = ADAPTER.compile(request(history, cache=cache))
    assert len(with_prefill["contents"][0]["parts"]) == 2
    assert without["contents"][0]["parts"] == [{"text": "hi"}]


def test_invalid_tool_arguments_raise_a_compile_error_naming_the_message() -> None:
    history: list[Message] = [
        {"content": "go", "role": "user"},
        {"content": None, "role": "assistant", "tool_calls": [call("c1", "ls")]},
    ]
    history[1]["tool_calls"][0]["function"]["arguments"] = "{not json"
    with pytest.raises(CompileError, match=r"message 1: tool call 'c1' \(ls\).*not valid JSON"):
        ADAPTER.compile(request(history))
    history[1]["tool_calls"][0]["function"]["arguments"] = "[1, 2]"
    with pytest.raises(CompileError, match="JSON array, not an object"):
        ADAPTER.compile(request(history))
    history[1]["tool_calls"][0]["function"]["arguments"] = '{"x": NaN}'
    with pytest.raises(CompileError, match="not valid JSON"):
        ADAPTER.compile(request(history))


def test_empty_arguments_mean_no_arguments() -> None:
    history: list[Message] = [
        {"content": "go", "role": "user"},
        {"content": None, "role": "assistant", "tool_calls": [call("c1", "ls")]},
        {"content": "ok", "role": "tool", "tool_call_id": "c1"},
    ]
    history[1]["tool_calls"][0]["function"]["arguments"] = ""
    assert compile_valid(history)["contents"][1]["parts"][0]["function_call"]["args"] == {}


def test_a_result_without_its_call_needs_a_name() -> None:
    orphan: list[Message] = [
        {"content": "go", "role": "user"},
        {"content": "x", "role": "tool", "tool_call_id": "gone"},
    ]
    with pytest.raises(CompileError, match=r"message 1: .*'gone'.*name"):
        ADAPTER.compile(request(orphan))
    orphan[1]["name"] = "ls"
    part = compile_valid(orphan)["contents"][0]["parts"][1]
    assert part["function_response"]["name"] == "ls"


def test_synthetic_ids_and_disabled_ids_are_left_out() -> None:
    history: list[Message] = [
        {"content": "go", "role": "user"},
        {"content": None, "role": "assistant", "tool_calls": [call("gemini-call-ls-1", "ls")]},
        {"content": "x", "role": "tool", "tool_call_id": "gemini-call-ls-1"},
    ]
    contents = compile_valid(history)["contents"]
    assert contents[1]["parts"][0]["function_call"] == {"args": {}, "name": "ls"}
    assert contents[2]["parts"][0]["function_response"] == {
        "name": "ls",
        "response": {"result": "x"},
    }
    no_ids = GeminiAdapter(send_call_ids=False).compile(request(parallel_history()))
    assert "id" not in no_ids["contents"][1]["parts"][0]["function_call"]
    assert "id" not in no_ids["contents"][2]["parts"][0]["function_response"]


def test_tool_result_with_attachment_is_text_with_a_placeholder() -> None:
    history = parallel_history()
    history[2] = {**history[2], "content": [{"text": "see ", "type": "text"}, DOC_DATA]}
    response = compile_valid(history)["contents"][2]["parts"][0]["function_response"]
    assert response["response"] == {"result": "see [document: spec.pdf]"}


def test_thinking_is_not_sent() -> None:
    history: list[Message] = [
        {"content": "go", "role": "user"},
        {"content": "done", "role": "assistant", "thinking": {"thinking": "hmm"}},
        {"content": "next", "role": "user"},
    ]
    assert compile_valid(history)["contents"][1] == {"parts": [{"text": "done"}], "role": "model"}


def test_second_compile_converts_only_the_new_message() -> None:
    cache = CountingCache()
    history = [*parallel_history(), {"content": "thanks", "role": "assistant"}]
    first = ADAPTER.compile(request(history, cache=cache))
    converted = cache.misses  # a first compile converts without the memo: nothing to reuse yet
    history.append({"content": "and now?", "role": "user"})
    second = ADAPTER.compile(request(history, cache=cache))
    assert cache.misses == converted + 1
    assert second["contents"][1] is first["contents"][1]  # the unmerged model content, reused


def test_key_order_is_stable_whatever_the_input_order() -> None:
    history = parallel_history()
    reordered = [dict(reversed(list(m.items()))) for m in history]
    first = ADAPTER.compile(request(history, tools=TOOLS))
    second = ADAPTER.compile(request(reordered, tools=TOOLS))  # type: ignore[arg-type]
    assert json.dumps(first) == json.dumps(second)
    assert is_key_sorted(first)


@pytest.mark.parametrize(
    ("path", "value", "error", "match"),
    [
        (("contents", 0, "parts", 0, "txt"), "typo", ValidationError, "txt"),
        (("contents", 1, "role"), "assistant", PayloadMismatch, "role 'assistant'"),
        (("contents", 0, "parts", 0, "text"), "", PayloadMismatch, "empty text"),
        (("contents", 2, "role"), "model", PayloadMismatch, "same role"),
        (("contents", 2, "parts"), [], PayloadMismatch, "at least one part"),
        (("contents", 1, "parts", 0, "thought_signature"), "no base64!", ValidationError, "base64"),
        (("config", "system_instructions"), "typo", ValidationError, "system_instructions"),
    ],
)
def test_validator_rejects_what_the_sdk_or_api_would(
    path: tuple[str | int, ...], value: Any, error: type[Exception], match: str
) -> None:
    good = ADAPTER.compile(request(parallel_history()))
    validate_gemini(good)
    with pytest.raises(error, match=match):
        validate_gemini(altered(good, path, value))


def test_the_sdk_sends_the_compiled_payload() -> None:
    history = parallel_history()
    history[1] = {
        **history[1],
        "tool_calls": [
            call("c1", "read", {"path": "a"}, gemini_thought_signature="c2ln"),
            history[1]["tool_calls"][1],
        ],
    }
    history.append({"content": [{"text": "Look:", "type": "text"}, IMAGE_DATA], "role": "user"})
    payload = compile_valid(history, tools=TOOLS)
    with loopback_server(GEMINI_RESPONSE) as server:
        client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))
        response = client.models.generate_content(model="gemini-test", **payload)
        body = server.last_body
        path = server.requests[-1].path
    assert response.text == "ok"
    assert path.endswith("/models/gemini-test:generateContent")
    assert body["systemInstruction"] == {"parts": [{"text": "You are terse."}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["contents"][1]["parts"][0] == {
        "functionCall": {"args": {"path": "a"}, "id": "c1", "name": "read"},
        "thoughtSignature": "c2ln",
    }
    last = body["contents"][2]["parts"]
    assert [next(iter(p)) for p in last] == [
        "functionResponse",
        "functionResponse",
        "text",
        "inlineData",
    ]
    assert last[1]["functionResponse"]["response"] == {"body": "B", "lines": 2}
    assert last[3]["inlineData"]["data"] == PNG
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "read"
    assert declaration["parameters_json_schema"]["required"] == ["path"]
