"""The pruner the way a host runs it: the history reloaded as fresh dicts every turn, the model's
namespace calls resolved and checked against the blocklist, results sent back, and overflow
moving old calls out of the window (then, and only then, their tools may be pruned)."""

from __future__ import annotations

import json
from typing import Any

from contextchef import ContextChef, summarize
from tests.selection.pruner_fixtures import GIT, TOOLS, call, defined_names, validate


class PerMessage:
    """10 tokens a message: in a payload as sent, every object with a role."""

    def count_text(self, text: str) -> int:
        return 10 * text.count('"role":')

    def count_message(self, message: Any) -> int:
        return 10


def test_a_scripted_loop_resolves_checks_and_stays_byte_stable() -> None:
    database: list[str] = [
        json.dumps({"role": "user", "content": "Commit the fix, then mail Ada."})
    ]
    chef = ContextChef(pruner={"namespaces": GIT, "blocked": ["send_email"]})
    chef.tools.register(TOOLS).allow_only(["git", "send_email"])
    model_turns = [
        ("git", {"action": "git_status", "args": {}}),
        ("git", {"action": "git_commit", "args": {"message": "Fix"}}),
        ("send_email", {"to": "ada", "body": "done"}),
    ]
    ran: list[tuple[str, dict[str, Any]]] = []
    previous = ""
    for turn, (name, arguments) in enumerate(model_turns):
        chef.set_history([json.loads(row) for row in database])  # fresh dicts every turn
        payload = chef.compile(target="anthropic")
        validate(payload, "anthropic")
        text = json.dumps(payload["tools"])
        assert not previous or text == previous  # the tools prefix never moved
        previous = text
        wire = call(f"c{turn}", name, arguments)
        check = chef.tools.check_tool_call(wire)
        if check.allowed:
            tool, args = chef.tools.resolve_namespace(wire)
            ran.append((tool, args))
            result = f"{tool} ok"
        else:
            assert check.reason is not None
            result = check.reason
        database.append(json.dumps({"role": "assistant", "content": None, "tool_calls": [wire]}))
        database.append(json.dumps({"role": "tool", "tool_call_id": wire["id"], "content": result}))
    assert ran == [("git_status", {}), ("git_commit", {"message": "Fix"})]
    assert "blocked right now" in json.loads(database[-1])["content"]
    chef.set_history([json.loads(row) for row in database])
    assert defined_names(chef.compile(target="openai"), "openai") == [
        "git",
        "send_email",
        "context",
    ]


def test_a_tool_leaves_the_payload_once_its_call_leaves_the_window() -> None:
    chef = ContextChef(
        budget={"context_window": 100, "trigger_ratio": 1},
        overflow={"strategy": summarize(lambda messages: "S", preserve_recent_messages=2)},
        tokenizer=PerMessage(),
    )
    chef.tools.register(TOOLS)
    history: list[Any] = [
        {"role": "user", "content": "Mail Ada."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "send_email")]},
        {"role": "tool", "tool_call_id": "c1", "content": "sent"},
    ]
    chef.set_history(history).tools.allow_only(["read_file"])
    assert "send_email" in defined_names(chef.compile(target="openai"), "openai")
    for index in range(8):  # the conversation grows past the window: the old call is evicted
        history += [
            {"role": "user", "content": f"question {index}"},
            {"role": "assistant", "content": f"answer {index}"},
        ]
    chef.set_history(history)
    payload = chef.compile(target="openai")
    assert payload.meta.overflow is not None and payload.meta.overflow.changed
    assert "send_email" not in json.dumps(payload["messages"])
    assert defined_names(payload, "openai") == ["read_file", "context"]
