"""The preview's error scan jumps between candidates instead of splitting the middle into lines;
it must keep exactly the lines a line-by-line scan keeps, numbered the same."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef.selection import offload

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


@settings(max_examples=400, deadline=None)
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
