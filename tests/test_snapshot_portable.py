"""Portable snapshots: snapshot → mutate → restore gives byte-identical payloads, in the same
process and in a fresh one reading the JSON, for both chefs, after overflow and with memory;
malformed or newer data is refused with a typed error naming the field, changing nothing."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contextchef import ContextChef, Skill, Snapshot, SnapshotError
from contextchef.errors import SnapshotTooNewError
from tests.snapshot_scenarios import NEXT, TARGETS, build, maybe, outcome, play, reloaded

ROOT = Path(__file__).resolve().parents[1]


def played(kind: str) -> tuple[Any, list[Any]]:
    chef, stored = build(kind), []  # type: ignore[var-annotated]
    payloads = asyncio.run(play(chef, stored))
    assert sum(p.meta.overflow.changed for p in payloads) >= 2  # overflow landed, written back
    assert len(chef.history) < len(stored)
    return chef, stored


async def mutate(chef: Any) -> None:
    """Change every part of the state a snapshot holds."""
    chef.set_system_prompt("Another prompt.").set_history([{"role": "user", "content": "other"}])
    chef.prompt.clear_dynamic_state()
    chef.with_guardrails(None).tools.register([])
    chef.prompt.announce("freeze", "Changed.", channel="system")
    chef.prompt.retract_announcement("secrets")
    await maybe(chef.skills.activate(Skill("other", "Another skill for the test.", "Other.")))
    await maybe(chef.memory.set("intruder", "x"))
    await maybe(chef.memory.advance_turn())
    chef.request_new_context()
    await maybe(chef.compile(target="anthropic"))


def in_fresh_process(kind: str, text: str, stored: list[Any]) -> dict[str, Any]:
    request = json.dumps({"kind": kind, "snapshot": text, "stored": stored})
    done = subprocess.run(
        [sys.executable, "-c", "from tests.snapshot_scenarios import main; main()"],
        input=request,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_restore_gives_the_same_bytes_here_and_in_a_fresh_process(kind: str) -> None:
    chef, stored = played(kind)
    snap = asyncio.run(maybe(chef.snapshot("before")))
    assert snap.memory is not None and len(snap.memory["entries"]) == 5
    assert snap.compactions and snap.runner is not None
    text = snap.to_json()
    expected = asyncio.run(outcome(chef, stored))
    assert expected["next_overflowed"] is False  # the next turn reuses the compaction record

    asyncio.run(mutate(chef))
    assert asyncio.run(outcome(chef, stored)) != expected
    asyncio.run(maybe(chef.restore(snap)))
    assert asyncio.run(outcome(chef, stored)) == expected  # the same process

    assert in_fresh_process(kind, text, stored) == expected  # another process, via JSON
    again = Snapshot.from_json(text)
    assert again.to_json() == text and again.label == "before"


def test_the_sync_and_async_chefs_write_the_same_snapshot() -> None:
    sync, _ = played("sync")
    achef, _ = played("async")
    left = sync.snapshot().to_dict()
    right = asyncio.run(achef.snapshot()).to_dict()
    for data in (left, right):  # memory write times (and sequences) differ between the runs
        for entry in data["memory"]["entries"].values():
            meta = entry["meta"].items()
            entry["meta"] = {k: v for k, v in meta if not k.endswith("_at") and k != "sequence"}
    assert left == right


def snapshot_data() -> dict[str, Any]:
    chef, _ = played("sync")
    return chef.snapshot().to_dict()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    return snapshot_data()


def test_a_newer_format_is_refused(data: dict[str, Any]) -> None:
    with pytest.raises(SnapshotTooNewError) as caught:
        Snapshot.from_dict({**data, "format_version": 2, "something_new": 1})
    assert caught.value.field == "format_version" and caught.value.version == 2
    assert "upgrade contextchef" in str(caught.value)


def broken(data: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    copy = reloaded(data)
    target = copy
    for step in path[:-1]:
        target = target[step]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return copy  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("path", "value", "field", "message"),
    [
        (["history"], KeyError, "history", "missing"),
        (["surprise"], 1, "surprise", "unknown field"),
        (["format"], "other", "format", "must be 'contextchef.snapshot'"),
        (["format_version"], "1", "format_version", "positive integer"),
        (["history", 1, "role"], "robot", "history", "role"),
        (["system_prompt", 0, "role"], "user", "system_prompt", "not a system message"),
        (["tools", 0, "name"], "", "tools", ""),
        (["dynamic_state", "schema"], "tests.nowhere:Task", "dynamic_state.schema", "import"),
        (["dynamic_state", "data", "step"], "x", "dynamic_state.data", "step"),
        (["dynamic_state", "extra"], 1, "dynamic_state.extra", "unknown field"),
        (["guardrails", "output_tag"], "no spaces", "guardrails", "output_tag"),
        (["skill", "skill", "name"], 3, "skill.skill.name", "must be a string"),
        (["announcements", 0, "channel"], "top", "announcements[0]", "channel"),
        (["janitor", "lineage", "first"], 7, "janitor.lineage", "window ids"),
        (["janitor", "failures"], -1, "janitor.failures", "count"),
        (["compactions", 0, "digest"], "zz", "compactions[0].digest", "hex"),
        (["memory"], [], "memory", "object"),
        (["pending_new_context"], "yes", "pending_new_context", "true or false"),
    ],
)
def test_malformed_data_names_the_field(
    data: dict[str, Any], path: list[Any], value: Any, field: str, message: str
) -> None:
    with pytest.raises(SnapshotError) as caught:
        Snapshot.from_dict(broken(data, path, value))
    assert caught.value.field == field, str(caught.value)
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"snapshot field {field!r}: ")


def test_bad_json_and_non_objects_are_snapshot_errors() -> None:
    with pytest.raises(SnapshotError, match="not JSON"):
        Snapshot.from_json("{nope")
    with pytest.raises(SnapshotError, match="JSON object"):
        Snapshot.from_dict([1, 2])


def test_schemas_resolve_the_dynamic_state_without_importing(data: dict[str, Any]) -> None:
    from tests.snapshot_scenarios import Task

    assert Snapshot.from_dict(data, schemas=[Task]).state.state is not None
    with pytest.raises(SnapshotError, match="not among the schemas given"):
        Snapshot.from_dict(data, schemas=[Skill])


def test_a_failed_restore_changes_nothing(data: dict[str, Any]) -> None:
    plain = ContextChef().set_history([{"role": "user", "content": "hi"}])
    before = json.dumps(plain.compile(), sort_keys=True)
    with pytest.raises(SnapshotError, match="holds memory but this chef has none"):
        plain.restore(Snapshot.from_dict(data))
    with pytest.raises(SnapshotError, match="pruner"):
        chef = build("sync")
        chef.restore(Snapshot.from_dict({**data, "pruner": {"selection": 7}}))
    assert json.dumps(plain.compile(), sort_keys=True) == before


def test_a_restored_snapshot_is_a_copy(data: dict[str, Any]) -> None:
    snap = Snapshot.from_dict(data)
    chef = build("sync")
    chef.restore(snap)
    first = json.dumps(chef.compile(target="openai"), sort_keys=True)
    snap.state.history[0]["content"] = "tampered"  # type: ignore[index]
    assert json.dumps(chef.compile(target="openai"), sort_keys=True) == first
    chef.set_history([*chef.history, NEXT])
    assert Snapshot.from_dict(data).to_dict() == data


def test_a_local_schema_class_travels_as_its_rendered_state() -> None:
    from pydantic import BaseModel

    class Local(BaseModel):
        note: str

    chef = ContextChef().set_history([{"role": "user", "content": "hi"}])
    chef.set_dynamic_state(Local, {"note": "kept"})
    snap = Snapshot.from_json(chef.snapshot().to_json())
    assert snap.to_dict()["dynamic_state"]["schema"] is None
    fresh = ContextChef().restore(snap)
    for target in TARGETS:
        assert json.dumps(fresh.compile(target=target)) == json.dumps(chef.compile(target=target))


def test_the_prompt_cache_section_is_checked_and_optional(data: dict[str, Any]) -> None:
    assert data["prompt_cache"]["targets"], "the played session compiled at least one target"
    broken = {**data, "prompt_cache": {"generation": -1, "targets": {}}}
    with pytest.raises(SnapshotError) as caught:
        Snapshot.from_dict(broken)
        build("sync").restore(Snapshot.from_dict(broken))
    assert caught.value.field == "prompt_cache.generation"
    older = {key: value for key, value in data.items() if key != "prompt_cache"}
    assert Snapshot.from_dict(older).prompt_cache == {}
