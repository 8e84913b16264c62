"""`scan` takes a `str.find` fast path on ASCII text; it must find, count and snip exactly what
the case-insensitive regex finds on any text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef.store.backend import StoredEntry
from contextchef.store.search import scan, snippet
from tests.fuzz import examples

TEXT = st.text(alphabet=st.sampled_from("aAbB xX\nÉé.ſK"), max_size=60)


def by_regex(items: list[tuple[str, str]], query: str) -> list[tuple[str, float, str]]:
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    hits = []
    for path, content in items:
        first = pattern.search(content)
        if first is not None:
            count = float(sum(1 for _ in pattern.finditer(content)))
            hits.append((path, count, snippet(content, first.start(), first.end())))
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))


@settings(max_examples=examples(150), deadline=None)
@given(contents=st.lists(TEXT, max_size=6), query=st.text(alphabet="abAB xé", max_size=3))
def test_scan_agrees_with_a_case_insensitive_regex(contents: list[str], query: str) -> None:
    items = [(f"p{index}", content) for index, content in enumerate(contents)]
    found = scan([(path, StoredEntry(content)) for path, content in items], query)
    assert [(hit.path, hit.score, hit.snippet) for hit in found] == by_regex(items, query)


def test_scan_keeps_the_best_hits_within_its_limit() -> None:
    entries = [(f"p{count}", StoredEntry("Needle " * count)) for count in range(1, 6)]
    assert [hit.path for hit in scan(entries, "needle", limit=2)] == ["p5", "p4"]
