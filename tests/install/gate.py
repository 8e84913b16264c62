"""The user-install gate: the package as a user installs it, not as the test suite runs it.

`make test` runs `python -m tests.install.gate`, which

1. builds the sdist and, from it, the wheel (`python -m build`, in an isolated build
   environment, as pip would);
2. installs the wheel into a virtual environment that holds its runtime dependencies only, and
   there imports every module of the package (a module that needs an extra must raise
   `MissingDependencyError` naming an extra the wheel declares), checks that `import contextchef`
   loads no CLI library and no provider SDK, runs `contextchef --version`,
   `contextchef demo --quiet --store :memory:` and the quick start of docs/getting-started.md;
3. with `contextchef[anthropic]`, runs the README's first code block (the agent loop) against a
   scripted model on loopback;
4. for each integration extra, installs `contextchef[extra]` into an environment of its own,
   imports the modules that needed it and runs the extra's documented examples (the blocks of
   docs/ marked `<!-- docs-test: extra=NAME -->` that need no server and no model).

It installs with uv (a development dependency) when it is there, else with pip: both install what
the wheel's metadata declares, and uv does it several times faster.

Environments are cached under `.venv/gate/`, keyed by the Python version and the wheel's declared
requirements: a dependency added, removed or changed in the metadata gets a fresh environment, so
the cache can never supply a package the wheel does not declare. Each run reinstalls the wheel
itself. `tests/install/test_gate.py` proves the gate fails on a wheel whose metadata lost a
dependency its code imports.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".venv" / "gate"
EXTRAS = ("fast", "postgres", "mcp", "otel", "langgraph", "openai-agents", "pydantic-ai")
"""The extras the gate installs, each in an environment of its own."""

PROBES = {
    "postgres": "from contextchef.store.backends.postgres._common import require_psycopg\n"
    "require_psycopg()",
    "fast": "from contextchef.adapters.json_args import ORJSON\nassert ORJSON, 'orjson unused'",
}
"""Code that works with the extra installed, for extras no module needs at import time. Without
the extra, each must raise `MissingDependencyError` naming it, except `fast`, whose absence the
library works around (the standard-library decoder: checked by the base install's demo)."""

RUN_PROBE = r"""
import sys
from contextchef.errors import MissingDependencyError
try:
    exec(sys.argv[1])
except MissingDependencyError as exc:
    print("extra:" + exc.extra)
except BaseException as exc:
    print(f"error: {type(exc).__name__}: {exc}")
else:
    print("ok")
"""

FORBIDDEN_ON_IMPORT = ("typer", "click", "rich", "openai", "anthropic", "google.genai", "psycopg")
"""Top-level modules `import contextchef` must not load: the CLI's libraries and the SDKs."""

CHECK_MODULES = r"""
import importlib, json, sys
from pathlib import Path
import contextchef
from contextchef.errors import MissingDependencyError
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"typer", "click", "rich",
    "openai", "anthropic", "psycopg"} or m.startswith("google.genai"))
root = Path(contextchef.__file__).parent
names = sorted(
    ".".join(("contextchef", *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
    for p in root.rglob("*.py") if p.name != "__main__.py"
)
outcome = {}
for name in names:
    try:
        importlib.import_module(name)
        outcome[name] = "ok"
    except MissingDependencyError as exc:
        outcome[name] = "extra:" + exc.extra
    except BaseException as exc:
        outcome[name] = f"error: {type(exc).__name__}: {exc}"
print(json.dumps({"loaded_by_import": loaded, "modules": outcome}))
"""


class GateError(Exception):
    """A check of the gate failed; the message says which and what it printed."""


@dataclass
class Report:
    """What the gate found: each failed check's message (empty when the wheel passes)."""

    failures: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def step(self, text: str) -> None:
        print(f"==> [{time.monotonic() - self.started:5.1f} s] {text}", flush=True)

    def fail(self, text: str) -> None:
        self.failures.append(text)
        print(f"FAILED: {text}", flush=True)


def run(
    command: Sequence[str | Path],
    *,
    cwd: Path | None = None,
    timeout: float = 600,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `command`; `GateError` with its output when it fails."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environment["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    environment.update(env or {})
    result = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode != 0:
        shown = " ".join(str(part) for part in command)
        raise GateError(f"`{shown}` exited {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


def uv_binary() -> str | None:
    """The `uv` the development install brings (a dev dependency), or None without it."""
    try:
        from uv import find_uv_bin
    except ImportError:
        return None
    try:
        return str(find_uv_bin())
    except FileNotFoundError:
        return None


UV = uv_binary()
"""uv installs what pip would from the same metadata, in a fraction of pip's time (it neither
compiles bytecode nor resolves one package at a time); without it the gate uses pip."""


def build(outdir: Path) -> Path:
    """Build the sdist, then the wheel from it; the wheel's path."""
    shutil.rmtree(outdir, ignore_errors=True)
    installer: list[str | Path] = []
    env = None
    if UV is not None:
        installer = ["--installer", "uv"]
        env = {"PATH": f"{Path(UV).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run([sys.executable, "-m", "build", *installer, "--outdir", outdir, ROOT], cwd=ROOT, env=env)
    (wheel,) = outdir.glob("*.whl")
    if not list(outdir.glob("*.tar.gz")):
        raise GateError(f"no sdist in {outdir}")
    return wheel


def metadata(wheel: Path) -> list[str]:
    """The wheel's METADATA lines."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return archive.read(name).decode().splitlines()


def requirements(wheel: Path, extra: str | None) -> list[str]:
    """The requirements an install of `wheel` (with `extra`) takes, as the metadata spells them."""
    chosen = []
    for line in metadata(wheel):
        if not line.startswith("Requires-Dist:"):
            continue
        requirement = line.split(":", 1)[1].strip()
        marker = re.search(r"""extra\s*==\s*["']([^"']+)["']""", requirement)
        if marker is None or marker.group(1) == extra:
            chosen.append(requirement)
    return sorted(chosen)


def declared_extras(wheel: Path) -> set[str]:
    return {
        line.split(":", 1)[1].strip()
        for line in metadata(wheel)
        if line.startswith("Provides-Extra:")
    }


def environment(wheel: Path, extra: str | None, cache: Path) -> Path:
    """A virtual environment holding `wheel` (with `extra`) and what it declares, nothing more;
    its Python. Reused when one with the same declared requirements exists."""
    key = json.dumps([sys.version, requirements(wheel, extra)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    home = cache / f"{extra or 'base'}-{digest}"
    python = home / "bin" / "python"
    front: list[str | Path] = [UV, "pip"] if UV else [sys.executable, "-m", "pip"]
    install = [*front, "install", "--quiet", "--python", python]
    target = f"{wheel}[{extra}]" if extra else str(wheel)
    if (home / ".complete").exists():
        run([*install, "--no-deps", "--reinstall" if UV else "--force-reinstall", wheel])
    else:
        shutil.rmtree(home, ignore_errors=True)
        home.parent.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "venv", "--without-pip", home])
        run([*install, target])
        (home / ".complete").write_text(key)
    os.utime(home / ".complete")
    run([*front, "check", "--python", python])
    return python


def module_outcomes(python: Path, workdir: Path) -> dict[str, object]:
    result = run([python, "-c", CHECK_MODULES], cwd=workdir)
    outcome: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return outcome


def probe(python: Path, extra: str, workdir: Path) -> str:
    """What `PROBES[extra]` gives in the environment of `python`: ok, extra:X or error: ..."""
    return run([python, "-c", RUN_PROBE, PROBES[extra]], cwd=workdir).stdout.strip()


def readme_first_block() -> str:
    """The README's first code block: the agent loop."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```(\w*)\n(.*?)```", text, re.S)
    if match is None or match.group(1) != "python":
        raise GateError("the README's first code block is not Python")
    return match.group(2)


def check_agent_loop(wheel: Path, report: Report, cache: Path, workdir: Path) -> None:
    """The README's agent loop, as written, with `contextchef[anthropic]` installed: the real
    SDK talks to a scripted model on loopback; the loop must print the model's last answer."""
    from tests.agent_loop import Call, anthropic_reply
    from tests.loopback import loopback_server

    report.step("contextchef[anthropic]: installing, then the README's agent loop")
    python = environment(wheel, "anthropic", cache)
    (workdir / "test_parser.py").write_text("def test_sum():\n    assert parse('1+2') == 3\n")
    answer = "parse() calls int() on the whole text."
    first = anthropic_reply(
        0, "Reading the test.", [Call("toolu_01", "read_file", {"path": "test_parser.py"})]
    )
    replies = iter([first, anthropic_reply(1, answer, [])])
    script = workdir / "agent_loop.py"
    script.write_text(readme_first_block(), encoding="utf-8")
    with loopback_server(lambda body: next(replies)) as server:
        keys = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": server.url}
        try:
            printed = run([python, script], cwd=workdir, env=keys).stdout
        except GateError as exc:
            report.fail(str(exc))
            return
    if printed.strip() != answer or len(server.requests) != 2:
        report.fail(f"the agent loop printed {printed!r} after {len(server.requests)} calls")


def readme_quick_start() -> str:
    """The quick start of docs/getting-started.md."""
    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    body = text.split("## Quick start\n", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", body, re.S)
    return code


def check_base(wheel: Path, report: Report, cache: Path, workdir: Path) -> dict[str, str]:
    """The runtime-only install: every module, the commands, the quick start. Returns the
    modules that named an extra, with the extra."""
    report.step(f"installing {wheel.name} with its runtime dependencies only")
    python = environment(wheel, None, cache)
    report.step("importing every module of the installed package")
    outcome = module_outcomes(python, workdir)
    loaded = outcome["loaded_by_import"]
    if loaded:
        report.fail(
            f"`import contextchef` loads {loaded}: the CLI's libraries and SDKs load lazily"
        )
    modules = outcome["modules"]
    assert isinstance(modules, dict)
    extras = declared_extras(wheel)
    needs: dict[str, str] = {}
    for name, result in modules.items():
        if result == "ok":
            continue
        if result.startswith("extra:") and result[6:] in extras:
            needs[name] = result[6:]
        else:
            report.fail(f"import {name}: {result}")
    report.step(f"{len(modules) - len(needs)} modules import; {len(needs)} name their extra")
    for extra in PROBES:
        found = probe(python, extra, workdir)
        expected = "error: AssertionError: orjson unused" if extra == "fast" else f"extra:{extra}"
        if found != expected:
            report.fail(f"without contextchef[{extra}], its probe gave {found!r}, not {expected!r}")
    commands = {
        "contextchef --version": [python.parent / "contextchef", "--version"],
        "contextchef demo --quiet --store :memory:": [
            python.parent / "contextchef",
            "demo",
            "--quiet",
            "--store",
            ":memory:",
        ],
    }
    for shown, command in commands.items():
        report.step(shown)
        try:
            result = run(command, cwd=workdir)
        except GateError as exc:
            report.fail(str(exc))
            continue
        if shown.endswith("--version") and not result.stdout.startswith("contextchef "):
            report.fail(f"{shown} printed {result.stdout!r}")
    report.step("the quick start of docs/getting-started.md")
    script = workdir / "quick_start.py"
    script.write_text(readme_quick_start(), encoding="utf-8")
    try:
        run([python, script], cwd=workdir)
    except GateError as exc:
        report.fail(str(exc))
    return needs


def check_extra(
    wheel: Path, extra: str, modules: list[str], report: Report, cache: Path, workdir: Path
) -> None:
    what = f"importing {len(modules)} modules" if modules else "running its probe"
    report.step(f"contextchef[{extra}]: installing, then {what}")
    python = environment(wheel, extra, cache)
    outcome = module_outcomes(python, workdir)["modules"]
    assert isinstance(outcome, dict)
    for name in modules:
        if outcome.get(name) != "ok":
            report.fail(f"with contextchef[{extra}], import {name}: {outcome.get(name)}")
    if extra in PROBES and (found := probe(python, extra, workdir)) != "ok":
        report.fail(f"with contextchef[{extra}], its probe gave {found!r}")
    for where, code in documented_examples(extra):
        report.step(f"contextchef[{extra}]: the example at {where}")
        script = workdir / f"example_{extra.replace('-', '_')}.py"
        script.write_text(code, encoding="utf-8")
        try:
            run([python, script], cwd=workdir)
        except GateError as exc:
            report.fail(f"with contextchef[{extra}] alone, the example at {where}: {exc}")


def documented_examples(extra: str) -> list[tuple[str, str]]:
    """(where, code) of the documented examples of `extra` that need no server and no model:
    what a user runs right after `pip install 'contextchef[extra]'`."""
    from tests.docs_pages import blocks, pages

    return [
        (block.where, block.code)
        for page in pages()
        for block in blocks(page)
        if block.options.get("extra") == extra and not {"needs", "model"} & set(block.options)
    ]


def prune(cache: Path, since: float) -> None:
    """Remove the environments no check used since `since` (a requirement changed)."""
    for home in cache.glob("*-*"):
        marker = home / ".complete"
        if not marker.exists() or marker.stat().st_mtime < since:
            shutil.rmtree(home, ignore_errors=True)


def gate(
    wheel: Path,
    *,
    extras: Sequence[str] = EXTRAS,
    cache: Path = CACHE,
    report: Report | None = None,
    agent_loop: bool = True,
) -> Report:
    """Every check on `wheel`; the report lists what failed."""
    report = report or Report()
    with tempfile.TemporaryDirectory(prefix="contextchef-gate-") as scratch:
        workdir = Path(scratch)
        try:
            needs = check_base(wheel, report, cache, workdir)
            if agent_loop:
                check_agent_loop(wheel, report, cache, workdir)
            for extra in extras:
                modules = sorted(name for name, wanted in needs.items() if wanted == extra)
                if not modules and extra not in PROBES:
                    report.fail(f"no module names the extra {extra!r}")
                    continue
                check_extra(wheel, extra, modules, report, cache, workdir)
        except GateError as exc:
            report.fail(str(exc))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description="The user-install gate (see the module doc).")
    parser.add_argument("--extras", default=",".join(EXTRAS), help="comma-separated extras")
    args = parser.parse_args()
    since = time.time() - 1
    report = Report()
    report.step("user-install gate: building the sdist, then the wheel from it (python -m build)")
    wheel = build(ROOT / ".venv" / "gate-dist")
    gate(wheel, extras=[e for e in args.extras.split(",") if e], report=report)
    prune(CACHE, since)
    took = time.monotonic() - report.started
    if report.failures:
        print(f"user-install gate: {len(report.failures)} check(s) failed in {took:.0f} s")
        raise SystemExit(1)
    print(f"==> user-install gate passed in {took:.0f} s")


if __name__ == "__main__":
    main()
