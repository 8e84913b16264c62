"""Overflow in the compile loop: budget, strategies, pinned turns, breaker, lineage, write-back."""

from __future__ import annotations

import itertools
import json
import logging
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef, prompts
from contextchef.errors import ConfigError
from contextchef.prompts import vocabulary
from contextchef.selection.strategies import OverflowResult, Strategy, chain, reset, summarize


class PerMessage:
    """A tokenizer that charges a fixed price per message and nothing for text: in a payload as
    sent (compact JSON), every object with a `role` is a message."""

    def __init__(self, price: int = 10) -> None:
        self.price = price

    def count_text(self, text: str) -> int:
        return self.price * text.count('"role":')

    def count_message(self, message: Any) -> int:
        return self.price


def ids() -> Any:
    counter = itertools.count(1)
    return lambda: f"w{next(counter)}"


def dialogue(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(turns):
        out.append({"role": "user", "content": f"question {i}"})
        out.append({"role": "assistant", "content": f"answer {i}"})
    return out


class Model:
    """A deterministic summarizer that records what it was asked."""

    def __init__(self, reply: str = "<summary>S</summary>", fail: bool = False) -> None:
        self.reply, self.fail, self.calls = reply, fail, 0

    def __call__(self, messages: list[Any]) -> str:
        self.calls += 1
        if self.fail:
            raise RuntimeError("model down")
        return self.reply


def chef(model: Any = None, window: int = 100, ratio: float = 1.0, **overflow: Any) -> ContextChef:
    """A chef in the legacy vocabulary: it adds no store instruction, so the payload's messages
    are the history alone and summaries name no window (the unified shape is tested below)."""
    strategy = overflow.pop("strategy", None) or summarize(model, preserve_recent_messages=1)
    return ContextChef(
        tools="legacy",
        tokenizer=PerMessage(),
        budget={"context_window": window, "trigger_ratio": ratio},
        overflow={"strategy": strategy, "window_ids": ids(), **overflow},
    )


def test_overflow_fires_only_strictly_above_the_trigger() -> None:
    model = Model()
    c = chef(model).set_history(dialogue(5))  # 10 messages = 100 tokens = the trigger
    assert not c.compile().meta.overflow.changed
    c.set_history([*dialogue(5), {"role": "user", "content": "one more"}])
    report = c.compile().meta.overflow
    assert report.changed and model.calls == 1
    assert report.budget.current == 110 and report.budget.trigger == 100


def test_default_trigger_ratio_is_seven_tenths() -> None:
    c = ContextChef(tokenizer=PerMessage(), budget={"context_window": 100})
    assert c.set_history(dialogue(4)).compile().meta.overflow.budget.over  # 80 > 70


def test_summary_heads_the_history_as_a_user_message_and_the_last_turn_stays() -> None:
    c = chef(Model()).set_history([*dialogue(6), {"role": "user", "content": "latest"}])
    payload = c.compile()
    messages = payload["messages"]
    assert messages[0]["role"] == "user"
    uri = payload.meta.overflow.summary.split(" archived at ")[1].removesuffix(".]")
    assert messages[0]["content"] == prompts.summary_wrapper(
        f"S\n\n{vocabulary('legacy').archive_citation(12, uri)}"
    )
    assert messages[-1] == {"content": "latest", "role": "user"}


def test_a_split_never_separates_parallel_tool_calls_from_their_results() -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for i in range(3)
    ]
    history = [
        *dialogue(5),
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": f"c{i}", "content": "r"} for i in range(3)),
    ]
    c = ContextChef(
        tools="legacy",
        tokenizer=PerMessage(),
        budget={"context_window": 50, "trigger_ratio": 1},
        overflow={"strategy": summarize(Model(), preserve_ratio=0.9)},
    ).set_history(history)
    messages = c.compile()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "tool"]


def test_pinned_turns_survive_verbatim_right_after_the_summary() -> None:
    history = dialogue(6)
    history[2] = {**history[2], "pinned": True}
    history[7] = {**history[7], "pinned": True}
    c = chef(Model()).set_history([*history, {"role": "user", "content": "now"}])
    contents = [m["content"] for m in c.compile()["messages"]]
    assert contents[1:3] == ["question 1", "answer 3"]


def test_every_evicted_span_is_archived_and_cited() -> None:
    c = chef(Model())
    history = [*dialogue(6), {"role": "user", "content": "q"}]
    report = c.set_history(history).compile().meta.overflow
    assert report.summary is not None and "context://archive/" in report.summary
    uri = report.summary.split(" archived at ")[1].removesuffix(".]")
    address = c.store.parse_uri(uri)
    assert address is not None
    stored = c.store.namespace(address.ns).get(address.path)
    assert stored is not None
    document = json.loads(stored.content)
    assert document["version"] == 1
    assert [m["content"] for m in document["messages"]] == [m["content"] for m in history[:12]]


def test_archive_can_go_elsewhere_or_nowhere_and_a_failure_keeps_the_compression(
    caplog: pytest.LogCaptureFixture,
) -> None:
    history = [*dialogue(6), {"role": "user", "content": "q"}]
    sent: list[Any] = []
    custom = chef(Model(), archive=lambda doc, count: sent.append(count) or "my://span/1")
    assert "my://span/1" in custom.set_history(history).compile().meta.overflow.summary
    assert sent == [12]
    vfs = chef(Model(), archive="vfs").set_history(history).compile().meta.overflow
    assert "context://vfs/" in vfs.summary
    off = chef(Model(), archive=None).set_history(history).compile().meta.overflow
    assert off.summary == "S"

    def broken(document: str, count: int) -> str:
        raise OSError("disk full")

    with caplog.at_level(logging.WARNING):
        failed = chef(Model(), archive=broken).set_history(history).compile().meta.overflow
    assert failed.changed and failed.summary == "S"
    assert "disk full" in caplog.text
    with pytest.raises(ConfigError):
        chef(Model(), archive=42)


def test_reported_usage_calibrates_the_count_of_the_compile_it_belongs_to() -> None:
    c = ContextChef(
        tools="legacy", tokenizer=PerMessage(), budget={"context_window": 1000}
    ).set_history(dialogue(2))
    assert c.compile().meta.tokens.total == 40  # the payload the provider then bills at 600
    c.report_token_usage(600)
    assert c.compile().meta.overflow.budget.current == 600  # the same payload: the report
    c.set_history(dialogue(3))  # two messages appended since the reported compile
    assert c.compile().meta.overflow.budget.current == 620  # report + what was appended
    c.report_token_usage(10)  # a provider figure below our count never hides growth
    assert c.compile().meta.overflow.budget.current == 60


def test_a_report_applies_to_its_own_target_and_window_only() -> None:
    model = Model()
    c = chef(model, window=1000, ratio=0.5).set_history(dialogue(2))
    c.compile()  # openai: 40 tokens
    c.report_token_usage(495)
    assert c.compile(target="anthropic").meta.overflow.budget.current == 40
    c.set_history([*dialogue(2), {"role": "user", "content": "q"}])
    report = c.compile().meta.overflow  # 495 + the 10 appended: over the trigger of 500
    assert report.budget.current == 505 and report.changed and model.calls == 1
    meta = c.compile().meta  # a new window: the report no longer applies
    assert meta.overflow.budget.current == meta.tokens.total < 500


@pytest.mark.parametrize(
    ("preference", "expected"), [("max", 950), ("feed_first", 950), ("tokenizer_first", 40)]
)
def test_usage_preference_with_an_exact_tokenizer(preference: str, expected: int) -> None:
    c = ContextChef(
        tools="legacy",
        tokenizer=PerMessage(),
        budget={"context_window": 1000, "usage_preference": preference},
    ).set_history(dialogue(2))
    c.report_token_usage(950)
    assert c.compile().meta.overflow.budget.current == expected


def test_three_failures_open_the_breaker_and_clear_history_closes_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = Model(fail=True)
    c = chef(model, window=200, ratio=0.5)  # over the trigger, inside the window
    long = [*dialogue(6), {"role": "user", "content": "q"}]
    with caplog.at_level(logging.WARNING):
        for _ in range(4):
            c.set_history(long)
            payload = c.compile()
            assert len(payload["messages"]) == len(long)
    assert model.calls == 3
    assert "circuit breaker" in payload.meta.overflow.reason
    assert "3/3" in caplog.text
    c.clear_history().set_history(long)
    model.fail = False
    assert c.compile().meta.overflow.changed and model.calls == 4


def test_a_summary_that_does_not_shrink_is_refused_unless_the_guard_is_off() -> None:
    big = [{"role": "user", "content": "x" * 1500}, {"role": "assistant", "content": "y" * 1500}]
    history = [*big, {"role": "user", "content": "now"}]
    verbose = Model("<summary>" + "z" * 2000 + "</summary>")
    strict = chef(window=60, ratio=0.3, strategy=summarize(verbose, preserve_recent_messages=1))
    report = strict.set_history(history).compile().meta.overflow
    assert not report.changed and report.failures == 1
    assert "did not shrink" in report.reason
    guard_off = summarize(verbose, preserve_recent_messages=1, min_shrink_ratio=0)
    assert chef(window=20, strategy=guard_off).set_history(history).compile().meta.overflow.changed


@pytest.mark.parametrize("verdict", [False, "raise"])
def test_validate_compression_can_reject_a_summary(verdict: Any) -> None:
    def validate(summary: str, details: Any) -> bool:
        assert summary == "S" and details["kept"]
        if verdict == "raise":
            raise ValueError("nope")
        return bool(verdict)

    strategy = summarize(Model(), preserve_recent_messages=1, validate_compression=validate)
    c = chef(strategy=strategy, window=200, ratio=0.5)
    report = c.set_history([*dialogue(6), {"role": "user", "content": "q"}]).compile().meta.overflow
    assert not report.changed and report.failures == 1


def test_without_a_model_old_turns_are_dropped_and_on_compress_still_hears_of_it() -> None:
    heard: list[Any] = []
    c = chef(None, on_compress=lambda summary, report: heard.append((summary, len(report.span))))
    messages = c.set_history([*dialogue(6), {"role": "user", "content": "q"}]).compile()["messages"]
    assert messages == [{"content": "q", "role": "user"}]
    assert heard == [(None, 12)]


def test_on_before_compress_may_replace_the_history_and_a_raising_hook_is_ignored() -> None:
    short = [{"role": "user", "content": "just this"}]
    c = chef(Model(), on_before_compress=lambda history, budget: short)
    assert c.set_history(dialogue(6)).compile()["messages"] == [short[0] | {}]

    def broken(history: Any, budget: Any) -> Any:
        raise RuntimeError("hook bug")

    model = Model()
    c = chef(model, on_before_compress=broken)
    assert (
        c.set_history([*dialogue(6), {"role": "user", "content": "q"}])
        .compile()
        .meta.overflow.changed
    )
    assert model.calls == 1


def test_reset_keeps_pinned_turns_and_names_the_window() -> None:
    history = dialogue(6)
    history[3] = {**history[3], "pinned": True}
    c = chef(strategy=reset())
    messages = c.set_history(history).compile()["messages"]
    assert messages[0]["content"] == prompts.reset_notice("w1", None)
    assert messages[1:] == [{"content": "answer 1", "role": "assistant"}]
    assert c.history[1]["pinned"] is True


def test_chain_escalates_when_the_first_strategy_fails() -> None:
    c = chef(strategy=chain(summarize(Model(fail=True), preserve_recent_messages=1), reset()))
    report = c.set_history(dialogue(6)).compile().meta.overflow
    assert report.changed and report.strategy.startswith("chain(")
    assert report.failures == 0


def test_a_forced_pass_keeps_the_last_turn_and_is_consumed() -> None:
    model = Model()
    c = ContextChef(
        tools="legacy", budget={"context_window": 10**6}, overflow={"strategy": summarize(model)}
    )
    c.set_history(dialogue(3)).request_new_context()
    messages = c.compile()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[-1]["content"] == "answer 2"
    assert model.calls == 1
    assert not c.compile().meta.overflow.changed
    one = ContextChef(budget={}, overflow={"strategy": summarize(model)})
    one.set_history([{"role": "user", "content": "only"}]).request_new_context()
    assert "one to answer in" in one.compile().meta.overflow.reason


def test_window_id_changes_exactly_when_overflow_lands_and_survives_snapshots() -> None:
    c = chef(Model()).set_history(dialogue(2))
    assert c.compile().meta.window_id == c.compile().meta.window_id == "w1"
    c.set_history([*dialogue(6), {"role": "user", "content": "q"}])
    assert c.compile().meta.window_id == "w2"
    snap = c.snapshot()
    c.clear_history()
    assert c.set_history(dialogue(1)).compile().meta.window_id == "w3"
    c.restore(snap)
    assert c.compile().meta.window_id == "w2"


def test_write_back_shrinks_the_chefs_history_and_survives_the_hosts_growing_list() -> None:
    model = Model()
    c = chef(model)
    host = [*dialogue(6), {"role": "user", "content": "q"}]
    c.set_history(host)
    c.compile()
    assert len(c.history) == 2
    host += [{"role": "assistant", "content": "a"}, {"role": "user", "content": "next"}]
    c.set_history(host)  # the host keeps appending to its own full list
    assert [m["content"] for m in c.history][1:] == ["q", "a", "next"]
    assert not c.compile().meta.overflow.changed
    assert model.calls == 1


def test_write_back_can_be_turned_off() -> None:
    c = chef(Model(), write_back=False)
    c.set_history([*dialogue(6), {"role": "user", "content": "q"}])
    assert len(c.compile()["messages"]) == 2
    assert len(c.history) == 13


def test_compress_events_fire_around_the_strategy() -> None:
    seen: list[str] = []
    c = chef(Model())
    c.on("compress:start", lambda e: seen.append(f"start:{e.history_length}"))
    c.on("compress:end", lambda e: seen.append(f"end:{e.changed}"))
    c.set_history([*dialogue(6), {"role": "user", "content": "q"}]).compile()
    assert seen == ["start:13", "end:True"]


def test_an_async_model_needs_the_async_chef() -> None:
    async def model(messages: Any) -> str:
        return "<summary>async</summary>"

    c = chef(model, window=200, ratio=0.5)
    report = c.set_history([*dialogue(6), {"role": "user", "content": "q"}]).compile().meta.overflow
    assert not report.changed and "AsyncContextChef" in report.reason


async def test_async_chef_awaits_an_async_model() -> None:
    async def model(messages: Any) -> str:
        return "<summary>async</summary>"

    c = AsyncContextChef(
        tokenizer=PerMessage(),
        budget={"context_window": 100, "trigger_ratio": 1},
        overflow={"strategy": summarize(model, preserve_recent_messages=1)},
    )
    payload = await c.set_history([*dialogue(6), {"role": "user", "content": "q"}]).compile()
    assert payload["messages"][0]["content"] == c.tools.vocabulary.store_instruction
    assert "async" in payload["messages"][1]["content"]


def test_a_custom_strategy_subclasses_strategy_with_name_and_apply() -> None:
    class KeepLast(Strategy):
        name = "keep-last"

        def apply(self, input: Any) -> OverflowResult:
            return OverflowResult(
                input.history[-1:], True, self.name, "custom", None, input.history[:-1]
            )

    c = chef(strategy=KeepLast())
    assert c.set_history(dialogue(6)).compile()["messages"] == [
        {"content": "answer 5", "role": "assistant"}
    ]


def test_bad_overflow_configuration_is_refused() -> None:
    with pytest.raises(ConfigError, match="context_window"):
        ContextChef(budget={"context_window": 0})
    with pytest.raises(ConfigError, match="trigger_ratio"):
        ContextChef(budget={"context_window": 10, "trigger_ratio": 1.5})
    with pytest.raises(ConfigError, match="unknown budget"):
        ContextChef(budget={"window": 10})
    with pytest.raises(ConfigError, match="apply"):
        ContextChef(overflow={"strategy": object()})
    with pytest.raises(ConfigError, match="needs overflow configured"):
        ContextChef().report_token_usage(10)
    with pytest.raises(ConfigError, match="non-negative"):
        ContextChef(budget={}).report_token_usage(-1)


def test_overflow_results_are_identical_through_the_async_chef() -> None:
    import asyncio

    def run(kind: Any) -> str:
        c = kind(
            tokenizer=PerMessage(),
            budget={"context_window": 100, "trigger_ratio": 1},
            overflow={
                "strategy": summarize(Model(), preserve_recent_messages=1),
                "window_ids": ids(),
            },
        ).set_history([*dialogue(6), {"role": "user", "content": "q"}])
        payload = c.compile(target="anthropic")
        if kind is AsyncContextChef:
            payload = asyncio.run(payload)
        return json.dumps(payload)

    assert run(ContextChef) == run(AsyncContextChef)


def test_the_handoff_notice_comes_once_per_window_with_the_tokens_left() -> None:
    c = ContextChef(
        tools="legacy",
        tokenizer=PerMessage(),
        budget={"context_window": 100, "trigger_ratio": 1},
        overflow={
            "strategy": summarize(Model(), preserve_recent_messages=1),
            "handoff": {"budget_tokens": 30, "prompt": "Only {n_remaining} tokens left."},
            "window_ids": ids(),
        },
    )
    c.set_history(dialogue(3))  # 60 tokens: 40 left, no notice yet
    assert "tokens left" not in json.dumps(c.compile())
    c.set_history(dialogue(4))  # 80 tokens: 20 left
    tail = c.compile()["messages"][-2]["content"]
    assert "Only 20 tokens left." in tail and prompts.STATE_ANCHOR in tail
    assert "tokens left" not in json.dumps(c.compile())  # once per window
    c.set_history([*dialogue(6), {"role": "user", "content": "q"}])  # overflow: a new window
    c.compile()
    c.set_history([*c.history, *dialogue(2)[:1]])
    assert c.compile().meta.window_id == "w2"


def test_the_default_handoff_notice_follows_the_tools_mode() -> None:
    def notice(mode: str) -> str:
        c = ContextChef(
            tools=mode,
            tokenizer=PerMessage(),
            budget={"context_window": 100, "trigger_ratio": 1},
            overflow={"handoff": {"budget_tokens": 50}},
        ).set_history(dialogue(3))
        return str(c.compile()["messages"][-2]["content"])

    # the unified store instruction is one more message of the payload: 10 tokens fewer left
    assert "new_context" in notice("unified") and "30 tokens" in notice("unified")
    assert "40 tokens" in notice("legacy")
    assert "new_context" not in notice("legacy") and "context tool" not in notice("legacy")


@pytest.mark.parametrize(
    "handoff",
    [
        {"budget_tokens": 0},
        {"budget_tokens": 1.5},
        {"budget_tokens": 5, "prompt": "  "},
        {"budget_tokens": 5, "prompt": "x" * 2001},
    ],
)
def test_bad_handoff_configuration_is_refused_at_construction(handoff: Any) -> None:
    with pytest.raises(ConfigError, match="handoff"):
        ContextChef(budget={}, overflow={"handoff": handoff})


def test_unified_summaries_name_their_window() -> None:
    c = ContextChef(
        tools="unified",
        tokenizer=PerMessage(),
        budget={"context_window": 100, "trigger_ratio": 1},
        overflow={"strategy": summarize(Model(), preserve_recent_messages=1), "window_ids": ids()},
    )
    messages = c.set_history([*dialogue(6), {"role": "user", "content": "q"}]).compile()["messages"]
    assert messages[0] == {"content": c.tools.vocabulary.store_instruction, "role": "system"}
    assert "Context window: w2." in messages[1]["content"]


def test_an_archived_span_reads_back_as_a_transcript_through_the_context_tool() -> None:
    c = ContextChef(
        tools="unified",
        tokenizer=PerMessage(),
        budget={"context_window": 100, "trigger_ratio": 1},
        overflow={"strategy": summarize(Model(), preserve_recent_messages=1)},
    )
    report = c.set_history([*dialogue(6), {"role": "user", "content": "q"}]).compile().meta.overflow
    assert report.summary is not None
    uri = report.summary.split(" archived in full at ")[1].split(";")[0]
    shown = c.handle_tool("context", {"command": "view", "path": uri})
    assert not shown.startswith("Error")
    assert "question 0" in shown and "answer 5" in shown
    assert '"version"' not in shown  # a transcript, not the raw JSON
    refused = c.handle_tool("context", {"command": "delete", "path": uri})
    assert refused.startswith("Error: ") and "read-only" in refused


def test_repeated_overflows_on_a_growing_host_list_keep_one_compaction_record() -> None:
    model = Model()
    c = chef(model)
    host: list[Any] = [*dialogue(6), {"role": "user", "content": "q0"}]
    for turn in range(1, 4):
        c.set_history(host)
        assert c.compile().meta.overflow.changed
        host += [*dialogue(6), {"role": "user", "content": f"q{turn}"}]
    c.set_history(host)
    assert [m["content"] for m in c.history][-1] == "q3"
    assert len(c.history) < len(host)
    assert (
        len(list(c._history.compactions)) == 1
    )  # folded: one record however many overflows landed
    assert model.calls == 3
