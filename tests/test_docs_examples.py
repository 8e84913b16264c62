"""Every Python block of the README and of `docs/` runs, in page order, one namespace per page,
and prints what the page shows after it.

Blocks declare what they need (see `tests/docs_pages.py`): `model=TARGET` gets a scripted model
on loopback that the real SDK client reaches through its usual environment variables (it asks
for `test_parser.py` and `parser.py`, which the test writes into the working directory, then
answers); `needs=postgres` gets the suite's server (missing: the page skips from there on,
naming why, and fails under CI=true); `extra=NAME` needs what that extra installs, which the
development install has. Other code blocks (shell, JSON, output) are shown, not run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import os
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextchef import ContextChef
from tests.agent_loop import REPLIES, Call
from tests.docs_pages import ROOT, Block, blocks, imported_modules, pages
from tests.loopback import loopback_server

MODEL_ANSWER = "parse() calls int() on the whole text, so '1+2' raises ValueError."
"""What the scripted model says once it has read the two files."""

KNOWN_OPTIONS = {"model", "needs", "extra"}


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


PAGES = [page for page in pages() if any(b.lang == "python" for b in blocks(page))]


def test_the_runner_sees_every_page_with_code() -> None:
    """The README and the pages of every part of the site hold Python that this module runs."""
    names = {_page_id(page) for page in PAGES}
    assert "README.md" in names
    for part in ("docs/getting-started.md", "docs/concepts/", "docs/how-to/"):
        assert any(name.startswith(part) for name in names), part


def test_every_directive_is_known_and_every_output_follows_python() -> None:
    for page in pages():
        for block in blocks(page):
            assert set(block.options) <= KNOWN_OPTIONS, block.where
            assert block.lang != "output", f"{block.where}: an output block after no Python"


@contextlib.contextmanager
def scripted_model(target: str, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A model on loopback that reads two files with parallel calls, then answers."""
    reply = REPLIES[target]
    (workdir / "test_parser.py").write_text("def test_sum():\n    assert parse('1+2') == 3\n")
    (workdir / "parser.py").write_text("def parse(text):\n    return int(text)\n")
    calls = [
        Call("call_01", "read_file", {"path": "test_parser.py"}),
        Call("call_02", "read_file", {"path": "parser.py"}),
    ]
    script = iter([reply(0, "Let me read the test and the parser.", calls)])

    def model(body: Any) -> Any:
        del body
        return next(script, None) or reply(1, MODEL_ANSWER, [])

    with loopback_server(model) as server:
        for name, value in {
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": server.url,
            "OPENAI_API_KEY": "test",
            "OPENAI_BASE_URL": server.url + "/v1",
            "GOOGLE_API_KEY": "test",
            "GOOGLE_GEMINI_BASE_URL": server.url,
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("GEMINI_API_KEY", raising=False)
        yield server


POSTGRES_SCHEMA = "contextchef_schema=agents"
"""The schema a PostgreSQL example names; the runner gives each run a throwaway one instead."""


def close_stores(namespace: dict[str, Any]) -> None:
    """Close the stores of the chefs a page left open (a PostgreSQL pool holds connections)."""
    for value in namespace.values():
        if isinstance(value, ContextChef):
            value.store.close()


def require_extra(block: Block, extra: str) -> None:
    """Skip the rest of the page (fail under CI=true) when what the block imports is missing."""
    missing = sorted(
        module
        for module in imported_modules(block.code)
        if importlib.util.find_spec(module.split(".")[0]) is None
    )
    if not missing:
        return
    message = f"{block.where} needs contextchef[{extra}] ({', '.join(missing)} missing)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def run_block(block: Block, namespace: dict[str, Any]) -> str:
    """Run one block in the page's namespace; what it printed."""
    printed = io.StringIO()
    code = compile(block.code, block.where, "exec")
    try:
        with contextlib.redirect_stdout(printed):
            exec(code, namespace)
    except Exception as exc:
        details = "".join(traceback.format_exception(exc))
        pytest.fail(f"{block.where}: the block raised\n{details}", pytrace=False)
    return printed.getvalue()


def check_output(block: Block, printed: str) -> None:
    """What the block printed is what the page shows after it (trailing spaces aside)."""
    if block.output is None:
        return
    shown = [line.rstrip() for line in block.output.strip("\n").splitlines()]
    got = [line.rstrip() for line in printed.strip("\n").splitlines()]
    assert got == shown, f"{block.where}: printed {printed!r}, the page shows {block.output!r}"


def test_a_page_whose_shown_output_is_not_printed_fails() -> None:
    page = "```python\nprint(6 * 7)\n```\n\n```output\n42\n```\n"
    (block,) = blocks(ROOT / "docs" / "made-up.md", page)
    assert block.output == "42\n"
    check_output(block, run_block(block, {}))
    wrong = dataclasses.replace(block, code="print(6 * 9)\n")
    with pytest.raises(AssertionError, match="printed '54"):
        check_output(wrong, run_block(wrong, {}))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_the_page_runs_as_written(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    with contextlib.ExitStack() as page_stack:
        page_stack.callback(close_stores, namespace)
        for block in blocks(page):
            if block.lang != "python":
                continue
            if block.options.get("needs") == "postgres":
                from tests.contract import pg

                schema = page_stack.enter_context(
                    contextlib.contextmanager(pg.throwaway_schema)("contextchef_docs")
                )  # skips (fails under CI=true) without a server
                monkeypatch.setenv("CONTEXTCHEF_DSN", pg.DSN.partition("?")[0])  # pages add "?..."
                assert POSTGRES_SCHEMA in block.code, block.where
                block = dataclasses.replace(
                    block, code=block.code.replace(POSTGRES_SCHEMA, f"contextchef_schema={schema}")
                )
            extra = block.options.get("extra")
            if extra is not None:
                require_extra(block, extra)
            target = block.options.get("model")
            with contextlib.ExitStack() as stack:
                server = None
                if target is not None:
                    server = stack.enter_context(scripted_model(target, tmp_path, monkeypatch))
                printed = run_block(block, namespace)
                if server is not None:
                    assert len(server.requests) >= 2, f"{block.where}: the loop made one call"
            check_output(block, printed)
