"""Every command and option of the CLI appears in the command-line guide (docs/how-to/cli.md).

The commands are read from the typer app itself, so a new command or option fails this test
until the guide documents it (the reference page, docs/reference/cli.md, is written from the
app when the site is built).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.commands import all_commands

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "cli.md"


def _items() -> dict[tuple[str, ...], str]:
    """The section's list items, keyed by the command path their first code span names."""
    section = GUIDE.read_text(encoding="utf-8")
    items: dict[tuple[str, ...], str] = {}
    for item in re.split(r"\n(?=- `contextchef)", section):
        head = re.match(r"- `contextchef((?: [a-z][a-z-]*)*)", item)
        if head:
            items[tuple(head.group(1).split())] = item
    return items


def test_every_command_and_option_is_in_the_readme() -> None:
    items = _items()
    missing: list[str] = []
    for command in all_commands():
        name = " ".join(("contextchef", *command.path))
        item = items.get(command.path)
        if item is None:
            missing.append(f"`{name}`: no list item")
            continue
        missing.extend(
            f"`{name}`: option {option}"
            for option in command.options
            if not re.search(rf"{re.escape(option)}\b", item)
        )
        if "Example:" not in item:
            missing.append(f"`{name}`: no example")
    assert not missing, "docs/how-to/cli.md lacks: " + "; ".join(missing)


def test_the_readme_names_no_command_that_does_not_exist() -> None:
    known = {command.path for command in all_commands()}
    assert set(_items()) <= known
