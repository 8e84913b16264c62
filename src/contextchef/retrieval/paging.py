"""Lines, numbered views and pages: how long text reaches the model without being cut silently.

An entry is split into lines on `\\n` only (a final newline ends the last line rather than
starting an empty one), so editing by line numbers and joining back is byte-exact. A view shows
at most `MAX_VIEW_LINES` rows and `MAX_VIEW_CHARS` characters; when more remains, the page ends
with a footer giving the `view_range` of the next page. A single line longer than the page's
character budget is shown cut, with a marker saying so. Any page that ends before the last row,
whatever range was asked for, ends with the range of the next one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from contextchef import prompts
from contextchef.retrieval.arguments import ToolInputError

__all__ = [
    "MAX_VIEW_CHARS",
    "MAX_VIEW_LINES",
    "Page",
    "join_lines",
    "numbered",
    "paginate",
    "split_lines",
]

MAX_VIEW_LINES = 200
"""Rows (lines of an entry, entries of a listing) one view shows at most."""

MAX_VIEW_CHARS = 20_000
"""Characters of rows one view shows at most."""


def split_lines(text: str) -> tuple[list[str], bool]:
    """The lines of `text` and whether it ended with a newline; `""` has no lines."""
    if not text:
        return [], False
    if text.endswith("\n"):
        return text[:-1].split("\n"), True
    return text.split("\n"), False


def join_lines(lines: Sequence[str], trailing_newline: bool) -> str:
    """The inverse of `split_lines`."""
    text = "\n".join(lines)
    return text + "\n" if trailing_newline and lines else text


def numbered(number: int, line: str) -> str:
    """A view row: the 1-based number right-aligned in six columns, a tab, the line."""
    return f"{number:>6}\t{line}"


@dataclass(frozen=True, slots=True)
class Page:
    """Rows `first`…`last` (1-based) of `total`, rendered, plus the cut and next-page notes."""

    first: int
    last: int
    total: int
    rows: list[str]
    notes: list[str]

    @property
    def whole(self) -> bool:
        return self.first == 1 and self.last == self.total and not self.notes


def paginate(
    items: Sequence[str],
    requested: tuple[int, int] | None,
    render: Callable[[int, str], str],
    *,
    uri: str,
    unit: str,
    max_rows: int = MAX_VIEW_LINES,
    max_chars: int = MAX_VIEW_CHARS,
) -> Page:
    """The page of `items` that `requested` (a `view_range`) asks for, within the limits.

    `render(number, item)` makes one row. Raises `ToolInputError` when the range starts past the
    end. `items` must not be empty.
    """
    total = len(items)
    first, last = requested if requested is not None else (1, -1)
    if first > total:
        raise ToolInputError(prompts.view_range_past_end(first, uri, total, unit))
    last = total if last == -1 or last > total else last
    rows: list[str] = []
    notes: list[str] = []
    used = 0
    number = first
    while number <= last and len(rows) < max_rows:
        row = render(number, items[number - 1])
        if used + len(row) > max_chars:
            if rows:
                break
            budget = max(max_chars - (len(row) - len(items[number - 1])), 0)
            rows.append(render(number, items[number - 1][:budget]))
            notes.append(prompts.long_line_cut(number, budget, len(items[number - 1])))
            number += 1
            break
        rows.append(row)
        used += len(row) + 1
        number += 1
    shown_last = number - 1
    if shown_last < total:  # whatever was asked for, say how to reach the rest
        next_last = min(total, shown_last + max_rows)
        notes.append(prompts.page_footer(unit, first, shown_last, total, next_last))
    return Page(first, shown_last, total, rows, notes)
