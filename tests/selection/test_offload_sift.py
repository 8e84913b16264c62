"""The preview's error scan sifts the lowercased middle in stretches before scanning it: its
previews must be byte for byte those of the scan it replaced (kept here as the oracle), on
logs long enough to cross the stretches and on hostile text (case folding, `E` lines at the
edges of a stretch, no newlines at all)."""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterator
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef import prompts
from contextchef.selection import offload
from contextchef.selection.offload import OffloadConfig, preview
from tests.fuzz import examples


def previous_candidate_lines(content: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The scan before the sift: every keyword searched over the whole lowercased middle."""
    if start >= end:
        return
    lowered = content[start:end].lower()
    if len(lowered) != end - start:
        yield from offload._pattern_candidates(content, start, end)
        return
    finders: list[tuple[str, str, int, int]] = [
        (lowered, word, start, 0) for word in offload._KEYWORDS
    ]
    finders.append((content, "\nE", 0, 1))
    if not lowered.isascii():
        finders.extend((content, char, 0, 0) for char in offload._FOLDING)
    line_end = offload._line_end(content, start, end)
    yield start, line_end
    pos = line_end + 1

    def look(index: int) -> int:
        text, needle, base, lead = finders[index]
        found = text.find(needle, pos - lead - base, end - base)
        return found + base + lead if found >= 0 else -1

    upcoming = [(at, index) for index in range(len(finders)) if (at := look(index)) >= 0]
    heapq.heapify(upcoming)
    while upcoming and pos < end:
        at, index = upcoming[0]
        if at < pos:
            again = look(index)
            if again < 0:
                heapq.heappop(upcoming)
            else:
                heapq.heapreplace(upcoming, (again, index))
            continue
        line_start = content.rfind("\n", pos, at) + 1 or pos
        line_end = offload._line_end(content, at, end)
        yield line_start, line_end
        pos = line_end + 1


VOCABULARY = prompts.vocabulary("unified")
URI = "context://vfs/vfs_0123456789abcdef.txt"

LINES = [
    "ok",
    "",
    "[0000042] compiled src/module_3.py in 12 ms: ok",
    "E   assert 1 == 2",
    "E\t\tx",
    "E  y = 2",
    "E",
    "Exit",
    "e",
    "Traceback (most recent call last)",
    "ValueError: boom",
    "  error[E0382]: moved",
    "npm ERR! code 1",
    "Build FA\u0130LED",
    "tests fa\u0131led",
    "\u017fegmentation fault",
    "core DUMPED",
    "\u212aelvin error: k",
    "ſ",
    "x\rerror: y",
    "java.lang.IllegalStateException",
    "3 failed",
    "make: *** [all] Error 2",
    "thread 'main' panicked at src/main.rs:2:5",
    "exited with code 3",
    "--- FAIL: TestX",
    "the word terror and interruptions in prose",
]


def previous_preview(content: str, config: OffloadConfig) -> str:
    """The preview before the sift (its lines counted in a pass of their own)."""
    head_end = offload._head_end(content, config.head_chars)
    tail_start = max(head_end, offload._tail_start(content, config.tail_chars))
    head, tail = content[:head_end], content[tail_start:]
    first_middle_line = content.count("\n", 0, head_end) + 1
    budget = config.error_chars
    with mock.patch.object(offload, "_candidate_lines", previous_candidate_lines):
        errors = (
            offload._error_lines(content, head_end, tail_start, first_middle_line, budget)
            if budget
            else []
        )
    notice = VOCABULARY.offload_notice(
        uri=URI,
        lines=content.count("\n") + 1,
        chars=len(content),
        shown=prompts.OFFLOAD_SHOWN[(bool(head), bool(tail))],
        error_lines=len(errors),
    )
    parts = [head.rstrip("\n"), notice]
    if errors:
        parts.append(prompts.ERROR_LINES_HEADER + "\n" + "\n".join(errors))
    parts.append(tail.strip("\n"))
    return "\n".join(part for part in parts if part)


def both(content: str, config: OffloadConfig) -> tuple[str, str]:
    return preview(content, URI, config, VOCABULARY), previous_preview(content, config)


@settings(max_examples=examples(150), deadline=None)
@given(
    lines=st.lists(
        st.one_of(
            st.sampled_from(LINES),
            st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=12),
        ),
        max_size=80,
    ),
    head=st.integers(0, 60),
    tail=st.integers(0, 60),
    budget=st.sampled_from([0, 50, 400, 100_000]),
    sizes=st.sampled_from([(64, 8), (16, 1), (300, 40)]),
)
def test_the_sifted_scan_previews_like_the_previous_scan(
    lines: list[str], head: int, tail: int, budget: int, sizes: tuple[int, int]
) -> None:
    content = "\n".join(lines)
    config = OffloadConfig(threshold=0, head_chars=head, tail_chars=tail, error_chars=budget)
    coarse, fine = sizes  # small stretches, so that lines cross them
    with mock.patch.object(offload, "_COARSE", coarse), mock.patch.object(offload, "_FINE", fine):
        ours, theirs = both(content, config)
    assert ours == theirs


def test_a_long_log_previews_like_the_previous_scan() -> None:
    rng = random.Random(24)
    lines = [
        rng.choice(LINES) if rng.random() < 0.002 else f"[{n:07d}] compiled module_{n % 97}: ok"
        for n in range(60_000)
    ]
    for content in ("\n".join(lines), "\n".join(lines).replace("\n", " ")):
        for budget in (1500, 100_000):
            ours, theirs = both(content, OffloadConfig(error_chars=budget))
            assert ours == theirs
            assert budget == 1500 or ours.count("\n") > 20 or "\n" not in content
