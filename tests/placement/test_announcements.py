"""Announcements: standing host notices on every compile until retracted, per target; `auto`
keeps the cached prefix byte-identical."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from contextchef import ConfigError, ContextChef
from contextchef.placement.announcements import Announcement
from tests.payload_parts import TARGETS, conversation, dumps, last_user_text, system_text


def turns(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        out += [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}]
    return [*out, {"role": "user", "content": f"q{n}"}]


def unmarked(value: Any) -> Any:
    """`value` without cache breakpoints: the provider matches its cache on content, and the
    automatic breakpoints move as the conversation grows (see "Prompt caching")."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(item) for item in value]
    return value


def chef() -> ContextChef:
    return ContextChef().set_system_prompt("You are a support agent.").set_history(turns(2))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("channel", ["auto", "tail"])
def test_auto_and_tail_go_to_the_end_and_keep_the_prefix(target: str, channel: str) -> None:
    c = chef()
    before = c.compile(target=target)
    c.prompt.announce("maintenance", "Billing is read-only until 18:00 UTC.", channel=channel)
    payload = c.compile(target=target)
    assert system_text(payload, target) == system_text(before, target)
    assert unmarked(conversation(payload, target)[:-1]) == unmarked(
        conversation(before, target)[:-1]
    )
    assert last_user_text(payload, target) == (
        "q2\n\n<announcements>\n"
        "Notices from the application that runs this conversation (not from the user):\n"
        '<announcement id="maintenance">Billing is read-only until 18:00 UTC.</announcement>\n'
        "</announcements>"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_system_channel_goes_after_the_system_prompt(target: str) -> None:
    c = chef()
    c.prompt.announce("policy", "Refunds need a manager.", channel="system")
    payload = c.compile(target=target)
    system = system_text(payload, target)
    assert system.startswith("You are a support agent.")
    assert system.endswith(
        '<announcement id="policy">Refunds need a manager.</announcement>\n</announcements>'
    )
    assert "announcement" not in dumps(conversation(payload, target))


@pytest.mark.parametrize("target", TARGETS)
def test_delivered_every_compile_until_retracted(target: str) -> None:
    plain = dumps(chef().compile(target=target))
    c = chef()
    c.prompt.announce("a", "First.").announce("b", "Second.", channel="system")
    for step in range(3):  # every compile, the host's history growing
        c.set_history(turns(2 + step))
        payload = c.compile(target=target)
        assert '<announcement id="a">First.</announcement>' in last_user_text(payload, target)
        assert '<announcement id="b">Second.</announcement>' in system_text(payload, target)
    c.set_history(turns(2))
    assert c.prompt.retract_announcement("a") and c.prompt.retract_announcement("b")
    assert not c.prompt.retract_announcement("a")
    assert dumps(c.compile(target=target)) == plain


def test_announcing_an_id_again_replaces_it_in_place() -> None:
    c = chef()
    c.prompt.announce("a", "One.").announce("b", "Two.").announce("a", "One, revised.")
    assert c.prompt.announcements == [Announcement("a", "One, revised."), Announcement("b", "Two.")]
    text = last_user_text(c.compile(), "openai")
    assert text.index('id="a">One, revised.') < text.index('id="b">Two.')


def test_text_is_escaped_so_a_notice_cannot_close_the_block() -> None:
    c = chef()
    c.prompt.announce('x"y', "</announcements> & <b>")
    text = last_user_text(c.compile(), "openai")
    assert (
        '<announcement id="x&quot;y">&lt;/announcements&gt; &amp; &lt;b&gt;</announcement>' in text
    )
    assert text.count("</announcements>") == 1


class Task(BaseModel):
    goal: str


def test_in_the_tail_they_come_before_the_live_state_and_the_guardrails() -> None:
    c = chef()
    c.prompt.announce("a", "Heads up.").with_guardrails(enforce_xml={"output_tag": "reply"})
    text = last_user_text(c.set_dynamic_state(Task, {"goal": "refund"}).compile(), "openai")
    order = ["<announcements>", "<dynamic_state>", '<system_reminder kind="output_format">']
    assert [text.index(marker) for marker in order] == sorted(text.index(m) for m in order)


def test_bad_announcements_are_refused_and_change_nothing() -> None:
    c = chef()
    c.prompt.announce("a", "Kept.")
    before = dumps(c.compile())
    for args, message in [
        (("", "text"), "id must be a non-empty string"),
        (("b", ""), "text must be a non-empty string"),
        (("b", "text", "top"), "channel must be 'auto', 'system' or 'tail'"),
        ((3, "text"), "id must be a non-empty string"),
    ]:
        with pytest.raises(ConfigError, match=message):
            c.prompt.announce(*args)  # type: ignore[arg-type]
    assert dumps(c.compile()) == before
