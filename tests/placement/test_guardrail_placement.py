"""`with_guardrails(placement=...)`: the reference's option, with our default kept.

`"last_user"` (the default) puts the XML instruction at the end of the last user message;
`"system"` makes it a system message after the history, which Anthropic and Gemini lift into
their system parameter. The prefill is the reply's opening either way, and snapshots carry the
placement (a snapshot written before the option existed still loads).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextchef import ContextChef, Snapshot
from contextchef.errors import ConfigError

TAG = "final"
MARK = f"Write your entire reply inside <{TAG}>"


def _chef(**guardrails: Any) -> ContextChef:
    chef = ContextChef().set_system_prompt([{"role": "system", "content": "You are terse."}])
    chef.set_history([{"role": "user", "content": "hi"}])
    return chef.with_guardrails(enforce_xml={"output_tag": TAG}, prefill="<final>", **guardrails)


def _last_user_text(payload: Any, target: str) -> str:
    if target == "gemini":
        users = [c for c in payload["contents"] if c["role"] == "user"]
        return json.dumps(users[-1])
    if target == "openai-responses":
        users = [m for m in payload["input"] if m.get("role") == "user"]
        return json.dumps(users[-1])
    users = [m for m in payload["messages"] if m["role"] == "user"]
    return json.dumps(users[-1])


def _system_text(payload: Any, target: str) -> str:
    """Where the target keeps system text: its system parameter, or its system messages."""
    if target == "anthropic":
        return json.dumps(payload["system"])
    if target == "gemini":
        return json.dumps(payload["config"]["system_instruction"])
    if target == "openai-responses":
        inline = [m for m in payload["input"] if m.get("role") == "system"]
        return json.dumps([payload["instructions"], inline])
    return json.dumps([m for m in payload["messages"] if m["role"] == "system"])


TARGETS = ["openai", "anthropic", "gemini", "openai-responses"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("options", "in_user", "in_system"),
    [
        ({}, True, False),
        ({"placement": "last_user"}, True, False),
        ({"placement": "system"}, False, True),
    ],
)
def test_the_instruction_goes_where_placement_says(
    target: str, options: dict[str, str], in_user: bool, in_system: bool
) -> None:
    payload = _chef(**options).compile(target=target)
    assert (MARK in _last_user_text(payload, target)) is in_user
    assert (MARK in _system_text(payload, target)) is in_system
    assert "<final>" in json.dumps(payload)  # the prefill, native or degraded, either way


def test_system_placement_is_the_last_message_on_openai() -> None:
    messages = _chef(placement="system").compile(target="openai")["messages"]
    assert messages[-1]["role"] == "system" and MARK in messages[-1]["content"]
    assert messages[-2]["role"] == "user" and MARK not in messages[-2]["content"]


def test_the_dict_form_takes_placement_too() -> None:
    chef = ContextChef().set_history([{"role": "user", "content": "hi"}])
    chef.with_guardrails({"enforce_xml": {"output_tag": TAG}, "placement": "system"})
    assert chef.compile(target="openai")["messages"][-1]["role"] == "system"


@pytest.mark.parametrize("bad", ["tail", "System", 1])
def test_an_unknown_placement_is_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match="placement"):
        ContextChef().with_guardrails(enforce_xml=TAG, placement=bad)  # type: ignore[arg-type]


def test_snapshots_carry_the_placement_and_older_ones_still_load() -> None:
    chef = _chef(placement="system")
    data = chef.snapshot().to_dict()
    assert data["guardrails"]["placement"] == "system"
    fresh = ContextChef().restore(Snapshot.from_dict(data))
    assert fresh.compile(target="openai")["messages"][-1]["role"] == "system"

    default = _chef().snapshot().to_dict()
    assert set(default["guardrails"]) == {"output_tag", "prefill"}  # the older form, unchanged
    older = ContextChef().restore(Snapshot.from_dict(default))
    assert MARK in older.compile(target="openai")["messages"][-1]["content"]
