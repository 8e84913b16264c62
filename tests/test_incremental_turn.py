"""The incremental turn: a chef that lives across turns compiles exactly the bytes a fresh chef
compiles from the same input, whatever the host does to its history between turns.

The chef reuses what an earlier turn computed (private copies, the repair pass, tool-result
previews, adapter conversions); a host appends, edits old messages in place, reloads fresh dicts,
truncates, inserts and deletes. A hypothesis state machine drives one long-lived chef per target
through random sequences of those and compares every compile with a fresh chef's.
"""

from __future__ import annotations

import copy
import gc
import json
import sys
import threading
import weakref
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from contextchef import ContextChef, Payload, _memo, ensure_valid_history
from contextchef.adapters import adapter_registry
from contextchef.errors import MessageError

TARGETS = adapter_registry.names()
CALL_IDS = ["a", "b", "c"]  # few, so duplicates, orphans and unanswered calls all happen
THRESHOLD = 120  # tool results longer than this are offloaded and previewed
# "explicit": breakpoints only where the host marks them. "auto" chooses them from the turns
# before (it keeps reading the cache it wrote), so it is stateful by design.

text = st.text(alphabet="abc xyz\nERROR:", min_size=0, max_size=30)
long_text = st.integers(min_value=1, max_value=9).map(
    lambda n: "\n".join(
        f"line {i} of {n}" + (" Error: bad" if i == 3 else "") for i in range(n * 6)
    )
)


def _call(call_id: str, name: str) -> dict[str, Any]:
    arguments = json.dumps({"path": name})
    return {"function": {"arguments": arguments, "name": name}, "id": call_id, "type": "function"}


messages = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t or "hi"}, text),
    st.builds(lambda t: {"role": "user", "content": t or "mark", "_cache_breakpoint": True}, text),
    st.builds(lambda t: {"role": "assistant", "content": t or "ok"}, text),
    st.builds(lambda t: {"role": "system", "content": t or "note"}, text),
    st.builds(
        lambda ids, name: {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call(i, name) for i in ids],
        },
        st.lists(st.sampled_from(CALL_IDS), min_size=1, max_size=2),
        st.sampled_from(["ls", "grep"]),
    ),
    st.builds(
        lambda i, t: {"role": "tool", "tool_call_id": i, "content": t},
        st.sampled_from(CALL_IDS),
        st.one_of(text, long_text),
    ),
)


def _chef() -> ContextChef:
    return ContextChef(offload={"threshold": THRESHOLD}, cache="explicit").set_system_prompt(
        "You help."
    )


def _bytes(payload: Payload) -> tuple[str, list[Any]]:
    return json.dumps(payload, ensure_ascii=False), list(payload.meta.repairs)


def _fresh_bytes(target: str, history: list[dict[str, Any]]) -> tuple[str, list[Any]]:
    return _bytes(_chef().set_history(copy.deepcopy(history)).compile(target=target))


class HostTurns(RuleBasedStateMachine):
    """One chef per target lives through the turns; the host edits its list between them."""

    def __init__(self) -> None:
        super().__init__()
        self.history: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
        self.chefs = {target: _chef() for target in TARGETS}
        self.appending = {target: _chef() for target in TARGETS}  # fed by append_history
        self.appended: list[dict[str, Any]] | None = None

    @rule(new=st.lists(messages, min_size=1, max_size=4))
    def append(self, new: list[dict[str, Any]]) -> None:
        self.history.extend(new)  # the same list, grown: the common agent loop
        self.appended = new
        self.appended = new

    @precondition(lambda self: self.history)
    @rule(data=st.data(), content=text)
    def edit_in_place(self, data: st.DataObject, content: str) -> None:
        at = data.draw(st.integers(0, len(self.history) - 1))
        message = self.history[at]
        if message.get("tool_calls"):
            message["tool_calls"][0]["function"]["name"] = "edited"
        else:
            message["content"] = content or "edited"

    @rule()
    def reload_fresh_dicts(self) -> None:
        self.history = json.loads(json.dumps(self.history))

    @rule()
    def rebuild_the_list(self) -> None:
        self.history = list(self.history)

    @precondition(lambda self: self.history)
    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        del self.history[data.draw(st.integers(0, len(self.history) - 1)) :]

    @rule(data=st.data(), message=messages)
    def insert(self, data: st.DataObject, message: dict[str, Any]) -> None:
        self.history.insert(data.draw(st.integers(0, len(self.history))), message)

    @precondition(lambda self: self.history)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        del self.history[data.draw(st.integers(0, len(self.history) - 1))]

    @invariant()
    def every_target_compiles_what_a_fresh_chef_compiles(self) -> None:
        appended, self.appended = self.appended, None
        for target, chef in self.chefs.items():
            expected = _fresh_bytes(target, self.history)
            payload = chef.set_history(self.history).compile(target=target)
            assert _bytes(payload) == expected, target
            other = self.appending[target]
            if appended is None:
                other.set_history(self.history)
            else:
                other.append_history(appended)
            assert _bytes(other.compile(target=target)) == expected, f"{target}, appending"


HostTurns.TestCase.settings = settings(
    max_examples=80,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_incremental_turn_equals_a_fresh_compile = HostTurns.TestCase


def test_only_new_and_changed_messages_are_validated_again(monkeypatch: Any) -> None:
    """An appending host, a reloading host and a host editing one old message in place pay
    validation and copying for the new or changed messages only."""
    taken: list[int] = []
    real, real_batch = _memo.intake_message, _memo.intake_messages

    def counting(message: object, index: int | None = None) -> Any:
        taken.append(-1 if index is None else index)
        return real(message, index)

    def counting_batch(messages: Any, start: int = 0) -> Any:
        taken.extend(range(start, start + len(messages)))
        return real_batch(messages, start)

    monkeypatch.setattr(_memo, "intake_message", counting)
    monkeypatch.setattr(_memo, "intake_messages", counting_batch)
    chef = ContextChef()
    history: list[dict[str, Any]] = [{"role": "user", "content": f"m{i}"} for i in range(50)]
    chef.set_history(history)
    assert len(taken) == 50
    taken.clear()
    history.append({"role": "assistant", "content": "next"})
    chef.set_history(json.loads(json.dumps(history)))  # reloaded: fresh dicts, one new
    assert taken == [50]
    taken.clear()
    history[10]["content"] = "changed"  # edited in place, in the list passed before
    chef.set_history(history)
    assert taken == [10]
    payload = chef.compile(target="openai")
    contents = [message["content"] for message in payload["messages"]]
    assert "changed" in contents
    assert "m10" not in contents


def test_append_history_continues_a_cleared_or_restored_history() -> None:
    chef = ContextChef()
    first = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}]
    chef.set_history(first)
    saved = chef.snapshot()
    chef.append_history([{"role": "user", "content": "three"}])
    assert [m["content"] for m in chef.history] == ["one", "two", "three"]
    chef.restore(saved)
    chef.append_history([{"role": "user", "content": "four"}])
    assert [m["content"] for m in chef.history] == ["one", "two", "four"]
    chef.clear_history().append_history([{"role": "user", "content": "five"}])
    assert [m["content"] for m in chef.history] == ["five"]


def test_append_history_validates_only_what_it_is_given_and_keeps_nothing_bad() -> None:
    chef = ContextChef().set_history([{"role": "user", "content": "one"}])
    with pytest.raises(MessageError) as caught:
        chef.append_history([{"role": "assistant", "content": "ok"}, {"role": "robot"}])
    assert caught.value.index == 2  # counted in the whole history
    assert [m["content"] for m in chef.history] == ["one"]
    chef.append_history([{"role": "assistant", "content": "two"}])
    assert [m["content"] for m in chef.history] == ["one", "two"]


class HostMessage(dict[str, Any]):
    """A host's message type that can be watched with a weak reference."""


def test_the_chef_holds_no_message_of_the_host() -> None:
    """Only private copies are kept: the dicts a host passed are its own to free (a host that
    reloads its history every turn does not pay for two histories)."""
    chef = ContextChef()
    history = [HostMessage(role="user", content=f"m{i}") for i in range(20)]
    chef.set_history(history).compile(target="openai")
    history = [HostMessage(message) for message in history]  # reloaded: fresh objects
    history.append(HostMessage(role="assistant", content="ok"))
    chef.set_history(history).compile(target="anthropic")
    chef.append_history([HostMessage(role="user", content="more")])
    watched = [weakref.ref(message) for message in history]
    del history
    gc.collect()
    assert all(ref() is None for ref in watched)
    assert [m["content"] for m in chef.history][-2:] == ["ok", "more"]


def test_threads_setting_histories_at_once_never_mix_them() -> None:
    """Each `set_history` leaves the repair of exactly one of the histories given, even when
    several threads resume the same saved repair pass at once."""
    base = [{"role": "user", "content": f"u{i}"} for i in range(300)]
    variants = []
    for thread in range(4):
        extra: list[dict[str, Any]] = []
        for turn in range(40):
            function = {"name": f"t{thread}", "arguments": "{}"}
            call = {"id": "dup", "type": "function", "function": function}
            extra += [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "dup", "content": f"{thread}/{turn}"},
            ]
        variants.append(base + extra)
    cuts = range(len(base), len(variants[0]) + 1, 3)

    def repaired(history: Any) -> str:
        return json.dumps(history, sort_keys=True)

    expected = {
        repaired(ensure_valid_history(copy.deepcopy(v[:cut]))[0]) for v in variants for cut in cuts
    }
    chef = ContextChef()
    chef.set_history(base)
    strays: list[int] = []

    def hammer(variant: list[dict[str, Any]]) -> None:
        for cut in cuts:
            chef.set_history(variant[:cut])
            if repaired(list(chef._cell.state.history)) not in expected:
                strays.append(cut)

    threads = [threading.Thread(target=hammer, args=(v,)) for v in variants]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads inside the repair pass, not between calls
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not strays
    chef.set_history(variants[2])
    history, fixes = ensure_valid_history(copy.deepcopy(variants[2]))
    assert list(chef._cell.state.history) == history
    assert list(chef._cell.state.repairs) == fixes
