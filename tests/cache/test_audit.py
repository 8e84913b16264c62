"""`cache_audit=True` finds what costs cache hits in a deliberately bad layout and nothing in
the default one; `pipeline_checks=True` reports broken invariants without touching the payload."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from pydantic import BaseModel

from contextchef import ContextChef, summarize
from contextchef.events import CacheFinding, PipelineInvariant

TARGETS = ("openai", "openai-responses", "anthropic", "gemini")


class Step(BaseModel):
    step: int


def fresh(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return json.loads(json.dumps(messages))  # type: ignore[no-any-return]


def _loop(turns: int) -> list[list[dict[str, Any]]]:
    """A tool-calling conversation, as the host holds it before each model call."""
    history: list[dict[str, Any]] = []
    steps = []
    for turn in range(turns):
        if turn % 3 == 0:
            history.append({"role": "user", "content": f"Task {turn}: go on. " + "words " * 40})
        call = {"id": f"c{turn}", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        history.append({"role": "assistant", "content": f"Looking {turn}.", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{turn}", "content": "a.py " * 30})
        steps.append(fresh(history))
    return steps


@pytest.mark.parametrize("target", TARGETS)
def test_the_default_layout_has_no_findings(target: str) -> None:
    chef = ContextChef(
        memory={},
        cache_audit=True,
        budget={"context_window": 3000, "trigger_ratio": 0.8},
        overflow={"strategy": summarize(lambda messages: "Summary of the work.")},
    ).set_system_prompt("You are a careful agent.")
    events: list[CacheFinding] = []
    chef.on("cache:finding", events.append)
    memory = chef.memory
    overflows = 0
    for turn, history in enumerate(_loop(30)):
        if turn % 4 == 2:
            memory.set(f"fact{turn}", f"learned {turn}")
        chef.set_dynamic_state(Step(step=turn))
        payload = chef.set_history(history).compile(target=target)
        overflows += bool(payload.meta.overflow and payload.meta.overflow.changed)
        assert payload.meta.cache.findings == ()
    assert events == [] and overflows >= 1


def test_a_bad_layout_gets_one_finding_per_problem() -> None:
    chef = ContextChef(cache_audit=True)
    events: list[CacheFinding] = []
    chef.on("cache:finding", events.append)
    kinds_per_turn = []
    for turn, history in enumerate(_loop(4)):
        system = {
            "role": "system",
            "content": f"You are an agent. Now: 2026-11-30T20:{turn:02d}:05Z.",
            "_cache_breakpoint": True,
        }
        chef.set_system_prompt([system])
        chef.set_dynamic_state(Step(step=turn), placement="system")
        payload = chef.set_history(history).compile(target="anthropic")
        kinds_per_turn.append(sorted(f.kind for f in payload.meta.cache.findings))
    # first compile: the timestamp (once) and the state in the system part; later: the clock
    # changed the prefix, the host's breakpoint caches a prefix that changed, the state again
    assert kinds_per_turn[0] == ["state_in_system", "timestamp_in_prefix"]
    for kinds in kinds_per_turn[1:]:
        assert kinds == ["breakpoint_after_volatile", "state_in_system", "timestamp_in_prefix"]
    assert [f.kind for f in events] == [k for kinds in kinds_per_turn for k in kinds] or len(
        events
    ) == sum(map(len, kinds_per_turn))
    stamp = next(f for f in events if f.kind == "timestamp_in_prefix")
    assert (stamp.section, stamp.index, stamp.target) == ("system", 0, "anthropic")
    assert "2026-11-30T20:00" in stamp.message


def test_a_host_that_rewrites_an_old_message_gets_a_changed_prefix_finding() -> None:
    chef = ContextChef(cache_audit=True).set_system_prompt("S")
    steps = _loop(6)
    for turn, history in enumerate(steps):
        if turn >= 3:
            history[0]["content"] = f"Task 0, edited at step {turn}."
        payload = chef.set_history(history).compile(target="openai")
        findings = payload.meta.cache.findings
        if turn >= 3:
            assert [(f.kind, f.section, f.index) for f in findings] == [
                ("changed_prefix", "messages", 2)  # after the system prompt and instruction
            ]
        else:
            assert findings == ()


def test_the_audit_never_fails_a_compile_and_is_off_by_default() -> None:
    chef = ContextChef()
    for history in _loop(3):
        chef.set_system_prompt(f"Now is 2026-11-30 20:{len(history):02d}:00")
        assert chef.set_history(history).compile(target="anthropic").meta.cache.findings == ()


# -- pipeline checks ---------------------------------------------------------------------------


def _checked_history() -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    return [
        {"role": "user", "content": "remember: the build uses make", "pinned": True},
        {"role": "assistant", "content": "noted"},
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "user", "content": "thanks"},
    ]


def test_pipeline_checks_find_nothing_in_an_ordinary_run() -> None:
    chef = ContextChef(
        memory={},
        pipeline_checks=True,
        budget={"context_window": 3000, "trigger_ratio": 0.8},
        overflow={"strategy": summarize(lambda messages: "Summary.")},
    )
    found: list[PipelineInvariant] = []
    chef.on("pipeline:invariant", found.append)
    for turn, history in enumerate(_loop(30)):
        chef.set_dynamic_state(Step(step=turn))
        pinned = [{"role": "user", "content": "always: use make", "pinned": True}, *history]
        for target in TARGETS:
            chef.set_history(pinned).compile(target=target)
    assert found == []


@pytest.mark.parametrize(
    ("rewrite", "checks"),
    [
        # dropping a message also moves every later one: their bytes no longer match
        (lambda messages: messages[1:], {"pinned", "prefix_bytes"}),
        (
            lambda messages: [m for m in messages if m["role"] != "tool"],
            {"tool_pairs", "prefix_bytes"},
        ),
        (
            lambda messages: [messages[0], {**messages[1], "content": "changed"}, *messages[2:]],
            {"prefix_bytes"},
        ),
    ],
)
def test_a_slot_that_breaks_an_invariant_is_reported_never_raised(
    rewrite: Any, checks: set[str], caplog: pytest.LogCaptureFixture
) -> None:
    def build(checks: bool) -> tuple[ContextChef, list[PipelineInvariant]]:
        chef = ContextChef(pipeline_checks=checks).set_dynamic_state(Step(step=1))
        chef.use("after_assemble", rewrite)
        found: list[PipelineInvariant] = []
        chef.on("pipeline:invariant", found.append)
        return chef.set_history(_checked_history()), found

    checked, found = build(True)
    plain, silent = build(False)
    with caplog.at_level(logging.WARNING, logger="contextchef.cache"):
        for _ in range(2):
            for target in TARGETS:
                payload = checked.compile(target=target)
                assert json.dumps(payload) == json.dumps(plain.compile(target=target))
    assert silent == []
    assert {f.check for f in found} == checks
    assert len(found) == 2 * len(TARGETS) * len(checks)  # events every compile
    warnings = [r for r in caplog.records if "pipeline check" in r.getMessage()]
    assert len(warnings) == len(TARGETS) * len(checks)  # each violation logged once
