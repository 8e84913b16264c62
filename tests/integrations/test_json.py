"""Stored JSON decodes to exactly what `json.loads` gives, orjson or not."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef._jsonload import flat_object, loads
from contextchef.adapters.json_args import ORJSON

CASES = [
    '[{"role":"user","content":"héllo 日本"}]',
    '{"n": 1.5, "big": 123456789012345678901234567890, "neg": -0.0}',
    '"\\ud800 a lone surrogate"',
    '{"a": 1, "a": 2}',
    "[1e400]",
    "[18446744073709551615, 18446744073709551616, -9223372036854775809]",
]


@pytest.mark.parametrize("text", CASES)
def test_loads_is_json_loads(text: str) -> None:
    assert repr(loads(text)) == repr(json.loads(text))


def test_bad_json_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        loads("[1,")


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None)
@given(JSON)
def test_any_value_decodes_as_json_decodes_it(value: object) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert repr(loads(text)) == repr(json.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN}',
        '{"a": 1e999}',
        '{"a": "\\ud800"}',
        '{"a": 18446744073709551616}',
        '{"a": 1.5}',
        '{"a": [1]}',
        '{"a": {}}',
        "[1]",
        '{"a": 1',
        "",
    ],
)
def test_flat_object_vouches_for_nothing_json_reads_otherwise_or_strict_json_refuses(
    text: str,
) -> None:
    # what tool-call intake then checks the long way: not strict JSON, not flat, not an object
    assert not flat_object(text)


@pytest.mark.skipif(not ORJSON, reason="without orjson every text is checked the long way")
def test_flat_object_recognises_the_usual_tool_call_arguments() -> None:
    assert flat_object('{"path": "src/a.py", "limit": 50, "all": true, "at": null, "u": "\\u00e9"}')
