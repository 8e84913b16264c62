"""The page for users of @context-chef/core maps every method of its chef, every constructor
option, event, pipeline slot and value export to ours (or says why it is not needed).

The reference's names are kept in tests/fixtures/ts_reference_api.json (names only, read from
its `dist/index.d.mts`); where the reference package is installed, the list is checked against
it, so a stale list fails too.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.docs_pages import DOCS, ROOT

PAGE = DOCS / "coming-from-typescript.md"
NAMES = json.loads((ROOT / "tests" / "fixtures" / "ts_reference_api.json").read_text())
GROUPS = ("methods", "options", "events", "slots", "exports")
REFERENCE = Path(
    os.environ.get("CONTEXTCHEF_TS_REF", "/tmp/ctxref/node_modules/@context-chef/core")
)


def left_column() -> str:
    """The first cell of every table row of the page: where the reference's names stand."""
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    return "\n".join(row.split(" | ")[0] for row in rows)


@pytest.mark.parametrize("group", GROUPS)
def test_every_name_of_the_reference_is_mapped(group: str) -> None:
    cells = left_column()
    missing = [
        name
        for name in NAMES[group]
        if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", cells)
    ]
    assert NAMES[group] and not missing, f"{PAGE.name} does not map {group}: {missing}"


def test_the_list_is_the_installed_reference() -> None:
    declarations = REFERENCE / "dist" / "index.d.mts"
    if not declarations.is_file():
        pytest.skip(f"the reference is not installed at {REFERENCE} (CONTEXTCHEF_TS_REF)")
    text = declarations.read_text(encoding="utf-8")

    def body(opening: str) -> str:
        start = text.index(opening)
        return text[start : text.index("\n}\n", start)]

    chef = body("declare class ContextChef {")
    assert NAMES["methods"] == sorted(
        {m for m in re.findall(r"^  ([a-zA-Z]\w*)[<(]", chef, re.M) if m != "constructor"}
    )
    assert NAMES["events"] == re.findall(
        r"^  '?([a-z:-]+)'?: \{", body("interface ChefEvents"), re.M
    )
    assert NAMES["slots"] == re.findall(r"^  '([a-z-]+)'", body("interface SlotHandlers"), re.M)
    assert NAMES["options"] == re.findall(r"^  (\w+)\??:", body("interface ChefConfig {"), re.M)
    exports = text.rstrip().splitlines()[-2]
    names = re.findall(r"(type )?(\w+)(?:,| \})", exports[exports.index("{") + 1 :])
    assert NAMES["exports"] == sorted(name for kind, name in names if not kind)
