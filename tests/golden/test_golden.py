"""Every scenario compiled to every built-in target matches its golden payload, byte for byte.

Run `pytest tests/golden --update-golden` to rewrite the files after an intended change, and
review the diff: a changed golden file means changed bytes for users' prompt caches.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextchef import AsyncContextChef, ContextChef
from contextchef.adapters import adapter_registry
from contextchef.store.backends.inmemory import AsyncInMemoryBackend, InMemoryBackend
from tests.golden.scenarios import SCENARIOS, build, build_async

HERE = Path(__file__).parent
TARGETS = adapter_registry.names()
CASES = [(target, name) for target in TARGETS for name in SCENARIOS]


def render(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=1) + "\n"


@pytest.mark.parametrize(("target", "scenario"), CASES)
def test_payload_matches_golden(target: str, scenario: str, update_golden: bool) -> None:
    payload = build(scenario, ContextChef).compile(target=target)
    path = HERE / target / f"{scenario}.json"
    text = render(payload)
    if update_golden:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path}; run pytest --update-golden"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize(("target", "scenario"), CASES)
async def test_async_chef_compiles_identical_bytes(target: str, scenario: str) -> None:
    sync_payload = build(scenario, ContextChef).compile(target=target)
    async_payload = await build(scenario, AsyncContextChef).compile(target=target)
    assert render(async_payload) == render(sync_payload)
    assert async_payload.meta == sync_payload.meta


@pytest.mark.parametrize(("target", "scenario"), CASES)
async def test_async_chef_over_an_async_native_store_compiles_identical_bytes(
    target: str, scenario: str
) -> None:
    sync_store = InMemoryBackend()
    sync_payload = build(scenario, ContextChef, store=sync_store).compile(target=target)
    native = AsyncInMemoryBackend()
    chef = await build_async(scenario, store=native)
    assert chef.store.backend is native
    async_payload = await chef.compile(target=target)
    assert render(async_payload) == render(sync_payload)
    assert async_payload.meta == sync_payload.meta
    for ns in ("memory", "vfs", "archive"):  # the same entries landed in both stores
        mine = {path: entry.content for path, entry in native.inner.read_all(ns).items()}
        theirs = {path: entry.content for path, entry in sync_store.read_all(ns).items()}
        assert mine == theirs, ns


@pytest.mark.parametrize(("target", "scenario"), CASES)
def test_keys_are_emitted_in_sorted_order(target: str, scenario: str) -> None:
    payload = build(scenario, ContextChef).compile(target=target)
    assert json.dumps(payload) == json.dumps(payload, sort_keys=True)


@pytest.mark.parametrize(("target", "scenario"), CASES)
def test_every_payload_is_strict_json(target: str, scenario: str) -> None:
    """No NaN or infinity anywhere: what `json.dumps(allow_nan=False)` (and every SDK) takes."""
    json.dumps(build(scenario, ContextChef).compile(target=target), allow_nan=False)


def test_there_are_golden_files_for_every_case_and_no_stale_ones() -> None:
    expected = {HERE / target / f"{name}.json" for target, name in CASES}
    present = set(HERE.glob("*/*.json"))
    assert not (present - expected), f"stale golden files: {sorted(present - expected)}"
