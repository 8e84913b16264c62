"""Eviction policy validation and sweep details not tied to a particular backend."""

from __future__ import annotations

import math

import pytest

from contextchef.errors import ConfigError
from contextchef.store import EvictionPolicy, InMemoryBackend, Store


@pytest.mark.parametrize(
    "bad",
    [
        {"max_files": -1},
        {"max_bytes": -0.5},
        {"max_age": math.nan},
        {"max_files": True},
        {"max_age": "1d"},
    ],
)
def test_bad_policies_are_config_errors(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        EvictionPolicy.coerce(bad)
    with pytest.raises(ConfigError):
        Store(InMemoryBackend(), eviction={"vfs": bad})


def test_policy_coercion_and_overrides() -> None:
    with pytest.raises(ConfigError, match="max_filez"):
        EvictionPolicy.coerce({"max_filez": 3})
    with pytest.raises(ConfigError):
        EvictionPolicy.coerce(3)  # type: ignore[arg-type]
    policy = EvictionPolicy.coerce({"max_files": 3, "max_age": 60})
    assert policy.override(max_files=None) is policy
    assert policy.override(max_files=5) == EvictionPolicy(max_files=5, max_age=60)
    store = Store(InMemoryBackend(), eviction={"vfs": policy})
    with pytest.raises(ConfigError, match="max_filez"):
        store.cleanup("vfs", max_filez=1)  # type: ignore[call-arg]
    assert store.eviction_policy("vfs") == policy
    assert store.eviction_policy("notes") == EvictionPolicy()


def test_nothing_to_do_without_a_policy() -> None:
    store = Store(InMemoryBackend())
    store.namespace("notes").put("a", "a")
    report = store.cleanup("notes")
    assert report.evicted == () and report.failed == () and report.evicted_bytes == 0


def test_ties_break_by_path_and_reports_carry_details() -> None:
    store = Store(InMemoryBackend(), clock=lambda: 500.0)
    notes = store.namespace("notes")
    for path in ("c", "a", "b"):
        notes.put(path, "xx")
    report = notes.cleanup(max_files=1)
    assert report.paths == ["a", "b"]
    first = report.evicted[0]
    assert (first.uri, first.reason, first.bytes, first.created_at) == (
        "context://notes/a",
        "max_files",
        2,
        500.0,
    )
    assert report.count("max_files") == 2 and report.count("max_age") == 0


def test_max_age_is_strict_and_zero_means_now() -> None:
    now = [1000.0]
    store = Store(InMemoryBackend(), clock=lambda: now[0])
    notes = store.namespace("notes")
    notes.put("a", "a")
    assert store.cleanup("notes", max_age=0).evicted == ()  # not strictly older yet
    now[0] += 0.001
    assert store.cleanup("notes", max_age=0).paths == ["a"]


def test_a_failing_list_propagates() -> None:
    class Broken(InMemoryBackend):
        def list(self, ns: str, prefix: str = "") -> list:  # type: ignore[type-arg]
            raise OSError("cannot list")

    with pytest.raises(OSError, match="cannot list"):
        Store(Broken()).cleanup("notes", max_files=0)
