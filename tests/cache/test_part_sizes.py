"""A cold compile sizes message parts with pydantic-core (`_part_sizes.message_facts`): the facts
must be `part_facts`' (the `json.dumps` definition of payload_cache) for every JSON value, and
`payload.meta.cache` must not change on any target."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contextchef import ContextChef
from contextchef.cache import ledger as cache_ledger
from contextchef.cache._part_sizes import message_facts
from contextchef.cache.economics import part_facts
from tests.benchmark_transcript import benchmark_transcript
from tests.fuzz import examples

TARGETS = ("openai", "openai-responses", "anthropic", "gemini")

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.integers(-(10**60), 10**60),
        st.floats(allow_nan=False, allow_infinity=False),
        st.floats(),
        st.sampled_from([1e-7, 1e-5, 1e16, 1e22, 5e-324, 1.5e300, -0.0, 100.0, 2.0**-30]),
        st.text(),
        st.sampled_from(['"cache_control":', "1.5", "v2", "3e", "NaN", "\ud800", "😀", "\x00"]),
        st.sampled_from([":e", ",1.5", "[-2E", "a:N", "[I"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.text(max_size=5), st.sampled_from(["cache_control", "type", "é"])),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=20,
)


@settings(max_examples=examples(400), deadline=None)
@given(json_values)
def test_message_facts_are_part_facts(value: Any) -> None:
    assert message_facts(value) == part_facts(value)


def history() -> list[dict[str, Any]]:
    messages = benchmark_transcript(300)
    messages[3] = {**messages[3], "content": "ratio 1.5e-07, v2.0 and NaN ok — é 😀"}
    messages.append({"role": "user", "content": "pinned", "_cache_breakpoint": True})
    return messages


def cold_cache(target: str) -> Any:
    chef = ContextChef().set_system_prompt("You are terse.")
    chef.set_history(history())
    return chef.compile(target=target).meta.cache


@pytest.mark.parametrize("target", TARGETS)
def test_cold_meta_cache_is_unchanged_by_fast_sizing(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = cold_cache(target)
    monkeypatch.setattr(cache_ledger, "message_facts", part_facts)
    assert cold_cache(target) == fast


@settings(max_examples=examples(300), deadline=None)
@given(st.floats())
@example(1e-7)
@example(1.5e-8)
@example(1e16)
@example(-1e-5)
@example(float("nan"))
@example(float("-inf"))
def test_any_float_in_a_message_part_is_sized_as_json_sizes_it(number: float) -> None:
    for part in ({"x": number}, {"a": [1, number]}, {"a": {"b": [number, 2]}}):
        assert message_facts(part) == part_facts(part)
