"""`contextchef compile FILE` and `contextchef inspect FILE`: one compile from files.

Both read a history file in any provider's native format (see `history_file`), with an
optional state, system prompt and tool list. `compile` prints (or writes) the payload;
`inspect` shows what is inside it (see `inspection`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from contextchef.cli._common import (
    err_console,
    fail,
    guarded,
    out_console,
    print_json,
    working,
)
from contextchef.cli.compiling import Compiled, CompileInputs, compile_inputs, payload_text
from contextchef.cli.history_file import FORMATS, load_json
from contextchef.cli.sdk_check import PayloadRejected, validate_payload

__all__ = ["compile_command", "inspect_command"]

HistoryArg = Annotated[
    Path,
    typer.Argument(
        help="A conversation as JSON, in any of the four providers' native formats.",
        show_default=False,
    ),
]
FromOption = Annotated[
    str | None,
    typer.Option("--from", help=f"The history's format ({', '.join(FORMATS)}); default: detect."),
]
TargetOption = Annotated[
    str, typer.Option("--target", "-t", help="The provider format to compile to.")
]
StateOption = Annotated[
    Path | None,
    typer.Option("--state", help="The live task state: a JSON object, rendered as XML."),
]
SystemOption = Annotated[
    str | None,
    typer.Option(
        "--system",
        metavar="PATH|-",
        help="A text file holding the system prompt (`-`: stdin); replaces the file's.",
    ),
]
MemoryOption = Annotated[
    bool,
    typer.Option(
        "--memory",
        help="Show the project's memory, read from the store (nothing is written to it).",
    ),
]
StoreOption = Annotated[
    Path | None,
    typer.Option("--store", help="With --memory: a database file or store directory."),
]
ProjectOption = Annotated[
    str | None,
    typer.Option("--project", help="With --memory: the project (a directory or an identity)."),
]
ToolsOption = Annotated[
    Path | None,
    typer.Option("--tools", help="A JSON list of tools: {name, description, parameters}."),
]


def _check_target(target: str) -> None:
    from contextchef.adapters import adapter_registry

    if target not in adapter_registry.names():
        known = ", ".join(adapter_registry.names())
        raise typer.BadParameter(
            f"unknown target {target!r}; one of {known}", param_hint="--target"
        )


def _check_from(fmt: str | None) -> None:
    if fmt is not None and fmt not in FORMATS:
        raise typer.BadParameter(
            f"unknown history format {fmt!r}; one of {', '.join(FORMATS)}", param_hint="--from"
        )


def _compiled(inputs: CompileInputs) -> Compiled:
    _check_target(inputs.target)
    _check_from(inputs.fmt)
    if not inputs.memory and (inputs.store is not None or inputs.project is not None):
        raise typer.BadParameter("--store and --project only apply with --memory")
    with working(f"compiling {inputs.history}"):
        return compile_inputs(inputs)


@guarded
def compile_command(
    history: HistoryArg,
    fmt: FromOption = None,
    target: TargetOption = "openai",
    state: StateOption = None,
    system: SystemOption = None,
    tools: ToolsOption = None,
    memory: MemoryOption = False,
    store: StoreOption = None,
    project: ProjectOption = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the payload to this file instead of stdout."),
    ] = None,
    validate: Annotated[
        bool,
        typer.Option(
            "--validate",
            help="Check the payload against the official SDK's request types (needs its extra).",
        ),
    ] = False,
) -> None:
    """Compile a conversation file to one provider's payload and print it as JSON.

    Example: contextchef compile chat.json --target anthropic --state state.json -o payload.json
    """
    compiled = _compiled(
        CompileInputs(history, target, fmt, state, system, tools, memory, store, project)
    )
    payload = compiled.payload
    if validate:
        try:
            with working(f"checking against the {target} SDK types"):
                checked = validate_payload(target, payload)
        except PayloadRejected as exc:
            fail(
                f"the {target} payload does not match the SDK request types: {exc}",
                "report it with the history file: contextchef should never produce this",
            )
        err_console().print(f"valid: matches {checked}", markup=False)
    text = payload_text(payload)
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}", "check the directory exists")
    tokens = payload.meta.tokens.total
    err_console().print(
        f"wrote {out} ({len(text.encode()):,} bytes, {tokens:,} tokens estimated, "
        f"{compiled.loaded.format} history → {target})",
        markup=False,
    )


@guarded
def inspect_command(
    history: HistoryArg,
    fmt: FromOption = None,
    target: TargetOption = "openai",
    state: StateOption = None,
    system: SystemOption = None,
    tools: ToolsOption = None,
    memory: MemoryOption = False,
    store: StoreOption = None,
    project: ProjectOption = None,
    diff: Annotated[
        Path | None,
        typer.Option(
            "--diff",
            help="A payload from an earlier compile (`compile -o`): show which bytes changed.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the inspection as JSON.")] = False,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Also write the compile's window report (one HTML file)."),
    ] = None,
    window: Annotated[
        int | None,
        typer.Option(
            "--window", min=1, help="The context window the report draws (default: the payload)."
        ),
    ] = None,
) -> None:
    """X-ray one compile: tokens and bytes per layer, cache breakpoints, repairs, changed bytes.

    Example: contextchef inspect chat.json --target anthropic --diff yesterday.json
    """
    from contextchef.cli.inspect_view import render_inspection
    from contextchef.cli.inspection import inspect_compile
    from contextchef.cli.inspection_report import write_inspection_report

    previous: Any = None
    if diff is not None:
        previous = load_json(diff, "previous payload")
        if not isinstance(previous, dict):
            fail(f"previous payload {diff} is not a JSON object", "pass a file `compile -o` wrote")
    compiled = _compiled(
        CompileInputs(history, target, fmt, state, system, tools, memory, store, project)
    )
    inspection = inspect_compile(
        compiled, previous=previous, previous_source=str(diff) if diff else None
    )
    if report is not None:
        written = write_inspection_report(report, compiled, inspection, window=window)
        err_console().print(f"window report: {written}")
    if as_json:
        print_json(inspection.to_dict())
        return
    render_inspection(out_console(), inspection)
