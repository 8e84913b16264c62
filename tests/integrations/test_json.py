"""Stored JSON decodes to exactly what `json.loads` gives, orjson or not, and is encoded from
exactly what `json.dumps` accepts, meaning what its text means."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef._jsondump import dumps
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


# -- dumps: what `json.dumps(value, ensure_ascii=False, allow_nan=False)` accepts and means --


class _Colour(enum.Enum):
    RED = "red"


class _Text(str):
    pass


@dataclasses.dataclass
class _Point:
    x: int


ODD = [
    float("nan"),
    float("inf"),
    2**64,
    2**64 - 1,
    -(2**63) - 1,
    uuid.UUID(int=7),
    _Colour.RED,
    _Text("sub"),
    _Point(1),
    (1, 2),
    {1: "int key"},
    {"s": {1, 2}},
    "a\ud800b",
    datetime.datetime(2024, 1, 1),
]
"""Values where orjson and `json` differ (or one of them refuses)."""

DUMPABLE = st.recursive(
    JSON | st.sampled_from(ODD),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


def _outcome(encode: Any, value: object) -> tuple[str, Any]:
    try:
        return "ok", json.loads(encode(value))
    except (TypeError, ValueError) as exc:
        return "error", type(exc)


@settings(max_examples=200, deadline=None)
@given(DUMPABLE)
def test_dumps_accepts_refuses_and_means_what_json_dumps_does(value: object) -> None:
    ours = _outcome(dumps, value)
    theirs = _outcome(lambda v: json.dumps(v, ensure_ascii=False, allow_nan=False), value)
    assert ours[0] == theirs[0]
    assert repr(ours[1]) == repr(theirs[1])


@pytest.mark.parametrize("value", ODD)
def test_dumps_of_an_odd_value_matches_json_dumps(value: object) -> None:
    for wrapped in (value, {"v": value}, [value]):
        ours = _outcome(dumps, wrapped)
        theirs = _outcome(lambda v: json.dumps(v, ensure_ascii=False, allow_nan=False), wrapped)
        assert ours[0] == theirs[0] and repr(ours[1]) == repr(theirs[1])


def test_a_value_is_stored_as_the_same_text_with_and_without_orjson(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import contextchef._jsondump as module

    value = {"kind": "note", "n": 7, "tags": ["a", "é"], "done": False, "at": None, "x": 1.5}
    with_orjson = module.dumps(value)
    monkeypatch.setattr(module, "_orjson", None)
    assert (
        module.dumps(value)
        == with_orjson
        == '{"kind":"note","n":7,"tags":["a","é"],"done":false,"at":null,"x":1.5}'
    )


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
