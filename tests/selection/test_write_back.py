"""Write-back by content: a landed overflow result is re-applied to a host's history whether the
host passes the same dicts every turn or reloads them fresh (from a database, a queue, JSON)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef, summarize
from contextchef._compaction import MAX_COMPACTIONS, Compaction, record
from contextchef._memo import ContentDigests, message_digest
from tests.selection.test_overflow import Model, PerMessage, chef, dialogue, ids

Host = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def same(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Host A: one list of the same dicts, appended to."""
    return history


def reloaded(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Host B: the history rebuilt from its stored JSON every turn."""
    return json.loads(json.dumps(history))  # type: ignore[no-any-return]


def payload_bytes(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode()


def run(
    host: Host, turns: list[list[dict[str, Any]]], model: Model, window: int
) -> list[tuple[bytes, bool]]:
    """Each turn: the host appends the user's part, sets its history, compiles, then appends
    the assistant's part; returns each compile's bytes and whether the overflow ran."""
    c = chef(model, window=window)
    history: list[dict[str, Any]] = []
    out = []
    for user, *rest in turns:
        history.append(user)
        payload = c.set_history(host(history)).compile()
        out.append((payload_bytes(payload), payload.meta.overflow.changed))
        history.extend(rest)
    assert len(list(c._history.compactions)) == 1  # one growing conversation: one folded record
    (kept,) = list(c._history.compactions)
    assert kept.count < len(history) and len(kept.replacement) <= 2  # no prefix held
    return out


def chat_turns(count: int) -> list[list[dict[str, Any]]]:
    return [
        [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"a {i}"}]
        for i in range(count)
    ]


def tool_turns(count: int) -> list[list[dict[str, Any]]]:
    out = []
    for i in range(count):
        calls = [
            {"id": f"c{i}_{k}", "type": "function", "function": {"name": "run", "arguments": "{}"}}
            for k in range(2)
        ]
        out.append(
            [
                {"role": "user", "content": f"step {i}"},
                {"role": "assistant", "content": None, "tool_calls": calls},
                *(
                    {"role": "tool", "tool_call_id": c["id"], "content": f"out {c['id']}"}
                    for c in calls
                ),
                {"role": "assistant", "content": f"done {i}"},
            ]
        )
    return out


@pytest.mark.parametrize(
    ("turns", "window"), [(chat_turns(30), 100), (tool_turns(30), 300)], ids=["chat", "tool-calls"]
)
def test_a_host_reloading_fresh_dicts_compiles_like_one_passing_the_same_objects(
    turns: list[list[dict[str, Any]]], window: int
) -> None:
    kept_model, reloaded_model = Model(), Model()
    kept = run(same, turns, kept_model, window)
    fresh = run(reloaded, turns, reloaded_model, window)
    assert [b for b, _ in fresh] == [b for b, _ in kept]  # byte for byte, every turn
    overflows = sum(ran for _, ran in fresh)
    assert reloaded_model.calls == kept_model.calls == overflows
    assert 3 <= overflows <= len(turns) // 3  # once per overflow, not once per turn


def test_a_retry_with_the_same_content_reuses_the_landed_summary() -> None:
    model = Model()
    c = chef(model)
    stored = [*dialogue(6), {"role": "user", "content": "q"}]
    first = c.set_history(reloaded(stored)).compile()
    assert first.meta.overflow.changed and model.calls == 1
    retry = c.set_history(reloaded(stored)).compile()  # the provider call failed: again
    assert payload_bytes(retry) == payload_bytes(first)
    assert model.calls == 1 and not retry.meta.overflow.changed


def test_the_same_content_set_while_compiling_still_lands() -> None:
    model = Model()
    c = chef(model)
    stored = [*dialogue(6), {"role": "user", "content": "q"}]
    c.on("compress:start", lambda e: c.set_history(reloaded(stored)))
    c.set_history(reloaded(stored)).compile()
    assert len(c.history) == 2 and len(list(c._history.compactions)) == 1
    c.set_history(reloaded([*stored, {"role": "assistant", "content": "a"}]))
    assert [m["content"] for m in c.history][1:] == ["q", "a"]


def test_a_different_history_set_while_compiling_is_kept_and_nothing_is_recorded() -> None:
    c = chef(Model())
    other = dialogue(2)
    c.on("compress:start", lambda e: c.set_history(other))
    c.set_history([*dialogue(6), {"role": "user", "content": "q"}]).compile()
    assert c.history == [dict(sorted(m.items())) for m in other]
    assert list(c._history.compactions) == []


async def test_the_async_chef_recognises_a_reloaded_history() -> None:
    model = Model()
    c = AsyncContextChef(
        tools="legacy",
        tokenizer=PerMessage(),
        budget={"context_window": 100, "trigger_ratio": 1},
        overflow={"strategy": summarize(model, preserve_recent_messages=1), "window_ids": ids()},
    )
    stored: list[dict[str, Any]] = []
    for turn in chat_turns(20):
        stored.append(turn[0])
        await c.set_history(reloaded(stored)).compile()
        stored.extend(turn[1:])
    assert 2 <= model.calls <= 5 and len(list(c._history.compactions)) == 1


def test_clear_history_forgets_the_records_and_restore_returns_to_the_snapshots() -> None:
    model = Model()
    c = chef(model)
    stored = [*dialogue(6), {"role": "user", "content": "q"}]
    before = c.set_history(reloaded(stored)).snapshot()
    c.compile()
    after = c.snapshot()
    assert len(after.state.history) == 2
    (kept,) = list(c._history.compactions)
    assert all(m is not r for m in after.state.history for r in kept.replacement)  # copies
    c.clear_history()
    assert list(c._history.compactions) == []
    assert len(c.set_history(reloaded(stored)).history) == len(stored)
    c.compile()
    assert model.calls == 2 and len(list(c._history.compactions)) == 1
    c.restore(before)
    assert list(c._history.compactions) == [] and len(c.history) == len(stored)
    c.restore(after)  # the records the snapshot holds: a reloaded history is recognised
    assert [r.count for r in list(c._history.compactions)] == [kept.count] and len(c.history) == 2
    assert len(c.set_history(reloaded(stored)).history) == 2
    c.compile()
    assert model.calls == 2  # nothing summarised twice
    c.restore(before)
    assert list(c._history.compactions) == []
    assert len(c.set_history(reloaded(stored)).history) == len(stored)  # no stale record


def test_a_few_unrelated_conversations_keep_a_bounded_number_of_records() -> None:
    model = Model()
    c: ContextChef = chef(model)
    conversations = [[{"role": "user", "content": f"{n}:{i}"} for i in range(13)] for n in range(6)]
    for conversation in conversations:
        c.set_history(reloaded(conversation)).compile()
    assert len(list(c._history.compactions)) == MAX_COMPACTIONS and model.calls == 6
    for conversation in conversations[-MAX_COMPACTIONS:]:  # the newest are still recognised
        assert len(c.set_history(reloaded(conversation)).history) == 2
    assert len(c.set_history(reloaded(conversations[0])).history) == 13  # the oldest went


def digests(*messages: dict[str, Any]) -> tuple[bytes, ...]:
    return tuple(message_digest(m) for m in messages)


def test_message_digests_depend_on_content_only() -> None:
    a = {"role": "user", "content": "h\u00e9llo \ud800"}
    assert message_digest(a) == message_digest({"content": "h\u00e9llo \ud800", "role": "user"})
    assert message_digest(a) != message_digest({**a, "content": "hello"})
    assert len(message_digest(a)) == 16


def test_compaction_records_fold_only_when_made_on_each_others_result() -> None:
    a, b, c, s1, s2, s3 = ({"role": "user", "content": t} for t in "abc123")
    first = record([], digests(a, b), (s1,), digests(s1))
    assert first == [Compaction.of(digests(a, b), (s1,), digests(s1))]
    on_first = record(first, digests(s1, c), (s2,), digests(s2))
    assert on_first == [Compaction.of(digests(a, b, c), (s2,), digests(s2))]
    unrelated = record(first, digests(c), (s3,), digests(s3))
    assert unrelated == [*first, Compaction.of(digests(c), (s3,), digests(s3))]
    # made on the older record's result: folded into it, in place
    assert record(unrelated, digests(s1, c), (s2,), digests(s2)) == [
        Compaction.of(digests(a, b, c), (s2,), digests(s2)),
        unrelated[1],
    ]


def test_a_record_applies_to_fresh_dicts_in_any_key_order() -> None:
    a, b, s = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {}
    (compaction,) = record([], digests(a, b), (s,), digests(s))
    fresh = [{"content": "a", "role": "user"}, {"content": "b", "role": "assistant"}, {"x": 1}]
    assert compaction.apply(fresh, ContentDigests()) == [s, {"x": 1}]
    assert compaction.apply(fresh[1:], ContentDigests()) == fresh[1:]
    assert compaction.apply([a, a, b], ContentDigests()) == [a, a, b]  # the head alone is not it


@pytest.mark.parametrize("host", [same, reloaded], ids=["same-dicts", "reloaded"])
def test_a_dropping_strategy_lands_once_and_says_what_it_dropped(host: Host) -> None:
    """`summarize(None)` drops old turns. The kept part opens with a user notice that earlier
    conversation was omitted (true, unlike a notice that the conversation begins there), and
    the drop is re-applied to the host's growing history: each compaction evicts only what
    overflowed since the last, never the whole history again."""
    from contextchef import prompts

    chef_ = ContextChef(budget={"context_window": 2_000}, overflow={"strategy": summarize(None)})
    evicted: list[int] = []
    chef_.on("compress", lambda event: evicted.append(event.messages))
    history: list[dict[str, Any]] = []
    for step in range(30):
        history += [
            {"role": "user", "content": f"Step {step}: " + "details " * 30},
            {"role": "assistant", "content": f"Done with step {step}."},
        ]
        payload = chef_.set_history(host(history)).compile(target="openai")
        opener = next(m for m in payload["messages"] if m["role"] != "system")
        assert opener["role"] == "user"
        if evicted:
            assert opener["content"] == prompts.CONVERSATION_CONTINUES
    assert 3 < len(evicted) < 15  # every few turns, not every turn
    assert sum(evicted) <= len(history) + len(evicted)  # each notice leaves at most once more
