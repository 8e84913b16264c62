"""Every command and option of the CLI appears in the README's "Command line" section.

The commands are read from the typer app itself, so a new command or option fails this test
until the README documents it.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.commands import all_commands

README = Path(__file__).resolve().parents[2] / "README.md"


def _items() -> dict[tuple[str, ...], str]:
    """The section's list items, keyed by the command path their first code span names."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Command line\n", 1)[1].split("\n## ", 1)[0]
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
    assert not missing, "README 'Command line' lacks: " + "; ".join(missing)


def test_the_readme_names_no_command_that_does_not_exist() -> None:
    known = {command.path for command in all_commands()}
    assert set(_items()) <= known
