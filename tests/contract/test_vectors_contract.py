"""The `vectors` capability (a semantic index) on every backend, through every store API.

Every backend that declares it must rank the same vectors the same way, with the scores this
test computes itself from the deterministic embedding; a backend that does not declare it
refuses an index with `StoreCapabilityError` when the store is built.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import pytest

from contextchef.errors import ConfigError, StoreCapabilityError
from contextchef.store import StoredEntry
from contextchef.store.backend import backend_supports
from tests.contract import pg
from tests.contract.conftest import BACKENDS, VERSIONED
from tests.semantic_embedding import DIMS, Embedding, cosine, embed_one

VECTOR_BACKENDS = {name: make for name, make in BACKENDS.items() if name != "postgres"}
VECTOR_BACKENDS["postgres-exact"] = functools.partial(pg.open_postgres, pgvector="off")
VECTOR_BACKENDS["postgres-pgvector"] = pg.open_postgres_pgvector
"""PostgreSQL twice: scoring in the client, and ranking with pgvector (skipped without it)."""


@pytest.fixture(params=sorted(VECTOR_BACKENDS))
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend(backend_name: str, tmp_path: Path) -> Any:
    opened = VECTOR_BACKENDS[backend_name](tmp_path)
    opened.keep_versions(VERSIONED)
    return opened


NOTES = {
    "auth/retry.md": "retry on 401 in auth.py",
    "auth/tokens.md": "refresh the credentials before they expire",
    "ci/flaky.md": "the login spec is flaky on CI",
    "misc/weather.md": "sunny weather forecast for friday",
    "misc/lunch.md": "lunch at noon with the team",
}


def _expected(
    query: str, notes: dict[str, str], metric: str = "cosine", prefix: str = ""
) -> list[tuple[str, float]]:
    q = embed_one(query)
    scores: list[tuple[str, float]] = []
    for path, text in notes.items():
        if not path.startswith(prefix):
            continue
        v = embed_one(text)
        if metric == "cosine":
            score = cosine(q, v)
        elif metric == "l2":
            score = -math.sqrt(sum((a - b) ** 2 for a, b in zip(q, v, strict=True)))
        else:
            score = sum(a * b for a, b in zip(q, v, strict=True))
        scores.append((path, score))
    scores.sort(key=lambda item: (-item[1], item[0]))
    return scores


def _indexed(make_store: Any, backend: Any, **index: Any) -> tuple[Any, Embedding]:
    embedding = Embedding()
    store = make_store(backend, index={"embed": embedding, "dims": DIMS, **index})
    return store, embedding


def _check(hits: list[Any], expected: list[tuple[str, float]]) -> None:
    assert [hit.path for hit in hits] == [path for path, _ in expected]
    for hit, (_, score) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(score, abs=1e-8)
        assert hit.matched == ("semantic",)


def test_every_backend_ranks_the_same_vectors_the_same_way(
    make_store: Any, backend: Any, ns: str
) -> None:
    if not backend_supports(backend, "vectors", ns):
        with pytest.raises(StoreCapabilityError, match="vectors"):
            _indexed(make_store, backend)
        return
    store, embedding = _indexed(make_store, backend, batch_size=2)
    view = store.namespace(ns)
    view.restore({path: StoredEntry(text) for path, text in NOTES.items()})
    assert [len(batch) for batch in embedding.batches] == [2, 2, 1]  # batched on write
    query = "fixed the flaky login test"
    _check(view.search(query, mode="semantic"), _expected(query, NOTES))
    _check(view.search(query, mode="semantic", limit=2), _expected(query, NOTES)[:2])
    _check(
        view.search(query, mode="semantic", prefix="auth/"),
        _expected(query, NOTES, prefix="auth/"),
    )


@pytest.mark.parametrize("metric", ["cosine", "l2", "inner_product"])
def test_nearest_scores_each_metric(backend: Any, ns: str, metric: str) -> None:
    if not backend_supports(backend, "vectors", ns):
        return
    backend.put_vectors(ns, {path: embed_one(text) for path, text in NOTES.items()})
    backend.put_vectors(ns, {"misc/lunch.md": embed_one("lunch with the login team")})
    notes = {**NOTES, "misc/lunch.md": "lunch with the login team"}
    query = "fixed the flaky login test"
    found = backend.nearest(ns, embed_one(query), metric=metric, prefix="", limit=None)
    expected = _expected(query, notes, metric)
    assert [path for path, _ in found] == [path for path, _ in expected]
    assert [score for _, score in found] == pytest.approx([s for _, s in expected], abs=1e-8)
    backend.delete_vectors(ns, ["auth/retry.md"])
    found = backend.nearest(ns, embed_one(query), metric=metric, prefix="auth/", limit=1)
    assert found == [(p, pytest.approx(s, abs=1e-8)) for p, s in expected if p == "auth/tokens.md"]
    backend.delete_vectors(ns, None)
    assert backend.nearest(ns, embed_one(query), metric=metric, prefix="", limit=None) == []


def test_writes_keep_the_vectors_current(make_store: Any, backend: Any, ns: str) -> None:
    if not backend_supports(backend, "vectors", ns):
        return  # refused at construction: see the test above
    store, embedding = _indexed(make_store, backend)
    view = store.namespace(ns)
    notes = dict(NOTES)
    for path, text in notes.items():
        view.put(path, text)
    query = "login credentials"
    _check(view.search(query, mode="semantic"), _expected(query, notes))

    view.put("misc/lunch.md", "sign-in fails with 401")  # content changed: embedded again
    assert embedding.batches[-1] == ["sign-in fails with 401"]
    notes["misc/lunch.md"] = "sign-in fails with 401"
    view.append("misc/weather.md", " and the login page is down")
    notes["misc/weather.md"] += " and the login page is down"
    view.delete("auth/retry.md")
    del notes["auth/retry.md"]
    _check(view.search(query, mode="semantic"), _expected(query, notes))

    assert view.reindex() == len(notes)
    _check(view.search(query, mode="semantic"), _expected(query, notes))


def test_hybrid_fuses_text_and_meaning(make_store: Any, backend: Any, ns: str) -> None:
    if not backend_supports(backend, "vectors", ns):
        return
    store, _ = _indexed(make_store, backend)
    view = store.namespace(ns)
    for path, text in NOTES.items():
        view.put(path, text)
    hits = view.search("401", limit=3)  # hybrid is the default once indexed
    assert hits[0].path == "auth/retry.md"
    assert hits[0].matched == ("lexical", "semantic")  # the only entry holding the text
    assert all(hit.matched == ("semantic",) for hit in hits[1:])
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    lexical = view.search("401", mode="lexical")
    assert [(hit.path, hit.matched) for hit in lexical] == [("auth/retry.md", ())]


def _vector_paths(backend: Any, ns: str) -> list[str]:
    return sorted(path for path, _ in backend.nearest(ns, embed_one("x"), prefix="", limit=None))


def test_a_vector_whose_entry_is_gone_is_skipped_then_deleted(
    make_store: Any, backend: Any, ns: str
) -> None:
    if not backend_supports(backend, "vectors", ns):
        return
    store, _ = _indexed(make_store, backend)
    view = store.namespace(ns)
    for path, text in NOTES.items():
        view.put(path, text)
    backend.delete(ns, "auth/retry.md")  # behind the index's back: its vector stays
    backend.put_vectors(ns, {"auth/tokens.md//title": embed_one("retry on 401")})
    backend.delete(ns, "auth/tokens.md")  # an entry with two vectors
    notes = {p: t for p, t in NOTES.items() if not p.startswith("auth/")}
    query = "retry on 401 in auth.py"
    _check(view.search(query, mode="semantic"), _expected(query, notes))
    assert "auth/retry.md" in _vector_paths(backend, ns)  # a search never writes...
    store.flush()  # ...it leaves the deletion to the next write
    assert _vector_paths(backend, ns) == sorted(notes)


def test_min_score_cuts_matches_by_meaning_but_not_by_text(
    make_store: Any, backend: Any, ns: str
) -> None:
    if not backend_supports(backend, "vectors", ns):
        return
    store, _ = _indexed(make_store, backend, min_score=0.3)
    view = store.namespace(ns)
    for path, text in NOTES.items():
        view.put(path, text)
    query = "401 login"
    expected = _expected(query, NOTES)
    above = [(path, score) for path, score in expected if score >= 0.3]
    assert 0 < len(above) < len(expected)  # the cut-off has something to cut
    _check(view.search(query, mode="semantic"), above)
    _check(view.search(query, mode="semantic", min_score=None), above)  # the index's default
    cut = [(path, score) for path, score in expected if score >= 0.5]
    _check(view.search(query, mode="semantic", min_score=0.5), cut)  # the call's own
    _check(view.search(query, mode="semantic", min_score=-1), expected)
    hybrid = view.search("lunch", min_score=0.9)  # no note means lunch that much
    assert [(hit.path, hit.matched) for hit in hybrid] == [("misc/lunch.md", ("lexical",))]
    with pytest.raises(ConfigError, match="min_score"):
        view.search(query, min_score=float("nan"))
