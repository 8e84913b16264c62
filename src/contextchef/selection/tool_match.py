"""Does a task mention a tool? Word matching over a tool's name, tags and description.

A task and a tool are both reduced to lowercase terms (names split at `_`, `-`, `.` and
camelCase humps; common English words dropped) and each term to a few variants with an
inflection removed (`tests`, `testing` and `tested` all meet `test`), so "fix the failing
tests" finds `run_tests`. Matching is pure and deterministic; a tool's terms are memoised by its
name, description and tags, which is what keeps pruning 200 tools well under a millisecond.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "ToolTerms",
    "match_tags",
    "match_task",
    "task_identifiers",
    "task_terms",
    "tool_terms",
]

_WORD = re.compile(r"[A-Za-z0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_.\-]+")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SUFFIXES = ("ing", "ed", "es", "s", "er")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "up",
        "us",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "all",
        "also",
        "only",
        "each",
        "use",
        "used",
        "uses",
        "using",
        "via",
        "tool",
        "tools",
        "given",
        "return",
        "returns",
    ]
)


def _variants(word: str) -> frozenset[str]:
    """`word` and its stems: one inflection off (`files` → `file`), a doubled final consonant
    undone (`committed` → `commit`); a stem keeps three letters at least."""
    out = {word}
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            out.add(stem)
            if len(stem) >= 4 and stem[-1] == stem[-2] and stem[-1] not in "aeiou":
                out.add(stem[:-1])
    return frozenset(out)


def _terms(text: str, minimum: int) -> dict[str, str]:
    """Every variant of every significant word of `text`, mapped to the word it came from."""
    out: dict[str, str] = {}
    for raw in _WORD.findall(_HUMP.sub(" ", text)):
        word = raw.lower()
        if len(word) < minimum or word in _STOPWORDS:
            continue
        for variant in _variants(word):
            out.setdefault(variant, word)
    return out


_KINDS = ("its name", "its tag", "its description")


@dataclass(frozen=True, slots=True)
class ToolTerms:
    """A tool's terms: `ranked` maps every variant to (kind, the word it came from), kind 0 for
    the name, 1 for a tag, 2 for the description (the first kind found wins)."""

    name: str
    tags: frozenset[str]
    ranked: dict[str, tuple[int, str]]


@lru_cache(maxsize=4096)
def tool_terms(name: str, description: str, tags: tuple[str, ...]) -> ToolTerms:
    """The terms of one tool (memoised: a chef prunes the same tools turn after turn)."""
    ranked: dict[str, tuple[int, str]] = {}
    spaced = name.replace("_", " ").replace("-", " ").replace(".", " ")
    for kind, found in (
        (0, _terms(spaced, 2)),
        (1, {v: tag for tag in tags for v in _terms(tag, 2)}),
        (2, _terms(description, 3)),
    ):
        for variant, word in found.items():
            ranked.setdefault(variant, (kind, word))
    return ToolTerms(name.lower(), frozenset(tag.lower() for tag in tags), ranked)


@lru_cache(maxsize=256)
def task_terms(task: str) -> frozenset[str]:
    """The term variants of a task text."""
    return frozenset(_terms(task, 2))


@lru_cache(maxsize=256)
def task_identifiers(task: str) -> frozenset[str]:
    """The identifier-like tokens of a task (`git_commit`, `open-page`), lowercased: a tool
    whose whole name is one of them is named by the task."""
    return frozenset(token.strip(".-").lower() for token in _IDENTIFIER.findall(task))


def match_task(task: str, terms: frozenset[str], tool: ToolTerms) -> str | None:
    """Why the task selects the tool (the first of: it names the tool, a word of the name, a
    tag, a word of the description), or None when nothing matches."""
    if tool.name in task_identifiers(task):
        return f"the task names {tool.name!r}"
    common = terms.intersection(tool.ranked)
    if not common:
        return None
    kind, word = min(tool.ranked[variant] for variant in common)
    return f"the task mentions {word!r} ({_KINDS[kind]})"


def match_tags(wanted: tuple[str, ...], tool: ToolTerms) -> str | None:
    """Why the tool carries one of the `wanted` tags (compared without case), or None."""
    for tag in wanted:
        if tag.lower() in tool.tags:
            return f"tagged {tag!r}"
    return None
