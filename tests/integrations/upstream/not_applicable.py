"""The upstream tests marked not applicable, read from NOT_APPLICABLE.md (the one list, with a
reason for each) and skipped with that reason: a test is skipped only when the list names it.

The list has one `## <section>` per vendored suite; each entry is a line
``- `file.py::test_name`: reason`` (a parametrized test is named without its parameters).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

LIST = Path(__file__).with_name("NOT_APPLICABLE.md")
_ENTRY = re.compile(r"^- `(?P<file>[\w./]+)::(?P<test>\w+)`: (?P<reason>.+)$")


def listed(section: str) -> dict[tuple[str, str], str]:
    """`(file, test) -> reason` for the section named `section`."""
    entries: dict[tuple[str, str], str] = {}
    current = None
    for line in LIST.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
        elif current == section and (match := _ENTRY.match(line)):
            entries[match["file"], match["test"]] = match["reason"]
    return entries


def skip_listed(items: list[pytest.Item], section: str, directory: Path) -> None:
    """Mark every collected test of `directory` that the section lists as skipped."""
    entries = listed(section)
    for item in items:
        path = Path(str(item.path))
        if path.parent != directory:
            continue
        name = getattr(item, "originalname", None) or item.name
        reason = entries.get((path.name, name))
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"not applicable: {reason}"))
