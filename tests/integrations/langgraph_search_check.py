"""One check both filter differential tests make: a LangGraph store's filtered searches (over a
prefix, a page of it, a page of one namespace) find what `matches_filter` finds in `everything`."""

from __future__ import annotations

import random
from typing import Any

from contextchef.integrations._langgraph_filter import matches_filter
from contextchef.integrations.langgraph import ContextChefStore


def searches_agree(
    store: ContextChefStore, everything: list[Any], filter: dict[str, Any], rng: random.Random
) -> list[tuple[tuple[str, ...], str]]:
    """Assert the searches of `store` agree with `matches_filter`; the expected addresses."""
    expected = [(i.namespace, i.key) for i in everything if matches_filter(i.value, filter)]
    found = store.search(("users",), filter=filter, limit=1000)
    assert [(i.namespace, i.key) for i in found] == expected, filter
    offset, limit = rng.randint(0, 4), rng.randint(1, 4)
    page = store.search(("users",), filter=filter, limit=limit, offset=offset)
    assert [(i.namespace, i.key) for i in page] == expected[offset : offset + limit]
    one = store.search(("users", "u1"), filter=filter, limit=limit, offset=offset)
    in_one = [address for address in expected if address[0] == ("users", "u1")]
    assert [(i.namespace, i.key) for i in one] == in_one[offset : offset + limit]
    return expected
