"""Arguments, addresses and pages, directly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextchef.retrieval.arguments import (
    Address,
    ToolInputError,
    line_number,
    parse_address,
    parse_arguments,
    view_range,
)
from contextchef.retrieval.paging import join_lines, numbered, paginate, split_lines


def test_parse_arguments_accepts_json_dicts_and_nothing() -> None:
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments(b'{"a": 1}') == {"a": 1}
    assert parse_arguments({"a": 1}) == {"a": 1}
    assert parse_arguments(None) == {}
    assert parse_arguments(" \n") == {}
    for bad in ("{", "[" * 100_000, "null", '"text"', "true"):
        with pytest.raises(ToolInputError):
            parse_arguments(bad)


@pytest.mark.parametrize(("value", "expected"), [(3, 3), ("3", 3), (" -2 ", -2), (4.0, 4)])
def test_line_numbers(value: object, expected: int) -> None:
    assert line_number({"n": value}, "n") == expected


@pytest.mark.parametrize("value", ["3.5", 3.5, True, "x", [1], float("nan"), "9" * 40])
def test_bad_line_numbers(value: object) -> None:
    with pytest.raises(ToolInputError, match='"n" argument must be a whole number'):
        line_number({"n": value}, "n")


def test_view_range_forms() -> None:
    assert view_range({}) is None
    assert view_range({"view_range": [2, -1]}) == (2, -1)
    assert view_range({"view_range": (2, 2)}) == (2, 2)
    assert view_range({"view_range": "[1, 5]"}) == (1, 5)
    for bad in ([1, 2, 3], "1-5", [2, 1], [0, 1], [1, -2], {"a": 1}):
        with pytest.raises(ToolInputError, match="view_range"):
            view_range({"view_range": bad})


@pytest.mark.parametrize(
    ("raw", "ns", "path"),
    [
        ("context://notes/a/b.md", "notes", "a/b.md"),
        ("notes/a/b.md", "notes", "a/b.md"),
        ("/notes/a/b.md", "notes", "a/b.md"),
        ("//notes/", "notes", ""),
        ("notes", "notes", ""),
        ("context://notes", "notes", ""),
        ("notes/dir/", "notes", "dir/"),
    ],
)
def test_parse_address(raw: str, ns: str, path: str) -> None:
    assert parse_address(raw) == Address(ns, path)


def test_address_parts() -> None:
    entry = parse_address("notes/a/b.md")
    assert (entry.uri, entry.root, entry.parent) == (
        "context://notes/a/b.md",
        "context://notes/",
        "context://notes/a/",
    )
    assert entry.as_directory().uri == "context://notes/a/b.md/"
    assert parse_address("notes/a/").parent == "context://notes/"
    assert parse_address("notes").is_directory


@given(st.text(alphabet=st.sampled_from("ab\n\r\t é"), max_size=30))
def test_split_and_join_lines_round_trip(text: str) -> None:
    lines, trailing = split_lines(text)
    assert join_lines(lines, trailing) == text
    assert all("\n" not in line for line in lines)


def test_paginate_limits() -> None:
    items = [f"item {i}" for i in range(1, 8)]
    page = paginate(items, None, numbered, uri="u", unit="line", max_rows=3)
    assert (page.first, page.last, page.total, page.whole) == (1, 3, 7, False)
    assert page.notes == [
        "[Showing lines 1-3 of 7. To read on, call again with view_range [4, 6].]"
    ]
    last = paginate(items, (7, -1), numbered, uri="u", unit="line", max_rows=3)
    assert (last.rows, last.notes) == (["     7\titem 7"], [])
    whole = paginate(items, (1, 99), numbered, uri="u", unit="line")
    assert whole.whole
    with pytest.raises(ToolInputError, match="starts at entry 8"):
        paginate(items, (8, -1), numbered, uri="u", unit="entry")
