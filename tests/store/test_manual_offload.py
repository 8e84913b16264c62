"""Manual offload (issue 26, item 1): the host stores content of its own and gets the marker the
automatic offloader writes (error lines included); `store.resolve(uri)` reads it back; the
store's eviction calls `on_evicted`."""

from __future__ import annotations

from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef, prompts
from contextchef.errors import ConfigError, InvalidPathError
from contextchef.store import CleanupReport, InMemoryBackend, Store
from contextchef.store.offloads import Offloaded


def log(lines: int, *, error_at: int | None = None) -> str:
    out = [f"step {i}: ok" for i in range(lines)]
    if error_at is not None:
        out[error_at] = "FAILED tests/test_parser.py::test_empty - AssertionError: [] != [1]"
    return "\n".join(out)


def tool_turn(result: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "pytest", "arguments": "{}"}}
    return [
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]


@pytest.mark.parametrize("tools", ["unified", "legacy"])
@pytest.mark.parametrize(
    "vfs",
    [None, {"head_chars": 100, "tail_chars": 300, "error_chars": 400}],
    ids=["default", "custom"],
)
def test_the_marker_is_the_automatic_offloaders_text(tools: str, vfs: Any) -> None:
    content = log(2000, error_at=900)
    automatic = ContextChef(tools=tools, offload=vfs).set_history(tool_turn(content))
    sent = automatic.compile()["messages"][-1]["content"]
    manual = ContextChef(tools=tools, offload=vfs).store.offload(content)
    assert manual.marker == sent
    assert prompts.ERROR_LINES_HEADER in manual.marker and "901: FAILED" in manual.marker
    assert manual.uri in manual.marker and manual.chars == len(content)


def test_offload_is_content_addressed_and_resolvable() -> None:
    chef = ContextChef()
    content = log(800)
    first = chef.store.offload(content, name="build.log", meta={"source": "ci"})
    again = chef.store.offload(content, name="other name")
    assert first == again and isinstance(first, Offloaded)
    assert first.namespace == "vfs" and first.uri == f"context://vfs/{first.path}"
    assert chef.store.resolve(first.uri) == content
    entry = chef.store.namespace("vfs").get(first.path)
    assert entry is not None and entry.meta["name"] == "build.log"
    assert entry.meta["source"] == "ci"  # the first write and its meta win
    assert len(chef.store.namespace("vfs").list()) == 1


def test_a_short_content_is_offloaded_too_and_the_namespace_follows_the_options() -> None:
    chef = ContextChef(offload={"namespace": "files", "threshold": None})
    done = chef.store.offload("three short lines\nof a file\nthe host read")
    assert done.uri.startswith("context://files/files_")
    assert chef.store.resolve(done.uri) == "three short lines\nof a file\nthe host read"
    assert done.uri in done.marker


def test_resolve_answers_none_for_nothing_and_refuses_a_non_uri() -> None:
    store = ContextChef().store
    assert store.resolve("context://vfs/vfs_0000000000000000.txt") is None
    for bad in ("vfs/x.txt", "https://example.com", ""):
        with pytest.raises(InvalidPathError, match="not a context:// URI"):
            store.resolve(bad)


def test_bad_arguments_raise_config_errors() -> None:
    store = ContextChef().store
    with pytest.raises(ConfigError, match="offload\\(\\) takes a string"):
        store.offload(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="name must be a string"):
        store.offload("x", name=3)  # type: ignore[arg-type]


def test_a_store_no_chef_opened_cannot_offload_but_resolves() -> None:
    store = Store(InMemoryBackend())
    with pytest.raises(ConfigError, match="needs a chef's store"):
        store.offload("x")
    uri = store.namespace("notes").put("a.md", "hello").uri
    assert store.resolve(uri) == "hello"
    chef = ContextChef(store=store)
    assert chef.store is store and store.offload("x").uri.startswith("context://vfs/")


async def test_the_async_chef_offloads_and_resolves() -> None:
    chef = AsyncContextChef()
    content = log(2000, error_at=10)
    done = await chef.store.offload(content, name="log")
    assert await chef.store.resolve(done.uri) == content
    assert done.marker == ContextChef().store.offload(content).marker


def test_on_evicted_sees_every_sweep_that_evicted(caplog: pytest.LogCaptureFixture) -> None:
    store = Store(InMemoryBackend(), eviction={"vfs": {"max_files": 1}})
    chef = ContextChef(store=store)
    reports: list[CleanupReport] = []
    unsubscribe = store.on_evicted(reports.append)
    store.on_evicted(lambda report: 1 / 0)  # a raising handler never fails the sweep
    first = chef.store.offload(log(300))
    store.cleanup("vfs")
    assert reports == []  # nothing evicted: no call
    chef.store.offload(log(400))
    swept = store.cleanup("vfs")
    assert reports == [swept] and swept.paths == [first.path]
    assert chef.store.resolve(first.uri) is None
    assert "ZeroDivisionError" in caplog.text
    assert unsubscribe() is True and unsubscribe() is False
    with pytest.raises(ConfigError, match="must be callable"):
        store.on_evicted("nope")  # type: ignore[arg-type]


async def test_async_on_evicted_awaits_a_coroutine_handler() -> None:
    chef = AsyncContextChef(store="memory")
    seen: list[str] = []

    async def record(report: CleanupReport) -> None:
        seen.extend(report.paths)

    chef.store.on_evicted(record)
    done = await chef.store.offload(log(50))
    await chef.store.cleanup("vfs", max_files=0)
    assert seen == [done.path]
