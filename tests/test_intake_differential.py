"""`intake_message` (the fast path, with its fallback) against the reference path
(`reference_intake`: the schema's validator, then `strict_json`), both read from
`messages.MESSAGE_SCHEMA`: for every message, valid or not, the same copy (equal, same key order
at every level, same types, the same `json.dumps` bytes) or the same error (type, text, index and
field).

Every message is also run through tests/intake_oracle.py, a frozen copy of the intake as it was
before the schema (hand-written `validate_message`, then `strict_json`): a regression fixture
that holds the reference path to the sentences, fields and order of errors users have always
seen. A deliberate change of one of them updates the fixture in the same commit.
"""

from __future__ import annotations

import collections
import enum
import json
import math
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextchef import _hosttext
from contextchef._intake import fast_intake, intake_message, intake_messages, reference_intake
from contextchef._jsonvalue import MAX_DEPTH
from tests.benchmark_transcript import benchmark_transcript
from tests.fuzz import examples
from tests.intake_oracle import oracle_intake

HUGE = 10 ** (sys.get_int_max_str_digits() + 10) if sys.get_int_max_str_digits() else 10**5000


class Text(str):
    """A str subclass (validate_message accepts it where it asks for a string)."""


class Number(int):
    pass


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Frozen(Mapping[Any, Any]):
    """A Mapping that is not a dict."""

    def __init__(self, data: dict[Any, Any]) -> None:
        self._data = data

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


class Sub(dict):  # type: ignore[type-arg]
    pass


def big(name: str) -> int:
    return {"2**2001": 2**2001, "huge": HUGE, "-huge": -HUGE}[name]


def outcome(run: Any, message: Any, index: int | None) -> tuple[str, Any]:
    try:
        copy = run(message, index)
    except Exception as exc:  # every error must match, whatever its type
        return "error", (
            type(exc),
            str(exc),
            getattr(exc, "index", None),
            getattr(exc, "field", None),
        )
    return "copy", (typed(copy), json.dumps(copy))


def typed(value: Any) -> Any:
    """The value with every type and key order made explicit, for a strict comparison."""
    if isinstance(value, dict):
        return ("dict", type(value), [(type(k), k, typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", type(value), [typed(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value), value)


def same(message: Any, index: int | None = 3) -> None:
    expected = outcome(reference_intake, message, index)
    assert outcome(intake_message, message, index) == expected
    assert expected == outcome(oracle_intake, message, index)  # the regression fixture
    if index is not None:  # a history's intake: the native batch path first (`_intake_core`)
        assert outcome(_in_a_history, message, index) == expected


def _in_a_history(message: Any, index: int) -> Any:
    """`message` taken as the one message of a history starting at `index`."""
    return intake_messages([message], index)[0]


def nested(depth: int, leaf: Any = 1, kind: str = "list") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(["2**2001", "huge", "-huge"]).map(big),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["", "user", "assistant", "tool", "system", "text", "image", "document"]),
    st.builds(Text, st.sampled_from(["x", "user", "text", "compaction"])),
    st.builds(Number, st.integers(-3, 3)),
    st.sampled_from([Colour.RED, Level.HIGH, b"bytes", object(), 1j]),
    st.sampled_from(["commentary", "final_answer", "compaction", "data", "c1"]),
    st.frozensets(st.integers(0, 3), max_size=3),  # sets never recurse: leaves, not containers
    st.sets(st.text(max_size=2), max_size=3),
)
keys = st.one_of(
    st.sampled_from(["type", "text", "data", "url", "media_type", "id", "name", "arguments"]),
    st.text(max_size=4),
    st.sampled_from([1, None, ("t",), Text("text"), Text("type")]),
)


def containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(keys, children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), children, max_size=3).map(Frozen),
        st.dictionaries(st.text(max_size=3), children, max_size=3).map(Sub),
        st.dictionaries(st.text(max_size=3), children, max_size=3).map(collections.OrderedDict),
    )


values = st.recursive(scalars, containers, max_leaves=8)
strings = st.one_of(st.text(max_size=6), st.sampled_from(["c1", "ls", "x"]), values)

arguments = st.one_of(
    st.sampled_from(
        [
            "{}",
            '{"path": "a.py", "limit": 3}',
            '{"x": NaN}',
            '{"x": Infinity}',
            '{"x": -Infinity}',
            '{"x": 1e999}',
            '{"x": 1E+308}',
            '{"x": 2.5e-300}',
            "not json",
            '{"x": ' + "1" * 5000 + "}",
            "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
            "[" * MAX_DEPTH + "]" * MAX_DEPTH,
            '{"a": [' + "0," * 300 + "0]}",
        ]
    ),
    st.text(max_size=10),
    values,
)
functions = st.one_of(
    st.fixed_dictionaries(
        {"name": strings, "arguments": arguments},
        optional={"extra": values},
    ),
    values,
)
calls = st.one_of(
    st.fixed_dictionaries(
        {"id": strings, "type": st.just("function"), "function": functions},
        optional={"gemini_thought_signature": strings, "more": values},
    ),
    values,
)
parts = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": strings}, optional={"x": values}),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["image", "document", "image_url", "tool_use", Text("image")])},
        optional={
            "data": strings,
            "url": strings,
            "text": strings,
            "media_type": strings,
            "filename": strings,
        },
    ),
    values,
)
flags = st.one_of(st.booleans(), values)
fields = {
    "content": st.one_of(st.text(max_size=8), st.none(), st.lists(parts, max_size=3), values),
    "name": strings,
    "tool_calls": st.one_of(st.lists(calls, max_size=3), st.none(), values),
    "tool_call_id": strings,
    "pinned": flags,
    "_cache_breakpoint": flags,
    "thinking": st.one_of(
        st.fixed_dictionaries({"thinking": strings}, optional={"signature": strings}), values
    ),
    "redacted_thinking": st.one_of(
        st.lists(st.fixed_dictionaries({"data": strings}), max_size=2), values
    ),
    "openai_reasoning": st.one_of(
        st.lists(st.fixed_dictionaries({"type": st.just("reasoning"), "id": strings})), values
    ),
    "openai_phase": st.one_of(st.sampled_from(["commentary", "final_answer", "other"]), values),
    "gemini_thought_signature": strings,
    "anthropic_compaction": st.one_of(
        st.fixed_dictionaries({"type": st.sampled_from(["compaction", "x"]), "content": strings}),
        values,
    ),
    "refusal": strings,
    "extra": values,
}
roles = st.one_of(st.sampled_from(["system", "user", "assistant", "tool"]), values)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    chosen = draw(st.lists(st.sampled_from(sorted(fields)), unique=True, max_size=5))
    message: dict[Any, Any] = {"role": draw(roles)}
    for name in chosen:
        message[name] = draw(fields[name])
    if draw(st.booleans()):  # the keys in a host's order, not ours
        message = dict(reversed(list(message.items())))
    wrap = draw(st.sampled_from(["dict", "dict", "dict", "dict", "Frozen", "Sub", "list"]))
    return {"Frozen": Frozen, "Sub": Sub, "list": lambda m: list(m.items())}.get(wrap, lambda m: m)(
        message
    )


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages(), st.sampled_from([None, 0, 7]))
def test_intake_equals_the_reference_on_any_message(message: Any, index: int | None) -> None:
    same(message, index)


def _one_by_one(batch: list[Any], start: int) -> Any:
    """What `intake_message` makes of each message in turn: the copies, or the first error."""
    try:
        return [intake_message(message, start + at) for at, message in enumerate(batch)]
    except Exception as exc:
        return type(exc), str(exc), getattr(exc, "index", None), getattr(exc, "field", None)


def _batched(batch: list[Any], start: int) -> Any:
    try:
        return intake_messages(batch, start)
    except Exception as exc:
        return type(exc), str(exc), getattr(exc, "index", None), getattr(exc, "field", None)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(messages(), max_size=4),
    st.sampled_from([0, 3]),
    st.booleans(),
    st.sampled_from([1, 2, 512]),
)
def test_a_batch_takes_what_one_by_one_takes(
    batch: list[Any], start: int, orjson: bool, size: int
) -> None:
    """The same copies, or the same first error (a lone surrogate in an early message comes
    before a fault further on), whether orjson checks the text in batches or not."""
    lone = {"role": "user", "content": "a lone \ud800 surrogate"}
    batch = [*batch[:2], lone, *batch[2:]] if size == 2 else batch
    original = _hosttext._orjson, _hosttext._BATCH
    _hosttext._BATCH = size
    _hosttext._orjson = original[0] if orjson else None
    try:
        expected = _one_by_one(batch, start)
        got = _batched(batch, start)
    finally:
        _hosttext._orjson, _hosttext._BATCH = original
    assert type(got) is type(expected)
    assert json.dumps(got, default=repr) == json.dumps(expected, default=repr)


def test_a_long_batch_finds_a_surrogate_past_its_first_chunk_and_keeps_long_integers() -> None:
    history: list[Any] = [{"role": "user", "content": f"m{i}"} for i in range(1300)]
    history[5] = {"role": "user", "content": "x", "extra": 2**70}  # beyond orjson's 64 bits
    assert intake_messages(history)[5]["extra"] == 2**70
    history[1100] = {"role": "tool", "tool_call_id": "c", "content": "bad \udc80"}
    history[1200] = {"role": "robot"}
    expected = _one_by_one(history, 0)
    assert expected[2] == 1100 and "surrogate" in expected[1]
    assert _batched(history, 0) == expected


class Role(str, enum.Enum):  # noqa: UP042 - the older spelling is the point
    """A role as an older enum spells it: its `str()` is "Role.USER", its data "user"."""

    USER = "user"


class Loud(str):
    def __str__(self) -> str:
        return "LOUD"


def test_a_str_subclass_is_taken_by_its_data_on_every_path() -> None:
    """`json.dumps` writes a `str` subclass as its data, and so does every intake path: a
    `(str, Enum)` role is the role itself (it once became "Role.USER" by the reference path),
    and a string whose `__str__` says otherwise is copied as what it holds."""
    message = {
        Text("role"): Role.USER,
        "content": [{Text("type"): "text", "text": Loud("quiet words")}],
    }
    expected = {"content": [{"text": "quiet words", "type": "text"}], "role": "user"}
    for copy in (
        reference_intake(message, 0),
        intake_message(message, 0),
        intake_messages([message])[0],
        intake_messages([{"role": "user", "content": Loud("x")}] * 3)[2],
    ):
        assert copy in (expected, {"content": "x", "role": "user"})
        assert all(type(key) is str and type(value) is not Loud for key, value in copy.items())
        assert type(copy["role"]) is str
    assert json.dumps(reference_intake(message, 0)) == json.dumps(message, sort_keys=True)


def test_a_role_no_validator_could_print_is_refused_without_a_word_on_stderr(
    capfd: Any,
) -> None:
    """A role holding an integer too long to print, or an object whose repr runs host code,
    is refused with the schema's error; nothing runs it and nothing is printed."""

    class Noisy:
        def __repr__(self) -> str:
            raise AssertionError("host code ran")

        __hash__ = __repr__  # type: ignore[assignment]

    for role in (HUGE, Noisy()):
        history = [{"role": "user", "content": "x"}, {"role": role, "content": "y"}]
        try:
            intake_messages(history)
        except Exception as exc:  # the reference path's error, whatever it is
            assert not isinstance(exc, AssertionError)
            assert getattr(exc, "index", None) == 1
        else:
            raise AssertionError("an unknown role was taken")
    assert capfd.readouterr() == ("", "")


SITES = [
    lambda v: {"role": "user", "content": "x", "extra": v},
    lambda v: {"role": "user", "content": [{"type": "text", "text": "x", "x": v}]},
    lambda v: {"role": "assistant", "thinking": {"thinking": "t", "x": v}},
    lambda v: {"role": "assistant", "openai_reasoning": [{"type": "reasoning", "x": v}]},
    lambda v: {"role": "assistant", "anthropic_compaction": {"type": "compaction", "x": v}},
    lambda v: {"role": "assistant", "redacted_thinking": [{"data": "d", "x": v}]},
    lambda v: {
        "role": "assistant",
        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}", "x": v}}],
    },
    lambda v: {
        "role": "assistant",
        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}, "x": v}],
    },
]


@given(
    st.sampled_from(range(len(SITES))),
    st.integers(MAX_DEPTH - 6, MAX_DEPTH + 1),
    st.sampled_from(["list", "dict"]),
)
@settings(max_examples=examples(100), deadline=None)
def test_nesting_at_the_depth_limit_in_every_place(site: int, depth: int, kind: str) -> None:
    same(SITES[site](nested(depth, kind=kind)))


def test_cycles_in_every_place() -> None:
    for build in SITES:
        loop: list[Any] = []
        loop.append(loop)
        same(build(loop))
        knot: dict[str, Any] = {}
        knot["self"] = knot
        same(build(knot))
    message: dict[str, Any] = {"role": "user", "content": "x"}
    message["again"] = message
    same(message)
    parts: list[Any] = [{"type": "text", "text": "x"}]
    parts.append(parts)
    same({"role": "user", "content": parts})


def test_the_benchmark_transcript_copies_identically_on_the_fast_path() -> None:
    for index, message in enumerate(benchmark_transcript(600)):
        same(message, index)
        assert typed(fast_intake(message)) == typed(reference_intake(message, index))


TEMPLATES: list[dict[str, Any]] = [
    {
        "role": "assistant",
        "content": "calling",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "ls", "arguments": '{"path": "."}'},
                "gemini_thought_signature": "c2ln",
            },
            {"id": "c2", "type": "function", "function": {"name": "cat", "arguments": "{}"}},
        ],
        "thinking": {"thinking": "hm", "signature": "s"},
        "redacted_thinking": [{"data": "x"}],
        "openai_reasoning": [{"type": "reasoning", "id": "r1", "summary": []}],
        "openai_phase": "commentary",
        "gemini_thought_signature": "c2ln",
        "anthropic_compaction": {"type": "compaction", "content": "old"},
        "pinned": True,
        "_cache_breakpoint": False,
        "name": "bot",
    },
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "media_type": "image/png", "data": "iVBO"},
            {"type": "image", "url": "https://x/y.png"},
            {"type": "document", "media_type": "text/plain", "text": "doc"},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "done", "extra": {"n": [1, 2.5, None]}},
]
ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    1.5,
    float("nan"),
    float("inf"),
    2**2001,
    "",
    "x",
    Text("x"),
    Number(1),
    b"x",
    [],
    ["x"],
    ("x",),
    {},
    {"x": 1},
    {1: "x"},
    Frozen({"x": 1}),
    Sub(x=1),
    {"x"},
    Colour.RED,
    Level.HIGH,
    "commentary",
    "compaction",
]


def paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*at, index))


def replaced(value: Any, at: tuple[Any, ...], new: Any) -> Any:
    """`value` with the item at path `at` replaced by `new` (deleted by `_DELETE`)."""
    if not at:
        return new
    head, rest = at[0], at[1:]
    if isinstance(value, dict):
        out = dict(value)
        if rest or new is not _DELETE:
            out[head] = replaced(value[head], rest, new)
        else:
            del out[head]
        return out
    out_list = list(value)
    out_list[head] = replaced(value[head], rest, new)
    return out_list


_DELETE = object()


def item_at(value: Any, at: tuple[Any, ...]) -> Any:
    for step in at:
        value = value[step]
    return value


def test_every_single_fault_in_realistic_messages() -> None:
    for template in TEMPLATES:
        same(template)
        for at in paths(template):
            if not at:
                continue
            for new in [*ODD_VALUES, _DELETE]:
                if new is _DELETE and isinstance(at[-1], int):
                    continue
                same(replaced(template, at, new))
        for at in paths(template):  # a key of its own added to every dict
            if isinstance(target := item_at(template, at), dict):
                for new in ODD_VALUES:
                    same(replaced(template, at, {**target, "more": new}))
