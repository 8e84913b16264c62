"""A deterministic embedding for the semantic-index tests: no model, no network, exact rankings.

Each text becomes a vector of `DIMS` counts: every word's character trigrams (with `^`/`$`
marking its edges) and every word's *concept*, hashed with BLAKE2b (stable across runs, unlike
`hash()`) into a bucket. `CONCEPTS` is a tiny thesaurus standing in for what a real model
knows, so that two wordings of one idea share buckets ("login" and "auth", "fixed" and
"retry") while sharing few characters; the trigrams give near-spellings ("retries", "retry")
their likeness. Tests compute their expected rankings from these vectors with `cosine`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

__all__ = ["CONCEPTS", "DIMS", "AsyncEmbedding", "Embedding", "cosine", "embed", "embed_one"]

DIMS = 64

CONCEPTS: dict[str, str] = {
    word: concept
    for concept, words in {
        "auth": ("auth", "login", "logins", "sign-in", "signin", "401", "credentials"),
        "flaky": ("flaky", "intermittent", "unstable", "sometimes", "retry", "retries"),
        "repair": ("fixed", "fix", "repaired", "resolved", "patched"),
        "test": ("test", "tests", "spec", "pytest", "ci"),
        "weather": ("weather", "rain", "sunny", "forecast"),
    }.items()
    for word in words
}

_WORD = re.compile(r"[a-z0-9-]+")


def _bucket(feature: str) -> int:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % DIMS


def embed_one(text: str) -> list[float]:
    """The vector of one text."""
    vector = [0.0] * DIMS
    for word in _WORD.findall(text.lower()):
        marked = f"^{word}$"
        for start in range(len(marked) - 2):
            vector[_bucket("g:" + marked[start : start + 3])] += 1.0
        concept = CONCEPTS.get(word)
        if concept is not None:
            vector[_bucket("c:" + concept)] += 4.0
    return vector


def embed(texts: Sequence[str]) -> list[list[float]]:
    """A batched embedding function, as `index={"embed": embed}` takes it."""
    return [embed_one(text) for text in texts]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine similarity, written out here so tests check the store's own arithmetic."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class Embedding:
    """`embed` that records each batch it was given (to check batching and re-embedding)."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return embed(texts)


class AsyncEmbedding:
    """The same as an object with LangChain's async method names only (not callable)."""

    def __init__(self) -> None:
        self.recorder = Embedding()

    async def aembed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self.recorder(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.recorder([text])[0]
