"""Memory's `importance` (stored, shown to the model, handed to the selector) and TTLs in every
unit, including the TypeScript reference's `{"ms": n}`."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from contextchef import ContextChef, prompts
from contextchef.errors import ConfigError
from contextchef.memory import Memory, MemoryEntry
from contextchef.store import InMemoryBackend, Store
from tests.contract.helpers import Clock

T0 = 1_700_000_000.0


def _memory(**options: Any) -> tuple[Memory, Store, Clock]:
    clock = Clock(T0)
    store = Store(InMemoryBackend(), clock=clock)
    return Memory(store, clock=clock, **options), store, clock


# -- importance -----------------------------------------------------------------------------


def test_importance_is_stored_kept_and_cleared() -> None:
    memory, store, _ = _memory()
    memory.set("goal", "ship v2", importance=5)
    stored = store.namespace("memory").get("goal")
    assert stored is not None and stored.meta["importance"] == 5
    assert memory.get("goal").importance == 5  # type: ignore[union-attr]
    memory.set("goal", "ship v3")  # left unset: kept
    memory.update("goal", "ship v4")  # the model's edit keeps it too
    memory.rename("goal", "objective")
    assert memory.get("objective").importance == 5  # type: ignore[union-attr]
    memory.set("objective", "ship v5", importance=None)  # None: cleared
    assert memory.get("objective").importance is None  # type: ignore[union-attr]
    assert "importance" not in store.namespace("memory").get("objective").meta  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", ["high", True, float("nan"), float("inf"), [1]])
def test_importance_must_be_a_finite_number(bad: object) -> None:
    memory, _, _ = _memory()
    with pytest.raises(ConfigError, match="importance"):
        memory.set("goal", "ship", importance=bad)  # type: ignore[arg-type]
    assert memory.get("goal") is None


@pytest.mark.parametrize(
    ("importance", "shown"),
    [
        (5, "<importance>5</importance>"),
        (0.25, "<importance>0.25</importance>"),
        (2.0, "<importance>2</importance>"),
        (-1, "<importance>-1</importance>"),
        (None, None),
    ],
)
def test_the_block_shows_the_importance_of_a_rated_entry(
    importance: float | None, shown: str | None
) -> None:
    memory, _, _ = _memory()
    memory.set("goal", "ship", description="the objective", importance=importance)
    block = memory.compile_artifacts("unified").block
    entry = block[block.index('<entry key="goal">') : block.index("</entry>")]
    if shown is None:
        assert "importance" not in block
    else:
        assert shown in entry
        assert entry.index("<description>") < entry.index(shown) < entry.index("<value>")


@pytest.mark.parametrize("vocabulary", ["unified", "legacy"])
def test_the_block_says_what_importance_means_only_when_a_shown_fact_has_one(
    vocabulary: str,
) -> None:
    memory, _, _ = _memory()
    memory.set("plain", "no rating")
    assert prompts.MEMORY_IMPORTANCE_NOTE not in memory.compile_artifacts(vocabulary).block
    memory.set("rated", "rated", importance=3)
    block = memory.compile_artifacts(vocabulary).block
    assert block.index("</memory>") < block.index(prompts.MEMORY_IMPORTANCE_NOTE)


@pytest.mark.parametrize("cap", [300, 420, 600, 900])
def test_the_byte_cap_holds_with_the_importance_note(cap: int) -> None:
    memory, _, _ = _memory(max_block_bytes=cap)
    for index in range(12):
        memory.set(f"fact{index:02}", "x" * (10 + index), importance=index)
    artifacts = memory.compile_artifacts("unified")
    assert len(artifacts.block.encode()) <= cap
    assert artifacts.omitted  # the cap left some out
    assert (prompts.MEMORY_IMPORTANCE_NOTE in artifacts.block) is bool(artifacts.entries)


def test_the_selector_can_rank_and_cut_by_importance() -> None:
    def top_two(entries: list[MemoryEntry]) -> list[MemoryEntry]:
        return sorted(entries, key=lambda entry: -(entry.importance or 0))[:2]

    memory, _, _ = _memory(selector=top_two)
    for key, importance in (("a", 1), ("b", None), ("c", 9), ("d", 3)):
        memory.set(key, key, importance=importance)
    artifacts = memory.compile_artifacts("unified")
    assert artifacts.keys == ("c", "d")  # shown in the order the selector returned them
    assert artifacts.block.index('key="c"') < artifacts.block.index('key="d"')


def test_the_chef_shows_importance_to_the_model() -> None:
    chef = ContextChef(memory={})
    chef.memory.set("deadline", "Friday", importance=10)
    chef.set_history([{"role": "user", "content": "when is it due?"}])
    payload = json.dumps(chef.compile(target="openai"))
    assert "<importance>10</importance>" in payload


# -- TTL units ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "expires_at", "expires_at_turn"),
    [
        ({"ms": 1500}, T0 + 1.5, None),
        ({"ms": 0}, T0, None),
        ({"seconds": 60}, T0 + 60, None),
        (timedelta(minutes=2), T0 + 120, None),
        ({"turns": 3}, None, 3),
        (2, None, 2),
        (None, None, None),
    ],
)
def test_every_ttl_unit_sets_its_expiry(
    ttl: Any, expires_at: float | None, expires_at_turn: int | None
) -> None:
    memory, _, _ = _memory()
    entry = memory.set("goal", "ship", ttl=ttl)
    assert (entry.expires_at, entry.expires_at_turn) == (expires_at, expires_at_turn)


def test_a_ttl_in_milliseconds_expires_when_its_time_comes() -> None:
    memory, _, clock = _memory(default_ttl={"ms": 1000})
    memory.set("goal", "ship")
    clock.advance(0.999)
    assert memory.get("goal") is not None
    clock.advance(0.001)
    assert memory.get("goal") is None


@pytest.mark.parametrize(
    "bad", [{"ms": -1}, {"ms": "5"}, {"ms": float("inf")}, {"ms": 1, "turns": 1}, {"msec": 5}]
)
def test_a_bad_ttl_is_refused(bad: object) -> None:
    memory, _, _ = _memory()
    with pytest.raises(ConfigError, match="'ms'"):
        memory.set("goal", "ship", ttl=bad)  # type: ignore[arg-type]


def test_a_rated_fact_arriving_as_a_change_comes_with_the_note() -> None:
    chef = ContextChef(memory={})
    chef.memory.set("plain", "no rating")
    chef.set_history([{"role": "user", "content": "hi"}])
    first = json.dumps(chef.compile(target="openai"))
    assert prompts.MEMORY_IMPORTANCE_NOTE not in first
    chef.memory.set("deadline", "Friday", importance=9)  # after the prefix was rendered
    chef.append_history([{"role": "assistant", "content": "ok"}, {"role": "user", "content": "?"}])
    messages = chef.compile(target="openai")["messages"]
    tail = json.dumps(messages[-1])
    assert "<memory_changes>" in tail and "<importance>9</importance>" in tail
    assert tail.index("</memory_changes>") < tail.index(prompts.MEMORY_IMPORTANCE_NOTE)
    assert prompts.MEMORY_IMPORTANCE_NOTE not in json.dumps(messages[:-1])
