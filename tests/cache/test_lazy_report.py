"""`meta.cache` is measured when first read: whichever compiles a host reads it on, and in
whatever order, each payload reports what it would have reported had every compile been read
at once."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from contextchef import ContextChef
from contextchef.cache.economics import CacheReport


def _history(rng: random.Random, turns: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for turn in range(turns):
        question = f"Question {turn}: " + "why? " * rng.randint(1, 9)
        history.append({"role": "user", "content": question})
        call = {"id": f"c{turn}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history.append({"role": "assistant", "content": "Let me look.", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{turn}", "content": "x" * turn})
        history.append({"role": "assistant", "content": f"Answer {turn}."})
    return history


def _script(seed: int) -> list[list[dict[str, Any]]]:
    """Histories a host sets turn after turn: appended to, reloaded, edited, cut."""
    rng = random.Random(seed)
    history = _history(rng, 6)
    out = [history]
    for turn in range(12):
        move = rng.choice(("append", "append", "reload", "edit", "cut"))
        if move == "append":
            history = [*history, {"role": "user", "content": f"More {turn}."}]
        elif move == "reload":
            history = json.loads(json.dumps(history))
        elif move == "edit":
            history = [dict(m) for m in history]
            history[rng.randrange(len(history))]["content"] = f"edited {turn}"
            history = [m for m in history if m["role"] != "tool" or m["content"] is not None]
        else:
            history = history[: max(1, len(history) - rng.randint(1, 3))]
            while history[-1].get("tool_calls"):
                history.pop()
        out.append(history)
    return out


def _figures(report: CacheReport) -> tuple[Any, ...]:
    return (report.prefix_bytes, report.total_bytes, report.breakpoints, report.changed)


def _payloads(target: str, script: list[list[dict[str, Any]]]) -> list[Any]:
    chef = ContextChef().set_system_prompt("You are terse.")
    return [chef.set_history(history).compile(target=target) for history in script]


@pytest.mark.parametrize("target", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize("seed", range(4))
def test_read_late_or_never_the_report_is_the_one_read_at_once(target: str, seed: int) -> None:
    script = _script(seed)
    expected = []
    chef = ContextChef().set_system_prompt("You are terse.")
    for history in script:
        expected.append(_figures(chef.set_history(history).compile(target=target).meta.cache))
    assert expected[0][0] == 0 and any(figures[0] > 0 for figures in expected[1:])

    rng = random.Random(seed)
    payloads = _payloads(target, script)
    order = list(range(len(payloads)))
    rng.shuffle(order)
    read = order[: len(order) // 2]  # half of them, out of order, after every compile
    assert {i: _figures(payloads[i].meta.cache) for i in read} == {i: expected[i] for i in read}

    chef = ContextChef().set_system_prompt("You are terse.")
    for index, history in enumerate(script):  # some read as they come, some never
        payload = chef.set_history(history).compile(target=target)
        if rng.random() < 0.4:
            assert _figures(payload.meta.cache) == expected[index]


def test_an_audited_chef_measures_during_the_compile_and_reports_the_same() -> None:
    script = _script(9)
    audited = ContextChef(cache_audit=True).set_system_prompt("You are terse.")
    found: list[Any] = []
    audited.on("cache:finding", found.append)
    lazy = _payloads("anthropic", script)
    for history, payload in zip(script, lazy, strict=True):
        report = audited.set_history(history).compile(target="anthropic").meta.cache
        assert _figures(report) == _figures(payload.meta.cache)
    assert found  # the edits and cuts break the prefix: the audit says so as it happens
