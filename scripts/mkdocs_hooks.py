"""MkDocs hooks of the documentation site (see mkdocs.yml): pages written from the code.

`reference/cli.md` holds the marker `<!-- cli-reference -->`; the build replaces it with every
command of the typer app, its usage, help and options, read from the app itself, so the page
cannot drift from the command line. Nothing here touches the network.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MARKER = "<!-- cli-reference -->"


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    return _escaped(" ".join(text.split())).replace("|", "\\|")


def _commands(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    children = getattr(command, "commands", None) or {}
    for name, child in sorted(children.items()):
        if not getattr(child, "hidden", False):
            yield from _commands(child, (*path, name))


def _section(path: tuple[str, ...], command: Any) -> str:
    name = " ".join(("contextchef", *path))
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    options = [p for p in command.params if p.param_type_name == "option"]
    pieces = [name, "[OPTIONS]"]
    for argument in arguments:
        shown = (argument.name or "").upper() + ("..." if argument.nargs == -1 else "")
        pieces.append(shown if argument.required else f"[{shown}]")
    if getattr(command, "commands", None):
        pieces.append("COMMAND [ARGS]...")
    usage = " ".join(pieces)
    help_text = (command.help or "").strip()
    body, _, example = help_text.partition("Example:")
    lines = [f"## `{name}`", "", _escaped(body.strip()), "", f"Usage: `{usage}`", ""]
    if example.strip():
        lines += ["Example:", "", "```", example.strip(), "```", ""]
    if arguments:
        lines += ["| argument | what it is |", "| --- | --- |"]
        for argument in arguments:
            optional = "" if argument.required else " (optional)"
            shown = f"`{(argument.name or '').upper()}`{optional}"
            lines.append(f"| {shown} | {_cell(argument.help or '')} |")
        lines.append("")
    if options:
        lines += ["| option | default | what it does |", "| --- | --- | --- |"]
        for option in options:
            names = ", ".join(f"`{opt}`" for opt in (*option.opts, *option.secondary_opts))
            default = option.default
            shown = "" if default in (None, False, ()) or option.is_flag else f"`{default}`"
            lines.append(f"| {names} | {shown} | {_cell(option.help or '')} |")
        lines.append("| `--help` |  | Show the command's help and exit. |")
        lines.append("")
    return "\n".join(lines)


def cli_reference() -> str:
    """Every command of `contextchef`, depth first, as Markdown."""
    import typer.main

    from contextchef.cli import app

    root = typer.main.get_command(app)
    return "\n".join(_section(path, command) for path, command in _commands(root, ()))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Write the CLI reference into the page that asks for it."""
    del page, config, files
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())
