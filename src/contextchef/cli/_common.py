"""What every `contextchef` command shares: consoles, one-line errors, JSON output, progress.

The conventions (docs/how-to/cli.md states them for users):

- exit code 0 when the command did its job, 1 for a user error (a missing file, a history in no
  known format, a bad store path…), printed as one line on stderr with a hint, no traceback;
  2 for a usage error (click's own: unknown option, missing argument);
- `--debug` (on the root command, or on a group such as `db`) shows the traceback instead;
- colours only on a terminal and never with `NO_COLOR` set;
- `--json` on every listing prints machine-readable JSON on stdout, nothing else;
- anything that can take more than a second shows progress on stderr (on a terminal only);
- `--help` shows a value's type after an option that takes one, nothing after a flag
  (`CommandGroup`).

The debug flag is read from the click context chain, so no module holds global state.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import typer
from typer.core import TyperGroup, TyperOption

from contextchef.errors import ContextChefError

if TYPE_CHECKING:  # rich and pydantic are imported when used: `contextchef --version` skips them
    from rich.console import Console

__all__ = [
    "CommandGroup",
    "UserError",
    "debugging",
    "err_console",
    "fail",
    "guarded",
    "how_to_run",
    "one_line",
    "out_console",
    "print_json",
    "progress",
    "read_text",
    "report_failure",
    "working",
]

P = ParamSpec("P")
T = TypeVar("T")


class UserError(Exception):
    """A mistake the user can fix: reported as one line (`message; hint`) and exit code 1."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message


def fail(message: str, hint: str | None = None) -> NoReturn:
    """Stop the command with a user error."""
    raise UserError(message, hint)


def _colour_off() -> bool:
    return bool(os.environ.get("NO_COLOR"))


def _console(*, stderr: bool) -> Console:
    from rich.console import Console

    # NO_COLOR turns every escape sequence off (bold too), not only the colours.
    if _colour_off():
        return Console(stderr=stderr, soft_wrap=True, highlight=False, color_system=None)
    return Console(stderr=stderr, soft_wrap=True, highlight=False)


def out_console() -> Console:
    """The console for results (stdout): styled only on a terminal, never with NO_COLOR."""
    return _console(stderr=False)


def err_console() -> Console:
    """The console for errors and progress (stderr), under the same rules."""
    return _console(stderr=True)


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) collapsed to one space."""
    return " ".join(text.split())


def _click(module: str) -> Any:
    """A module of the click typer runs on: its vendored copy (typer >= 0.22), else click."""
    try:
        return importlib.import_module(f"typer._click.{module}")
    except ModuleNotFoundError:
        return importlib.import_module(f"click.{module}")


def _without_flag_types(params: list[Any]) -> list[Any]:
    """`params`, each flag given an empty metavar so that help shows no type after it."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


class CommandGroup(TyperGroup):
    """The class of every `typer.Typer` of the CLI: flags show no `<bool>` type in `--help`.

    Typer's rich help (from 0.29) prints an option's type after it, flags included, so
    `--json <bool>` read as if it took a value. Its plain help skips flags; an explicit metavar
    is printed instead of the type, so every flag of this group and of the commands it resolves
    (the `--help` option too) gets an empty one before any help is drawn. Options that take a
    value keep their type (`<path>`) or their declared metavar (`PATH|DSN`).
    """

    # `ctx` is the click Context typer runs on: its vendored copy (0.22 and later) or click's.
    def get_params(self, ctx: Any) -> list[Any]:
        """This group's parameters, flags without a type."""
        return _without_flag_types(super().get_params(ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command `cmd_name`, its flags without a type (its help is drawn after this)."""
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _without_flag_types(command.get_params(ctx))
        return command


def debugging() -> bool:
    """Whether `--debug` was given to this command or to any group above it."""
    ctx = _click("globals").get_current_context(silent=True)
    while ctx is not None:
        if ctx.params.get("debug"):
            return True
        ctx = ctx.parent
    return False


def _shell_path(path: Path) -> str:
    """`path` for a shell in the working directory: relative when inside it, quoted."""
    try:
        relative = path.relative_to(Path.cwd())
    except ValueError:
        return shlex.quote(str(path))
    shown = str(relative)
    return shlex.quote(shown if os.sep in shown else f".{os.sep}{shown}")


def how_to_run() -> str:
    """How to run `contextchef` again from the working directory, the way it runs now.

    Commands the CLI prints for the user to type start with this, so they work exactly as
    printed: `contextchef` when the console script on the PATH is what runs; else that script's
    path; else this interpreter with `-m contextchef` (`.venv/bin/python -m contextchef`),
    preceded by `PYTHONPATH=…` when the package was found through it, as `make demo` runs it
    from `src/` without installing anything.
    """
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.stem == "contextchef":
        on_path = shutil.which("contextchef")
        if on_path is not None and Path(on_path).resolve() == script.resolve():
            return "contextchef"
        return _shell_path(script.absolute())
    python = _shell_path(Path(sys.executable)) if sys.executable else "python3"
    package_root = Path(__file__).resolve().parents[2]
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and Path(entry).resolve() == package_root:
            return f"PYTHONPATH={shlex.quote(entry)} {python} -m contextchef"
    return f"{python} -m contextchef"


def print_json(data: Any) -> None:
    """`data` as indented JSON on stdout (keys sorted; no markup, no highlighting)."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True, default=str))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, UserError):
        return str(exc)
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{where}"
    if isinstance(exc, ContextChefError):
        return str(exc)
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return f"{exc.error_count()} validation error(s): {exc.errors()[0]['msg']}"
    return (
        f"unexpected {type(exc).__name__}: {exc}; run again with `contextchef --debug …` for "
        "the traceback and report it"
    )


def report_failure(exc: BaseException) -> NoReturn:
    """Print `exc` as one line on stderr and exit 1 (or re-raise it under `--debug`)."""
    if debugging():
        raise exc
    from rich.markup import escape

    err_console().print(f"[bold red]error:[/] {escape(one_line(_describe(exc)))}", markup=True)
    raise typer.Exit(1) from None


def guarded(command: Callable[P, T]) -> Callable[P, T]:
    """Wrap a command so an expected failure becomes one line on stderr and exit code 1."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, _click("exceptions").ClickException):
            raise
        except Exception as exc:
            report_failure(exc)

    return run


def read_text(path: Path | str, what: str) -> str:
    """The text of `path` (`-` reads stdin); a missing or unreadable file is a `UserError`."""
    if str(path) == "-":
        return typer.get_text_stream("stdin").read()
    file = Path(path)
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        fail(f"{what} {file} does not exist", "check the path")
    except IsADirectoryError:
        fail(f"{what} {file} is a directory, not a file", "name a file")
    except PermissionError:
        fail(f"{what} {file} is not readable (permission denied)", "check its permissions")
    except UnicodeDecodeError as exc:
        fail(f"{what} {file} is not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        fail(f"{what} {file} cannot be read: {exc.strerror or exc}")


@contextmanager
def progress(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr (terminals only), fed by `(done, total)` callbacks."""
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    errors = err_console()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=errors,
        transient=True,
        disable=not errors.is_terminal,  # no stray blank line in logs and pipes
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@contextmanager
def working(label: str) -> Iterator[None]:
    """A spinner on stderr while something of unknown length runs (terminals only)."""
    errors = err_console()
    if not errors.is_terminal:
        yield
        return
    with errors.status(label):
        yield
