"""`intercept`, the one wrapper of a flow: it sees every effect go out and its outcome come
back, and changes nothing else, under either driver. (Telemetry's spans rely on it, and so
would anything else that watches a flow: no other module hand-writes a send/throw loop.)"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from contextchef._effects import (
    After,
    Call,
    Effect,
    Emit,
    Flow,
    StoreOp,
    drive_async,
    drive_sync,
    intercept,
)
from contextchef.store.backend import StorageBackend, StoredEntry
from contextchef.store.backends.inmemory import InMemoryBackend

SRC = Path(__file__).resolve().parents[1] / "src" / "contextchef"


class Boom(Exception):
    pass


def boom() -> str:
    raise Boom("boom")


def busy_flow(backend: object, closed: list[str]) -> Flow[list[object]]:
    """A flow with one effect of each kind, a failure it catches, and a `finally`."""
    seen: list[object] = []
    try:
        seen.append((yield Call.of(lambda: "called", what="summarizer")))
        try:
            yield Call.of(boom)
        except Boom as exc:
            seen.append(f"caught {exc}")
        yield StoreOp(backend, StorageBackend.write, ("notes", "a", StoredEntry("hi")))
        found = yield StoreOp(backend, StorageBackend.read, ("notes", "a"))
        seen.append(found.content)
        yield Emit((lambda event: None,), "event")
        return seen
    finally:
        closed.append("closed")


class Recorder:
    """An `around` that records each effect with its outcome, in order."""

    def __init__(self) -> None:
        self.log: list[tuple[str, object, str | None]] = []

    def __call__(self, effect: Effect) -> After:
        kind = type(effect).__name__
        if isinstance(effect, StoreOp):
            kind = f"StoreOp.{effect.name}"

        def after(result: Any, error: BaseException | None) -> None:
            self.log.append((kind, result, type(error).__name__ if error else None))

        return after


async def drive(kind: str, flow: Flow[Any]) -> Any:
    return drive_sync(flow) if kind == "sync" else await drive_async(flow)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_wrapped_flow_behaves_as_the_flow_and_around_sees_every_outcome(
    kind: str,
) -> None:
    closed: list[str] = []
    bare = await drive(kind, busy_flow(InMemoryBackend(), closed))
    recorder = Recorder()
    wrapped = await drive(kind, intercept(busy_flow(InMemoryBackend(), closed), recorder))
    assert wrapped == bare == ["called", "caught boom", "hi"]
    assert closed == ["closed", "closed"]
    found = recorder.log[3][1]
    assert isinstance(found, StoredEntry) and found.content == "hi"
    assert recorder.log == [
        ("Call", "called", None),
        ("Call", None, "Boom"),  # seen before the flow catches it
        ("StoreOp.write", None, None),
        ("StoreOp.read", found, None),
        ("Emit", None, None),
    ]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_an_error_the_flow_does_not_catch_propagates_through_the_wrapper(
    kind: str,
) -> None:
    closed: list[str] = []

    def flow() -> Flow[str]:
        try:
            return (yield Call.of(boom))
        finally:
            closed.append("closed")

    recorder = Recorder()
    with pytest.raises(Boom):
        await drive(kind, intercept(flow(), recorder))
    assert recorder.log == [("Call", None, "Boom")] and closed == ["closed"]


def test_closing_the_wrapped_flow_closes_the_flow_and_tells_around() -> None:
    closed: list[str] = []
    recorder = Recorder()
    wrapped = intercept(busy_flow(InMemoryBackend(), closed), recorder)
    assert isinstance(next(wrapped), Call)  # the first effect is out, waiting
    wrapped.close()
    assert closed == ["closed"]
    assert recorder.log == [("Call", None, "GeneratorExit")]


def test_an_around_that_returns_nothing_only_watches() -> None:
    seen: list[str] = []

    def around(effect: Effect) -> None:
        seen.append(type(effect).__name__)

    closed: list[str] = []
    result = drive_sync(intercept(busy_flow(InMemoryBackend(), closed), around))
    assert result == ["called", "caught boom", "hi"]
    assert seen == ["Call", "Call", "StoreOp", "StoreOp", "Emit"]


def _trampolines(path: Path) -> list[int]:
    """Lines of `path` that resume a generator with `.throw(...)`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "throw"
    ]


def test_only_the_effect_module_trampolines_flows() -> None:
    """The two drivers and `intercept` are the only code resuming a flow with an error."""
    found = {
        str(path.relative_to(SRC)): lines
        for path in sorted(SRC.rglob("*.py"))
        if (lines := _trampolines(path))
    }
    assert set(found) == {"_effects.py"}
    assert len(found["_effects.py"]) == 3  # drive_sync, drive_async, intercept
