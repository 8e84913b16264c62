"""`loads_sorted_fast` gives what the standard-library decoders it stands in for give: the same
value with the same key order, or the same error with the same message."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from contextchef._jsonvalue import loads_sorted
from contextchef.adapters.gemini import _decoder
from contextchef.adapters.json_args import loads_sorted_fast

values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=6),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
texts = st.one_of(values.map(json.dumps), st.text(max_size=12))


def outcome(decode: Any, text: str) -> tuple[str, Any]:
    try:
        value = decode(text)
    except (ValueError, RecursionError) as exc:
        return "error", (type(exc), str(exc))
    return json.dumps(value), value


@given(texts)
@example('{"b": 1, "a": {"d": [{"z": 0, "y": 1}], "c": 2}}')
@example('{"a": 123456789012345678901234567890, "b": -9223372036854775809}')
@example('{"a": 1, "a": 2}')
@example('{"a": NaN}')
@example('"\\ud800"')
@example("\ufeff{}")
@example('{"a": 1e400}')
@example("[" * 900 + "]" * 900)
@example("[" * 1100 + "]" * 1100)
@example('{"a": -0.0, "b": -0}')
def test_fast_decoding_equals_the_standard_library(text: str) -> None:
    for slow in (loads_sorted, _decoder.decode):
        fast = outcome(lambda t: loads_sorted_fast(t, slow), text)  # noqa: B023
        assert fast == outcome(slow, text)
        assert fast[0] == outcome(slow, text)[0]  # the same bytes: key order included
