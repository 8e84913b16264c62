"""`add_response` and `add_tool_result`: every form of a reply, the errors a host can make, and
the placeholders a compile needs while calls wait for their results, which never outlive them.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from google.genai import types

from contextchef import (
    AsyncContextChef,
    ContextChef,
    Snapshot,
    from_anthropic,
    from_gemini,
    from_openai,
    from_openai_responses,
    prompts,
    reset,
)
from contextchef.errors import ConfigError, MessageError
from tests.agent_loop import REPLIES, TARGETS, Call, new_chef, results_in, script

SDK_TYPES: dict[str, Any] = {
    "anthropic": anthropic.types.Message,
    "gemini": types.GenerateContentResponse,
    "openai": openai.types.chat.ChatCompletion,
    "openai-responses": openai.types.responses.Response,
}
THREE = [
    Call("call_a", "read_file", {"path": "a.py"}),
    Call("call_b", "run_tests", {"path": "b.py"}),
    Call("call_c", "read_file", {"path": "c.py"}),
]


def sdk_reply(target: str, text: str | None = "On it.", calls: list[Call] = THREE) -> Any:
    """The SDK's own response object for a reply (validated: every field the SDK requires)."""
    return SDK_TYPES[target].model_validate(REPLIES[target](0, text, calls))


def history_after(target: str, reply: Any) -> str:
    return json.dumps(new_chef(target).add_response(reply).history, sort_keys=True)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("turn", range(4))
def test_the_canned_replies_are_what_the_sdks_validate(target: str, turn: int) -> None:
    text, calls = script(turn)
    parsed = SDK_TYPES[target].model_validate(REPLIES[target](turn, text, calls))
    assert parsed.model_dump(mode="json", exclude_none=True)


@pytest.mark.parametrize("target", TARGETS)
def test_every_form_of_a_reply_adds_the_same_messages(target: str) -> None:
    reply = sdk_reply(target)
    forms = [
        reply,
        reply.model_dump(),
        reply.model_dump(mode="json"),
        json.loads(reply.model_dump_json()),
        REPLIES[target](0, "On it.", THREE),  # the JSON the API sent
    ]
    if target == "openai":
        message = reply.choices[0].message
        forms += [message, message.model_dump()]
    elif target == "anthropic":
        forms.append({"content": [b.model_dump() for b in reply.content], "role": "assistant"})
    elif target == "gemini":
        content = reply.candidates[0].content
        forms += [content, content.model_dump(mode="json")]
    expected = history_after(target, reply)
    assert all(history_after(target, form) == expected for form in forms)
    added = json.loads(expected)[1:]
    assert [m["role"] for m in added] == ["assistant"]  # nothing invented next to it
    assert [c["function"]["name"] for c in added[0]["tool_calls"]] == [c.name for c in THREE]


def test_one_responses_output_item_and_an_ir_message_are_replies_too() -> None:
    item = {"arguments": "{}", "call_id": "c1", "name": "ls", "type": "function_call"}
    chef = ContextChef().set_history([{"content": "go", "role": "user"}]).add_response(item)
    assert chef.history[1]["tool_calls"][0]["id"] == "c1"
    ir = {"content": "Noted.", "pinned": True, "role": "assistant"}
    assert ContextChef().add_response(ir).history == [
        {"content": prompts.CONVERSATION_OPENS_WITH_ASSISTANT, "role": "user"},
        ir,
    ]


@pytest.mark.parametrize(
    ("reply", "error", "match"),
    [
        (42, ConfigError, "got int"),
        ("Done.", ConfigError, r"\{'role': 'assistant', 'content': text\}"),
        ({"foo": 1}, MessageError, r"not a reply .* keys are \['foo'\]"),
        ({"content": "hi", "role": "user"}, MessageError, "'user' message"),
        ({"content": "x", "role": "tool", "tool_call_id": "c"}, MessageError, "add_tool_result"),
        ({"choices": [], "object": "chat.completion"}, MessageError, "no choices"),
        ({"candidates": [], "promptFeedback": {"blockReason": "SAFETY"}}, MessageError, "no cand"),
        ({"candidates": [{"finishReason": "SAFETY"}]}, MessageError, "finish reason SAFETY"),
        ({"parts": [{"text": "hi"}], "role": "user"}, MessageError, "'model' content"),
        (
            {
                "content": [{"id": "s", "input": {}, "name": "web", "type": "server_tool_use"}],
                "role": "assistant",
                "type": "message",
            },
            MessageError,
            "server_tool_use",
        ),
    ],
)
def test_what_is_not_a_reply_is_refused_and_changes_nothing(
    reply: Any, error: type[Exception], match: str
) -> None:
    chef = new_chef("openai").add_response(sdk_reply("openai"))
    before = json.dumps(chef.compile())
    with pytest.raises(error, match=match):
        chef.add_response(reply)
    assert json.dumps(chef.compile()) == before


@pytest.mark.parametrize(
    ("call_id", "name", "error", "match"),
    [
        ("call_z", None, MessageError, "no tool call in the history has the id 'call_z'"),
        ("call_a", None, MessageError, "call 'call_a' already has a result"),
        ("call_b", "read_file", MessageError, "is a call of 'run_tests', not 'read_file'"),
        ("old_1", None, MessageError, "belongs to an earlier turn"),
        (None, "ls", MessageError, "no call of 'ls' is waiting"),
        (None, None, ConfigError, "needs the call's id"),
        ("", None, ConfigError, "non-empty string"),
    ],
)
def test_a_result_must_answer_a_call_that_waits_for_one(
    call_id: Any, name: Any, error: type[Exception], match: str
) -> None:
    chef = new_chef("anthropic")
    chef.add_response({"content": None, "role": "assistant", "tool_calls": [_call("old_1")]})
    chef.add_tool_result("old_1", "done").append_history([{"content": "more", "role": "user"}])
    chef.add_response(sdk_reply("anthropic")).add_tool_result("call_a", "A")
    before = json.dumps(chef.compile())
    with pytest.raises(error, match=match) as raised:
        chef.add_tool_result(call_id, "output", name=name)
    if error is MessageError:
        assert "waiting for a result: 'call_b' (run_tests), 'call_c' (read_file)" in str(
            raised.value
        )
    assert json.dumps(chef.compile()) == before


def test_nothing_waits_after_a_final_answer() -> None:
    chef = new_chef("openai").add_response({"content": "All done.", "role": "assistant"})
    with pytest.raises(MessageError, match="no call is waiting for a result"):
        chef.add_tool_result("call_a", "late")


def test_a_result_may_hold_content_parts() -> None:
    chef = new_chef("anthropic").add_response(sdk_reply("anthropic", calls=THREE[:1]))
    image = {"data": "iVBORw0KGgo=", "media_type": "image/png", "type": "image"}
    chef.add_tool_result("call_a", [{"text": "the screenshot:", "type": "text"}, image])
    result = chef.compile()["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "call_a"
    assert [block["type"] for block in result["content"]] == ["text", "image"]


def _call(call_id: str) -> Any:
    return {"function": {"arguments": "{}", "name": "ls"}, "id": call_id, "type": "function"}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("between", ["nothing", "one compile", "compiles", "snapshots"])
def test_placeholders_for_waiting_calls_never_outlive_them(target: str, between: str) -> None:
    """A compile while the calls wait answers them with placeholders (the provider would
    refuse the payload otherwise); the real results replace them, whatever came between."""
    chef = new_chef(target)
    assert isinstance(chef, ContextChef)
    chef.add_response(sdk_reply(target))
    if between != "nothing":
        payload = chef.compile()
        assert [fix.kind for fix in payload.meta.repairs] == ["added_missing_result"] * 3
        assert results_in(target, payload)[0] == [prompts.NO_TOOL_RESULT] * 3
    assert prompts.NO_TOOL_RESULT not in json.dumps(chef.history)  # only the payload had them
    outputs = [f"output of {call.id}" for call in THREE]
    for waiting, (call, output) in enumerate(zip(THREE, outputs, strict=True), -2):
        if between == "snapshots":
            chef.restore(Snapshot.from_json(chef.snapshot().to_json()))
        name = call.name if target == "gemini" else None
        chef.add_tool_result(None if target == "gemini" else call.id, output, name=name)
        if between in ("compiles", "snapshots"):
            assert len(chef.compile().meta.repairs) == -waiting
    payload = chef.compile()
    assert payload.meta.repairs == ()
    assert results_in(target, payload) == (outputs, 3)
    assert prompts.NO_TOOL_RESULT not in json.dumps(payload)


def test_an_overflow_while_calls_wait_keeps_their_turn() -> None:
    """A reset over the window while calls wait keeps the waiting turn: its results, added
    next, still have their calls to answer, and the reset stays landed."""
    chef = ContextChef(budget={"context_window": 100_000}, overflow={"strategy": reset()})
    chef.set_history([{"content": "An old task.", "role": "user"}])
    chef.add_response({"content": "Done long ago.", "role": "assistant"})
    chef.append_history([{"content": "A new task.", "role": "user"}])
    chef.add_response(sdk_reply("openai")).request_new_context()
    payload = chef.compile()
    assert payload.meta.overflow is not None and payload.meta.overflow.changed
    assert "An old task." not in json.dumps(payload)
    assert results_in("openai", payload)[0] == [prompts.NO_TOOL_RESULT] * 3
    assert prompts.NO_TOOL_RESULT not in json.dumps(chef.history)  # the landed history too
    chef.restore(Snapshot.from_json(chef.snapshot().to_json()))
    for call in THREE:
        chef.add_tool_result(call.id, f"output of {call.id}")
    payload = chef.compile()
    assert payload.meta.repairs == ()
    assert results_in("openai", payload) == ([f"output of {c.id}" for c in THREE], 3)
    assert "An old task." not in json.dumps(payload)  # the reset is still in force


def test_gemini_calls_without_ids_are_numbered_across_the_conversation() -> None:
    """Adding Gemini replies one at a time gives the ids `from_gemini` gives the whole
    conversation, so no two calls share one (no renaming repair on any compile)."""
    chef = new_chef("gemini")
    contents: list[Any] = [{"parts": [{"text": "Fix the failing parser test."}], "role": "user"}]
    for turn in range(3):
        reply = sdk_reply("gemini", None, THREE)
        chef.add_response(reply)
        contents.append(reply.candidates[0].content)
        responses = []
        for call in THREE:
            chef.add_tool_result(None, f"turn {turn}: {call.id}", name=call.name)
            answer = {"name": call.name, "response": {"result": f"turn {turn}: {call.id}"}}
            responses.append({"function_response": answer})
        contents.append({"parts": responses, "role": "user"})
        assert chef.compile().meta.repairs == ()
    ids = [c["id"] for m in chef.history for c in m.get("tool_calls") or ()]
    assert ids == [
        c["id"] for m in from_gemini(contents).history for c in m.get("tool_calls") or ()
    ]
    assert len(set(ids)) == 9 and ids[-1] == "gemini-call-read_file-6"
    assert chef.history == from_gemini(contents).history


def test_async_chef_adds_the_same_messages() -> None:
    for target in TARGETS:
        sync_chef = new_chef(target).add_response(sdk_reply(target))
        async_chef = new_chef(target, asynchronous=True).add_response(sdk_reply(target))
        assert isinstance(async_chef, AsyncContextChef)
        assert async_chef.history == sync_chef.history


def test_importing_one_reply_invents_nothing() -> None:
    """An importer given one reply converts it; it no longer adds an "earlier conversation
    omitted" user turn and placeholder results (`repair=True` still does, on request)."""
    chat = sdk_reply("openai").choices[0].message
    message = sdk_reply("anthropic")
    content = sdk_reply("gemini").candidates[0].content
    output = sdk_reply("openai-responses").output
    for imported in (
        from_openai([chat]),
        from_anthropic([message]),
        from_gemini([content]),
        from_openai_responses(output),
    ):
        assert imported.fixes == []
        assert [m["role"] for m in imported.history] == ["assistant"]
        assert len(imported.history[0]["tool_calls"]) == 3
        assert prompts.NO_TOOL_RESULT not in json.dumps(imported)
        assert prompts.CONVERSATION_CONTINUES not in json.dumps(imported)
    repaired = from_anthropic([message], repair=True)
    assert [fix.kind for fix in repaired.fixes].count("added_missing_result") == 3
    opens = {"content": prompts.CONVERSATION_OPENS_WITH_ASSISTANT, "role": "user"}
    assert repaired.history[0] == opens


def test_only_placeholders_for_results_still_to_come_are_left_out_of_the_history() -> None:
    """A call whose turn is over (a user message came next) keeps its placeholder: no result
    can come for it any more. A real result that happens to read like one is the host's."""
    closed = {"content": None, "role": "assistant", "tool_calls": [_call("c1")]}
    chef = new_chef("openai").append_history([closed, {"content": "Never mind.", "role": "user"}])
    placeholder = {"content": prompts.NO_TOOL_RESULT, "role": "tool", "tool_call_id": "c1"}
    assert chef.history[2] == placeholder
    chef.add_response({"content": None, "role": "assistant", "tool_calls": [_call("c2")]})
    chef.add_tool_result("c2", prompts.NO_TOOL_RESULT)
    assert chef.history[-1] == {**placeholder, "tool_call_id": "c2"}
    repairs = chef.compile().meta.repairs
    assert [(fix.kind, "'c1'" in fix.detail) for fix in repairs] == [("added_missing_result", True)]
