"""The preview's error scan jumps between candidates instead of splitting the middle into lines;
it must keep exactly the lines a line-by-line scan keeps, numbered the same."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextchef.selection import offload
from tests.fuzz import examples

PIECES = [
    "ok\n",
    "E   assert 1 == 2\n",
    "Traceback (most recent call last)\n",
    "\n",
    "  \n",
    "error: x\n",
    "ValueError: boom\n",
    "progress",
    "bar error:",
    "\nerror",
    "   \n  error[E1]: z",
    "FAIL\tpkg\n",
    "exit code 2\n",
    "[ERROR] y\n",
    "E\n\nX",
    "é\n",
    "npm ERR! code 1\n",
    "  Caused by: y\n",
    "Build FA\u0130LED\n",
    "tests fa\u0131led\n",
    "\u017fegmentation fault\n",
    "core DUMPED\n",
    "E\t\tx\n",
    "E  ",
    "x\rerror: y\n",
    "java.lang.IllegalStateException\n",
    "3 failed\n",
    "make: *** [all] Error 2\n",
]


def line_by_line(middle: str, first_line: int, budget: int) -> list[str]:
    kept: list[str] = []
    seen: set[str] = set()
    used = 0
    for offset, line in enumerate(middle.split("\n")):
        if not offload._ERROR_LINE.search(line):
            continue
        text = line.strip()[:300]
        if text in seen:
            continue
        seen.add(text)
        entry = f"{first_line + offset}: {text}"
        if used + len(entry) > budget:
            break
        kept.append(entry)
        used += len(entry) + 1
    return kept


@settings(max_examples=examples(200), deadline=None)
@given(
    pieces=st.lists(st.sampled_from(PIECES), max_size=30),
    cut=st.tuples(st.floats(0, 1), st.floats(0, 1)),
    budget=st.sampled_from([40, 200, 100_000]),
)
def test_the_error_scan_keeps_what_a_line_by_line_scan_keeps(
    pieces: list[str], cut: tuple[float, float], budget: int
) -> None:
    content = "".join(pieces)
    start, end = sorted(int(fraction * len(content)) for fraction in cut)
    expected = line_by_line(content[start:end], 7, budget)
    assert offload._error_lines(content, start, end, 7, budget) == expected


def _marked(line: str) -> bool:
    """What `_candidate_lines` looks for in a line: a keyword, a leading `E`, a folding char."""
    lowered = line.lower()
    return (
        any(word in lowered for word in offload._KEYWORDS)
        or line.startswith("E")
        or any(char in line for char in offload._FOLDING)
    )


@pytest.mark.parametrize("pattern", offload._ERROR_PATTERNS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_error_pattern_needs_a_keyword(pattern: str, data: st.DataObject) -> None:
    """The scan finds candidates by keywords only: each alternative of the pattern must hold
    one (a new pattern without one fails here, not silently in a preview)."""
    text = data.draw(st.from_regex(re.compile(pattern, re.MULTILINE)))
    for line in text.split("\n"):
        if offload._ERROR_LINE.search(line):
            assert _marked(line), (pattern, line)


@settings(max_examples=examples(150), deadline=None)
@given(
    lines=st.lists(
        st.one_of(
            st.from_regex(re.compile("|".join(offload._ERROR_PATTERNS)), fullmatch=True),
            st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=20),
        ),
        max_size=12,
    ),
    budget=st.sampled_from([60, 100_000]),
)
def test_generated_logs_scan_like_line_by_line(lines: list[str], budget: int) -> None:
    content = "\n".join(lines)
    expected = line_by_line(content, 1, budget)
    assert offload._error_lines(content, 0, len(content), 1, budget) == expected
