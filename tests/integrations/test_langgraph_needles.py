"""The text prefilter of a filtered search (`text_needles`) never drops a match.

A search skips an entry whose stored JSON text lacks one of the filter's needles without decoding
it, so a needle must be in the text of every value the filter matches: checked directly against
the text `_jsondump` writes, and end to end (an in-memory `ContextChefStore`, whose filter runs in
Python) against the unfiltered search filtered by `matches_filter`, in recency order, for every
page. Strings a writer may escape (quotes, backslashes, `/`, control and non-ASCII characters)
are among the values and wanted strings, so a needle made of them would drop matches.
"""

from __future__ import annotations

import random
from typing import Any

from contextchef._jsondump import dumps
from contextchef.integrations._langgraph_filter import matches_filter, text_needles
from contextchef.integrations.langgraph import ContextChefStore
from tests.fuzz import examples
from tests.integrations.langgraph_search_check import searches_agree

KEYS = ("kind", "a", "a.b", "tags")
STRINGS = ("b", "a b", "", "x/y", 'say "b"', "back\\slash", "é", "a\nb", "<b>", "1", "null")


def _string(rng: random.Random) -> str:
    return "b" if rng.random() < 0.4 else rng.choice(STRINGS)  # "b" often: filters match


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8)
    if depth < 2 and kind == 0:
        return {k: _value(rng, depth + 1) for k in rng.sample(("b", "kind"), rng.randint(0, 2))}
    if depth < 2 and kind == 1:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 2))]
    if kind == 2:
        return rng.choice((1, 1.0, True, None))
    return _string(rng)


def _item(rng: random.Random) -> dict[str, Any]:
    item = {k: _value(rng) for k in rng.sample(KEYS, rng.randint(1, len(KEYS)))}
    if rng.random() < 0.3:  # a nested field that the dotted key "a.b" reaches
        item["a"] = {"b": _string(rng)}
    return item


def _filter(rng: random.Random) -> dict[str, Any]:
    def wanted() -> Any:
        kind = rng.randrange(5)
        if kind == 0:
            return {"$eq": _value(rng, 1)} if rng.random() < 0.7 else {"$ne": _string(rng)}
        if kind == 1:
            return _value(rng)
        return _string(rng)

    return {k: wanted() for k in rng.sample(KEYS, rng.choice((1, 1, 2)))}


def test_every_value_a_filter_matches_holds_its_needles() -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(examples(3000)):
        value, filter = _item(rng), _filter(rng)
        if matches_filter(value, filter):
            text = dumps(value)
            assert all(needle in text for needle in text_needles(filter)), (value, filter)
            checked += bool(text_needles(filter))
    assert checked > examples(3000) * 0.05  # the check saw matches with needles


def test_a_needle_is_only_a_string_spelled_verbatim() -> None:
    assert text_needles({"kind": "b", "n": 1, "x": {"$eq": "c", "$ne": "d"}}) == ('"b"', '"c"')
    assert text_needles({"q": 'say "b"', "s": "x/y", "u": "é", "e": "a\nb"}) == ()
    assert text_needles({"user": {"name": "ann", "tags": ["t", 2]}}) == ('"ann"', '"t"')


def test_filtered_searches_find_what_the_unfiltered_search_holds() -> None:
    rng = random.Random(24)
    store = ContextChefStore("memory")
    values = [_item(rng) for _ in range(40)]
    for n, value in enumerate(values):
        store.put(("users", f"u{n % 3}"), f"k{n}", value)
    everything = store.search(("users",), limit=1000)
    assert len(everything) == len(values)
    for _ in range(examples(150)):
        filter = _filter(rng)
        searches_agree(store, everything, filter, rng)


def test_a_returned_value_is_the_callers_own() -> None:
    store = ContextChefStore("memory")
    store.put(("users",), "k", {"kind": "b", "tags": ["x"]})
    (found,) = store.search(("users",), filter={"kind": "b"})
    found.value["tags"].append("y")
    found.value["kind"] = "c"
    (again,) = store.search(("users",), filter={"kind": "b"})
    assert again.value == {"kind": "b", "tags": ["x"]}
