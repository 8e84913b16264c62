"""Pipeline slots: handlers that take part in a compile (and fail it when they raise)."""

from __future__ import annotations

from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef, prompts, summarize
from contextchef.errors import ConfigError


def chef() -> ContextChef:
    return ContextChef().set_history([{"role": "user", "content": "hi"}])


def test_before_assemble_injects_blocks_into_the_tail_in_order() -> None:
    c = chef()
    c.use("before_assemble", lambda ctx: ctx.inject("<implicit>A</implicit>"))
    c.use("before_assemble", lambda ctx: ctx.inject("   "))
    c.use("before_assemble", lambda ctx: ctx.inject("<implicit>B</implicit>"))
    content = c.compile()["messages"][-1]["content"]
    assert content == (
        f"hi\n\n<implicit>A</implicit>\n\n<implicit>B</implicit>\n\n{prompts.STATE_ANCHOR}"
    )


def test_after_assemble_may_replace_the_messages_and_is_validated() -> None:
    c = chef()
    c.use("after_assemble", lambda messages: [*messages, {"role": "assistant", "content": "Sure"}])
    assert c.compile()["messages"][-1] == {"content": "Sure", "role": "assistant"}
    bad = chef()
    bad.use("after_assemble", lambda messages: [{"role": "robot"}])
    with pytest.raises(Exception, match="unknown role"):
        bad.compile()


def test_after_adapt_may_rewrite_the_payload_and_before_adapt_observes() -> None:
    seen: list[Any] = []
    c = chef()
    c.use("before_adapt", lambda messages: seen.append(len(messages)))
    c.use("after_adapt", lambda payload: {**payload, "temperature": 0})
    payload = c.compile()
    assert payload["temperature"] == 0 and seen == [1]


def test_before_overflow_false_skips_overflow_and_after_overflow_sees_the_report() -> None:
    calls: list[Any] = []
    c = ContextChef(
        budget={"context_window": 10, "trigger_ratio": 1},
        overflow={"strategy": summarize(lambda m: "<summary>s</summary>")},
    )
    c.set_history(
        [{"role": "user", "content": "word " * 200}, {"role": "assistant", "content": "ok"}]
    )
    c.use("before_overflow", lambda history: False)
    c.use("after_overflow", lambda history, report: calls.append(report))
    assert c.compile().meta.overflow is None
    assert calls == [None]


def test_a_raising_slot_handler_fails_the_compile_and_unuse_removes_it() -> None:
    def broken(messages: Any) -> None:
        raise RuntimeError("slot bug")

    c = chef().use("before_adapt", broken)
    with pytest.raises(RuntimeError, match="slot bug"):
        c.compile()
    assert c.unuse("before_adapt", broken) is True
    assert c.unuse("before_adapt", broken) is False
    c.compile()
    with pytest.raises(ConfigError, match="unknown pipeline slot"):
        c.use("middle", broken)


async def test_async_chef_awaits_async_slot_handlers() -> None:
    c = AsyncContextChef().set_history([{"role": "user", "content": "hi"}])

    async def inject(ctx: Any) -> None:
        ctx.inject("<async/>")

    c.use("before_assemble", inject)
    assert "<async/>" in (await c.compile())["messages"][-1]["content"]
