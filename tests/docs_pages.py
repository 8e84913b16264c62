"""The documentation as data: the pages of `docs/` and the README, their code blocks in page
order, and what each block declares it needs.

A block may be preceded by a directive, an HTML comment the site does not show:

    <!-- docs-test: needs=postgres -->       the PostgreSQL server of the suite
    <!-- docs-test: extra=otel -->           an example of that extra: it imports only what
                                             `contextchef[otel]` installs (tests/test_extras.py)
    <!-- docs-test: model=anthropic -->      a scripted model on loopback, reached through the
                                             SDK's usual environment variables

A fenced ```` ```output ```` block right after a Python block is what that block prints.
Tests that check more than "it runs" read single blocks with `python_blocks(page, section)`.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

_FENCE = re.compile(
    r"(?:<!-- docs-test: (?P<directive>[^>]*?) -->\n)?"
    r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$",
    re.S | re.M,
)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int
    lang: str
    code: str
    options: dict[str, str] = field(default_factory=dict)
    output: str | None = None
    """The ```output block that follows it, when there is one."""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """The README, then every page of the site, in a stable order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def page_path(page: str) -> Path:
    """`"README.md"` or a path under docs/, such as `"how-to/mcp.md"`."""
    return README if page == "README.md" else DOCS / page


def _dedent(body: str, indent: str) -> str:
    return "".join(
        line[len(indent) :] if line.startswith(indent) else line
        for line in body.splitlines(keepends=True)
    )


def blocks(page: Path, text: str | None = None) -> list[Block]:
    """Every fenced block of `page` in order; output blocks are attached to the block before."""
    text = page.read_text(encoding="utf-8") if text is None else text
    found: list[Block] = []
    previous_end = 0
    for match in _FENCE.finditer(text):
        indent = match.group("indent")
        code = _dedent(match.group("body"), indent)
        lang = match.group("lang")
        between = text[previous_end : match.start()]
        previous_end = match.end()
        if lang == "output" and found and found[-1].lang == "python" and not between.strip():
            last = found.pop()
            found.append(
                Block(last.page, last.line, last.lang, last.code, last.options, output=code)
            )
            continue
        options = dict(
            item.split("=", 1) for item in (match.group("directive") or "").split() if "=" in item
        )
        line = text.count("\n", 0, match.start("lang")) + 1
        found.append(Block(page, line, lang, code, options))
    return found


def section_text(page: str, section: str | None = None) -> str:
    """A page's text, or the part under its `## section` heading (up to the next `## `)."""
    text = page_path(page).read_text(encoding="utf-8")
    if section is None:
        return text
    head = f"## {section}\n"
    assert head in text, f"{page} has no section {section!r}"
    return text.split(head, 1)[1].split("\n## ", 1)[0]


def python_blocks(page: str, section: str | None = None) -> list[str]:
    """The Python blocks of a page (or of one of its sections), as written."""
    return [
        b.code for b in blocks(page_path(page), section_text(page, section)) if b.lang == "python"
    ]


def imported_modules(code: str) -> set[str]:
    """The absolute imports of a block, third-party only: `import a.b` as `a.b`, `from a import
    b` as `a.b` (a module or a name in one)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {
        name
        for name in found
        if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "contextchef"
    }
