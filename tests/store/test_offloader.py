"""Long tool results leave the payload for vfs/, with a byte-stable preview that keeps errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextchef import ContextChef, prompts
from contextchef.errors import ConfigError
from contextchef.selection.offload import OffloadConfig, offload_uri, preview


def log(lines: int, *, error_at: int | None = None) -> str:
    out = [f"step {i}: ok" for i in range(lines)]
    if error_at is not None:
        out[error_at] = "FAILED tests/test_parser.py::test_empty - AssertionError: [] != [1]"
    return "\n".join(out)


def history(result: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "pytest", "arguments": "{}"}}
    return [
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]


def test_short_results_stay_inline() -> None:
    short = log(10)
    chef = ContextChef().set_history(history(short))
    assert chef.compile()["messages"][-1]["content"] == short
    assert chef.store.namespace("vfs").list() == []


def test_a_long_result_is_stored_whole_and_previewed_with_its_uri() -> None:
    output = log(2000)
    chef = ContextChef(tools="unified").set_history(history(output))
    sent = chef.compile()["messages"][-1]["content"]
    uri = offload_uri("vfs", output)
    assert uri.startswith("context://vfs/vfs_") and uri.endswith(".txt")
    assert f"view {uri}" in sent
    assert sent.startswith("step 0: ok") and sent.endswith("step 1999: ok")
    assert len(sent) < 3500
    address = chef.store.parse_uri(uri)
    assert address is not None
    stored = chef.store.namespace("vfs").get(address.path)
    assert stored is not None and stored.content == output
    assert chef.history[-1]["content"] == output  # the chef keeps the full result


def test_error_lines_from_the_omitted_middle_are_kept() -> None:
    output = log(2000, error_at=700)
    sent = ContextChef().set_history(history(output)).compile()["messages"][-1]["content"]
    assert prompts.ERROR_LINES_HEADER in sent
    assert "701: FAILED tests/test_parser.py::test_empty" in sent


def test_the_preview_is_byte_stable_and_offloading_is_idempotent() -> None:
    output = log(1500)
    chef = ContextChef().set_history(history(output))
    first = json.dumps(chef.compile())
    other = ContextChef(store=chef.store).set_history(history(output))
    assert json.dumps(other.compile()) == first
    assert len(chef.store.namespace("vfs").list()) == 1


def test_legacy_mode_never_mentions_the_context_tool() -> None:
    chef = ContextChef(tools="legacy").set_history(history(log(2000)))
    sent = chef.compile()["messages"][-1]["content"]
    assert "context tool" not in sent and "context://vfs/" in sent


def test_transform_hook_rewrites_results_once_and_a_failing_hook_keeps_them() -> None:
    calls: list[Any] = []

    def shout(content: str, info: dict[str, Any]) -> str:
        calls.append(info)
        return content.upper()

    chef = ContextChef(transform_tool_result=shout).set_history(history("quiet"))
    assert chef.compile()["messages"][-1]["content"] == "QUIET"
    chef.compile()
    assert calls == [{"tool_call_id": "c1", "tool_name": "pytest"}]

    def broken(content: str, info: dict[str, Any]) -> str:
        raise RuntimeError("bug")

    kept = ContextChef(transform_tool_result=broken).set_history(history("quiet"))
    assert kept.compile()["messages"][-1]["content"] == "quiet"


def test_preview_shapes() -> None:
    text = "a\n" * 100
    config = OffloadConfig(threshold=10, head_chars=0, tail_chars=0, error_chars=0)
    legacy = prompts.vocabulary("legacy")
    assert preview(text, "context://vfs/x", config, legacy).count("\n") == 3
    assert prompts.OFFLOAD_SHOWN[(False, False)] in preview(text, "u", config, legacy)
    assert not OffloadConfig(threshold=None).wants(text)
    assert not OffloadConfig(threshold=10, head_chars=150, tail_chars=100).wants(text)


@pytest.mark.parametrize(
    "options", [{"threshold": -1}, {"tail_chars": -5}, {"namespace": "../x"}, {"size": 3}]
)
def test_bad_vfs_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        ContextChef(offload=options)


@pytest.mark.parametrize(
    ("threshold", "head", "tail"), [(100, 10, 20), (20, 40, 60), (50, 25, 25), (0, 0, 0)]
)
def test_a_result_is_offloaded_exactly_when_the_config_wants_it(
    threshold: int, head: int, tail: int
) -> None:
    config = {"threshold": threshold, "head_chars": head, "tail_chars": tail}
    edge = max(threshold, head + tail)
    for size in sorted({0, 1, edge - 1, edge, edge + 1, edge + 2} - {-1}):
        result = "x" * size
        chef = ContextChef(offload=config).set_history(history(result))
        sent = chef.compile()["messages"][-1]["content"]
        wanted = OffloadConfig(threshold=threshold, head_chars=head, tail_chars=tail).wants(result)
        assert (sent != result) == wanted, (size, sent)
