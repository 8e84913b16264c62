"""What the documentation site is built from stays true to the code: the CLI reference page is
written from the typer app, the README's picture is what its script draws, and the performance
table sits between the markers the compile benchmark rewrites. (`make docs` builds the site with
--strict; tests/test_docs_examples.py runs its code.)"""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType

from tests.cli.commands import all_commands
from tests.docs_pages import DOCS, ROOT


def load_script(name: str) -> ModuleType:
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_script_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_names_every_command_and_option() -> None:
    hooks = load_script("mkdocs_hooks")
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert hooks.MARKER in page
    written = hooks.on_page_markdown(page, None, None, None)
    sections = re.split(r"\n(?=## `contextchef)", written)
    by_command = {
        re.match(r"## `([^`]+)`", section).group(1): section  # type: ignore[union-attr]
        for section in sections
        if section.startswith("## `")
    }
    for command in all_commands():
        name = " ".join(("contextchef", *command.path))
        assert name in by_command, name
        for option in command.options:
            assert f"`{option}`" in by_command[name], f"{name} {option}"


def test_the_readme_picture_is_what_its_script_draws() -> None:
    picture = load_script("window_report_picture")
    committed = picture.PICTURE.read_text(encoding="utf-8")
    assert committed.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert picture.comparable(picture.picture()) == picture.comparable(committed)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/assets/window-report.svg)" in readme


def test_the_performance_page_holds_the_benchmark_table_between_its_markers() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        report = importlib.import_module("compile_report")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    page = (DOCS / "performance.md").read_text(encoding="utf-8")
    table = page.split(report.TABLE_BEGIN, 1)[1].split(report.TABLE_END, 1)[0]
    assert table.lstrip().startswith("Measured ") and "by `benchmarks/compile.py`" in table
    source = (ROOT / "benchmarks" / "compile.py").read_text(encoding="utf-8")
    assert 'PERFORMANCE_PAGE = HERE.parent / "docs" / "performance.md"' in source


def test_the_api_reference_renders_every_public_module() -> None:
    """Each public module or package directly under `contextchef` has a `::: ` directive (or a
    page of its own), so its docstrings are on the site."""
    source = ROOT / "src" / "contextchef"
    public = {
        path.stem if path.is_file() else path.name
        for path in source.iterdir()
        if not path.name.startswith(("_", "."))
        and (path.suffix == ".py" or path.is_dir())
        and path.name not in ("py.typed", "cli")
    }
    rendered = {
        match.split(".")[1]
        for page in (DOCS / "reference").glob("*.md")
        for match in re.findall(r"^::: (contextchef\.\w+)", page.read_text(), re.M)
    }
    assert public and public <= rendered, sorted(public - rendered)
