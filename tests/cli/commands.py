"""The typer app as data: every command path with its options, so tests catch new commands."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import typer.main

from contextchef.cli import app


class CommandInfo(NamedTuple):
    """One command (or group) of the CLI: its path after `contextchef`, long options, help.

    `option_help` maps each long option (`--help` too) to its help text; `flags` are the long
    options that take no value.
    """

    path: tuple[str, ...]
    options: tuple[str, ...]
    help: str
    is_group: bool
    option_help: dict[str, str]
    flags: frozenset[str]


def _walk(command: Any, path: tuple[str, ...]) -> Iterator[CommandInfo]:
    options = tuple(
        opt
        for param in command.params
        if param.param_type_name == "option"
        for opt in param.opts
        if opt.startswith("--") and opt != "--help"
    )
    longs = [
        (opt, param)
        for param in command.params
        if param.param_type_name == "option"
        for opt in param.opts
        if opt.startswith("--")
    ]
    option_help = {opt: param.help or "" for opt, param in longs}
    option_help["--help"] = "Show this message and exit."
    flags = frozenset({"--help"} | {opt for opt, param in longs if param.is_flag})
    children = getattr(command, "commands", None)
    yield CommandInfo(path, options, command.help or "", children is not None, option_help, flags)
    for name, child in sorted((children or {}).items()):
        if not getattr(child, "hidden", False):
            yield from _walk(child, (*path, name))


def all_commands() -> list[CommandInfo]:
    """The root, every group and every command, depth first."""
    return list(_walk(typer.main.get_command(app), ()))
