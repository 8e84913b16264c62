"""Tool-call ids Anthropic accepts (`^[a-zA-Z0-9_-]+$`) are sent as they are, others rewritten."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from contextchef.adapters.anthropic_blocks import wire_id as _wire_id


@given(st.text(max_size=8) | st.from_regex(r"[A-Za-z0-9_-]+", fullmatch=True))
@example("")
@example("-")
@example("_")
@example("call_1-x")
@example("1abc")
@example("class")
@example("a b")
@example("ａ1")  # a fullwidth letter: alphanumeric, but not ASCII
@example("٣")  # an Arabic-Indic digit
def test_an_id_is_kept_exactly_when_anthropic_accepts_it(call_id: str) -> None:
    accepted = re.fullmatch(r"[A-Za-z0-9_-]+", call_id) is not None
    assert (_wire_id(call_id) == call_id) is accepted
    assert re.fullmatch(r"[A-Za-z0-9_-]+", _wire_id(call_id)) or not call_id
