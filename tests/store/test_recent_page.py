"""`recent_page` pages exactly as a sort by `recency_key` does, whether it sorts or takes a small
page with a heap, for float, int, bool, missing and non-number times, with ties broken by path,
for every page size and offset."""

from __future__ import annotations

import random
from typing import Any

from contextchef.store.backend import StoredEntry
from contextchef.store.recent import recency_key, recent_page
from tests.fuzz import examples


def _meta(rng: random.Random, floats_only: bool) -> dict[str, Any]:
    kind = 0 if floats_only else rng.randrange(6)
    if kind == 1:
        return {"updated_at": rng.randint(0, 5)}
    if kind == 2:
        return {"updated_at": rng.choice((True, False))}
    if kind == 3:
        return {}
    if kind == 4:
        return {"updated_at": "yesterday"}
    return {"updated_at": float(rng.randint(0, 5)), "other": 1}  # ties: the path decides


def test_a_recent_page_is_the_sorted_slice() -> None:
    rng = random.Random(5)
    for _ in range(examples(300)):
        floats_only = rng.random() < 0.6
        size = rng.choice((0, 1, 3, 10, 40, 200))
        paths = rng.sample([f"d/{n:03}" for n in range(400)], size)
        items = [(p, StoredEntry(p, _meta(rng, floats_only))) for p in paths]
        limit, offset = rng.choice((1, 2, 10, 32, 500)), rng.choice((0, 0, 1, 7))
        expected = dict(sorted(items, key=recency_key)[offset : offset + limit])
        page = recent_page(items, limit, offset)
        assert list(page) == list(expected), (floats_only, size, limit, offset)
        assert all(page[p] is expected[p] for p in page)
