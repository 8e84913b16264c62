"""The `Strategy` base class: abstract `name`/`apply`, no-op hooks called by name, forwarding."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from contextchef import ContextChef, Strategy, anchored, background, chain, reset, server, summarize
from contextchef.adapters import get_adapter
from contextchef.errors import ConfigError
from contextchef.selection.overflow import OverflowConfig
from contextchef.selection.strategies import OverflowInput, OverflowResult
from contextchef.tokens import MessageCounter
from tests.selection.test_overflow import Model, dialogue
from tests.selection.test_strategies_more import Gate, janitor, long_history, wait_done


class KeepLast(Strategy):
    name = "keep-last"

    def apply(self, input: OverflowInput) -> OverflowResult:
        history = input.history
        return OverflowResult(history[-1:], True, self.name, "custom", None, history[:-1])


def test_a_strategy_needs_name_and_apply() -> None:
    class NoApply(Strategy):
        name = "no-apply"

    class NoName(Strategy):
        def apply(self, input: OverflowInput) -> Any:
            return None

    with pytest.raises(TypeError, match="apply"):
        NoApply()  # type: ignore[abstract]
    with pytest.raises(TypeError, match="name"):
        NoName()  # type: ignore[abstract]


def test_the_hooks_default_to_no_ops() -> None:
    strategy = KeepLast()
    assert strategy.server_compaction(get_adapter("anthropic").profile) is None
    assert strategy.pending() is False
    assert strategy.snapshot() is None
    strategy.commit(OverflowResult((), True, "x"), "w1")
    strategy.restore({"anything": 1})


def test_hooks_are_called_by_their_exact_names() -> None:
    class Misspelt(KeepLast):
        def __init__(self) -> None:
            self.calls: list[str] = []

        def comit(self, result: OverflowResult, window: str) -> None:
            self.calls.append(window)

    class Spelt(Misspelt):
        def commit(self, result: OverflowResult, window: str) -> None:
            self.calls.append(window)

    typo, right = Misspelt(), Spelt()
    for strategy in (typo, right):
        ContextChef(**janitor(strategy=strategy, archive=None)).set_history(dialogue(6)).compile()
    assert typo.calls == []  # `comit` is just a method: the runner calls `commit`, the no-op
    assert right.calls == ["w2"]


class Plain:
    name = "plain"

    def apply(self, input: Any) -> Any:
        return OverflowResult(input.history, False, self.name)


def test_a_strategy_that_does_not_subclass_is_refused_with_a_hint() -> None:
    with pytest.raises(ConfigError, match=r"subclass contextchef\.Strategy.*got Plain"):
        OverflowConfig.of({"strategy": Plain()})
    with pytest.raises(ConfigError, match=r"subclass contextchef\.Strategy"):
        ContextChef(overflow={"strategy": Plain()})
    with pytest.raises(ConfigError, match="chain"):
        chain(reset(), Plain())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="background"):
        background(Plain())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="fallback"):
        server(fallback=Plain())  # type: ignore[arg-type]


class Recorder(Strategy):
    """Changes nothing unless told to; records the hooks it receives."""

    def __init__(self, name: str, changes: bool, state: Any = None) -> None:
        self._name, self.changes, self.state = name, changes, state
        self.commits: list[tuple[str, str]] = []
        self.waiting = False

    @property
    def name(self) -> str:
        return self._name

    def apply(self, input: OverflowInput) -> OverflowResult:
        if not self.changes:
            return OverflowResult(input.history, False, self.name, "no")
        history = input.history[-1:]
        return OverflowResult(history, True, self.name, "yes", None, input.history[:-1])

    def pending(self) -> bool:
        return self.waiting

    def commit(self, result: OverflowResult, window: str) -> None:
        self.commits.append((result.strategy, window))

    def snapshot(self) -> Any:
        return self.state

    def restore(self, state: Any) -> None:
        self.state = state


def test_chain_forwards_the_hooks_to_its_members() -> None:
    idle, acting = Recorder("idle", False, state={"n": 1}), Recorder("acting", True)
    strategy = chain(idle, acting)
    chef = ContextChef(**janitor(strategy=strategy, archive=None))
    assert chef.set_history(dialogue(6)).compile().meta.overflow.changed
    assert idle.commits == [] and acting.commits == [("acting", "w2")]
    assert strategy.pending() is False
    idle.waiting = True
    assert strategy.pending() is True
    assert strategy.snapshot() == [{"n": 1}, None]
    snap = chef.snapshot()
    idle.state, acting.state = "changed", "changed"
    chef.restore(snap)
    assert (idle.state, acting.state) == ({"n": 1}, None)
    strategy.restore(None)
    assert (idle.state, acting.state) == (None, None)
    assert chain(reset(), summarize()).snapshot() is None


def test_a_pending_member_lets_a_chain_run_within_budget() -> None:
    waiting = Recorder("waiting", True)
    waiting.waiting = True
    chef = ContextChef(**janitor(strategy=chain(waiting), archive=None))
    report = chef.set_history(dialogue(2)).compile().meta.overflow
    assert report.changed and not report.budget.over


def test_chain_of_anchored_keeps_its_anchor_through_snapshots() -> None:
    strategy = anchored(compression_model=Model("<summary>anchor</summary>"))
    strategy_chain = chain(strategy, reset())
    chef = ContextChef(**janitor(strategy=strategy_chain, archive=None))
    chef.set_history(long_history()).compile()
    assert strategy.anchor == "anchor"
    snap = chef.snapshot()
    strategy.restore(None)
    chef.restore(snap)
    assert strategy.anchor == "anchor"


def test_server_and_background_forward_the_hooks() -> None:
    inner = Recorder("inner", True, state=[1])
    wrapped = server(fallback=background(inner))
    assert wrapped.snapshot() == [1]
    wrapped.restore([2])
    assert inner.state == [2]
    result = OverflowResult((), True, "x")
    wrapped.commit(result, "w9")
    assert inner.commits == [("x", "w9")]
    assert wrapped.server_compaction(get_adapter("anthropic").profile) is not None
    assert wrapped.server_compaction(get_adapter("openai").profile) is None


def test_background_counts_with_its_own_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The job runs in a thread; the compile's counter (an unlocked memo) stays on the main one."""
    main = threading.main_thread()
    seen: dict[bool, set[int]] = {True: set(), False: set()}
    count_all = MessageCounter.count_all

    def recording(self: MessageCounter, messages: Any) -> int:
        seen[threading.current_thread() is main].add(id(self))
        return count_all(self, messages)

    monkeypatch.setattr(MessageCounter, "count_all", recording)
    gate = Gate()
    strategy = background(summarize(gate, preserve_ratio=0.5))
    chef = ContextChef(**janitor(strategy=strategy, archive=None))
    history = long_history()
    chef.set_history(history).compile()  # starts the job, which blocks on the gate
    chef.set_history([*history, {"role": "assistant", "content": "meanwhile"}]).compile()
    gate.release.set()
    wait_done(strategy)
    assert chef.compile().meta.overflow.changed
    assert seen[True] and seen[False], "both threads counted"
    assert not seen[True] & seen[False], "the background job shared the compile's counter"
