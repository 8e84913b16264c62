"""The fields of a portable snapshot: each one to JSON data and back, checked as it is read.

Every reader raises `SnapshotError` naming the field (`history`, `janitor.lineage`,
`announcements[0]`…) for anything it cannot take.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, get_args, get_type_hints

from contextchef._compaction import Compaction
from contextchef._jsonvalue import copy_json
from contextchef._repair import HistoryFix
from contextchef.errors import ConfigError, ContextChefError, SnapshotError
from contextchef.messages import Message, validate_history
from contextchef.placement.announcements import Announcement, make_announcement
from contextchef.placement.guardrail import Guardrails, make_guardrails
from contextchef.placement.state import DynamicState, render_dynamic_state, schema_path
from contextchef.selection.overflow import Lineage
from contextchef.selection.usage import Reported

__all__ = [
    "as_field_error",
    "compaction_data",
    "find_schema",
    "guardrails_data",
    "read_announcements",
    "read_compaction",
    "read_dynamic_state",
    "read_guardrails",
    "read_list",
    "read_messages",
    "read_object",
    "read_repairs",
    "read_runner",
    "runner_data",
    "state_data",
]

_REPAIR_KINDS = frozenset(get_args(get_type_hints(HistoryFix)["kind"]))


def as_field_error(name: str, build: Callable[[], Any]) -> Any:
    """`build()`, its library errors reported as a `SnapshotError` on `name`."""
    try:
        return build()
    except SnapshotError:
        raise
    except ContextChefError as exc:
        raise SnapshotError(str(exc), field=name) from None


def read_list(value: object, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise SnapshotError("must be a list", field=name)
    return value


def read_object(value: object, name: str, keys: Iterable[str]) -> Mapping[str, Any]:
    """`value` as an object holding exactly `keys`."""
    if not isinstance(value, Mapping):
        raise SnapshotError("must be an object", field=name)
    wanted = set(keys)
    for key in sorted(wanted - set(value)):
        raise SnapshotError("missing", field=f"{name}.{key}")
    for key in sorted(set(value) - wanted):
        raise SnapshotError("unknown field", field=f"{name}.{key}")
    return value


def read_messages(value: object, name: str) -> tuple[Message, ...]:
    messages = read_list(value, name)
    checked = as_field_error(name, lambda: validate_history(copy_json(messages)))
    return tuple(checked)


def read_repairs(value: object) -> tuple[HistoryFix, ...]:
    fixes = []
    for index, item in enumerate(read_list(value, "repairs")):
        where = f"repairs[{index}]"
        fix = read_object(item, where, ("detail", "index", "kind"))
        if not isinstance(fix["kind"], str) or not isinstance(fix["detail"], str):
            raise SnapshotError("kind and detail must be strings", field=where)
        if not isinstance(fix["index"], int) or isinstance(fix["index"], bool):
            raise SnapshotError("must be an integer", field=f"{where}.index")
        if fix["kind"] not in _REPAIR_KINDS:
            raise SnapshotError(f"unknown repair kind {fix['kind']!r}", field=f"{where}.kind")
        fixes.append(HistoryFix(fix["kind"], fix["index"], fix["detail"]))  # type: ignore[arg-type]
    return tuple(fixes)


def state_data(state: DynamicState | None) -> dict[str, Any] | None:
    if state is None:
        return None
    return {
        "data": copy_json(state.data),
        "placement": state.placement,
        "schema": state.schema,
        "xml": state.xml,
    }


def read_dynamic_state(value: object, schemas: Iterable[type] | None) -> DynamicState | None:
    if value is None:
        return None
    data = read_object(value, "dynamic_state", ("data", "placement", "schema", "xml"))
    placement, path, xml = data["placement"], data["schema"], data["xml"]
    if placement not in ("last_user", "system"):
        raise SnapshotError("must be 'last_user' or 'system'", field="dynamic_state.placement")
    if not isinstance(xml, str):
        raise SnapshotError("must be a string", field="dynamic_state.xml")
    if path is None:  # a type that cannot be imported by name: the rendered state as it was
        return DynamicState(copy_json(data["data"]), xml, placement)
    if not isinstance(path, str):
        raise SnapshotError("must be an import path or null", field="dynamic_state.schema")
    schema = find_schema(path, schemas)
    rendered: DynamicState = as_field_error(
        "dynamic_state.data",
        lambda: render_dynamic_state(schema, copy_json(data["data"]), placement=placement),
    )
    return rendered


def find_schema(path: str, schemas: Iterable[type] | None) -> type:
    """The class at `path` (`module:QualName`): from `schemas` when given, else imported."""
    if schemas is not None:
        for schema in schemas:
            if schema_path(schema) == path:
                return schema
        raise SnapshotError(
            f"{path!r} is not among the schemas given", field="dynamic_state.schema"
        )
    module_name, _, qualname = path.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, ValueError) as exc:
        raise SnapshotError(
            f"cannot import {path!r} ({exc}); import the schema's module where you restore, or "
            "pass schemas=[...]",
            field="dynamic_state.schema",
        ) from None
    if not isinstance(found, type):
        raise SnapshotError(f"{path!r} is not a class", field="dynamic_state.schema")
    return found


def guardrails_data(guardrails: Guardrails | None) -> dict[str, Any] | None:
    if guardrails is None:
        return None
    data: dict[str, Any] = {"output_tag": guardrails.output_tag, "prefill": guardrails.prefill}
    if guardrails.placement != "last_user":  # (a default snapshot keeps its older bytes)
        data["placement"] = guardrails.placement
    return data


def read_guardrails(value: object) -> Guardrails | None:
    if value is None:
        return None
    keys = ("output_tag", "prefill", "placement")
    data = read_object(
        value,
        "guardrails",
        keys if isinstance(value, Mapping) and "placement" in value else keys[:2],
    )
    made: Guardrails = as_field_error(
        "guardrails",
        lambda: make_guardrails(data["output_tag"], data["prefill"], data.get("placement")),
    )
    return made


def read_announcements(value: object) -> tuple[Announcement, ...]:
    found: list[Announcement] = []
    for index, item in enumerate(read_list(value, "announcements")):
        where = f"announcements[{index}]"
        data = read_object(item, where, ("channel", "id", "text"))
        try:
            found.append(make_announcement(data["id"], data["text"], data["channel"]))
        except ConfigError as exc:
            raise SnapshotError(str(exc), field=where) from None
    if len({a.id for a in found}) != len(found):
        raise SnapshotError("two announcements have one id", field="announcements")
    return tuple(found)


def runner_data(runner: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if runner is None:
        return None
    lineage, reported = runner.get("lineage"), runner.get("reported")
    return {
        "failures": runner.get("failures", 0),
        "lineage": (
            {"current": lineage.current, "first": lineage.first, "previous": lineage.previous}
            if isinstance(lineage, Lineage)
            else None
        ),
        "noticed_window": runner.get("noticed_window"),
        "reported": (
            {
                "counted": reported.counted,
                "target": reported.target,
                "tokens": reported.tokens,
                "window": reported.window,
            }
            if isinstance(reported, Reported)
            else None
        ),
        "strategy": copy_json(runner.get("strategy")),
    }


def read_runner(value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    keys = ("failures", "lineage", "noticed_window", "reported", "strategy")
    data = read_object(value, "janitor", keys)
    failures = data["failures"]
    if not isinstance(failures, int) or isinstance(failures, bool) or failures < 0:
        raise SnapshotError("must be a count", field="janitor.failures")
    noticed = data["noticed_window"]
    if noticed is not None and not isinstance(noticed, str):
        raise SnapshotError("must be a window id or null", field="janitor.noticed_window")
    lineage: Lineage | None = None
    if data["lineage"] is not None:
        ids = read_object(data["lineage"], "janitor.lineage", ("current", "first", "previous"))
        if not isinstance(ids["current"], str) or not isinstance(ids["first"], str):
            raise SnapshotError("window ids must be strings", field="janitor.lineage")
        if ids["previous"] is not None and not isinstance(ids["previous"], str):
            raise SnapshotError("must be a window id or null", field="janitor.lineage.previous")
        lineage = Lineage(ids["first"], ids["previous"], ids["current"])
    reported: Reported | None = None
    if data["reported"] is not None:
        rep = read_object(
            data["reported"], "janitor.reported", ("counted", "target", "tokens", "window")
        )
        if not isinstance(rep["tokens"], int) or isinstance(rep["tokens"], bool):
            raise SnapshotError("must be an integer", field="janitor.reported.tokens")
        if rep["counted"] is not None and not isinstance(rep["counted"], int):
            raise SnapshotError("must be an integer or null", field="janitor.reported.counted")
        for key in ("target", "window"):
            if rep[key] is not None and not isinstance(rep[key], str):
                raise SnapshotError("must be a string or null", field=f"janitor.reported.{key}")
        reported = Reported(rep["tokens"], rep["counted"], rep["target"], rep["window"])
    return {
        "failures": failures,
        "lineage": lineage,
        "noticed_window": noticed,
        "reported": reported,
        "strategy": copy_json(data["strategy"]),
    }


def compaction_data(compaction: Compaction) -> dict[str, Any]:
    return {
        "count": compaction.count,
        "digest": compaction.digest.hex(),
        "head": compaction.head.hex(),
        "marks": [mark.hex() for mark in compaction.marks],
        "replacement": copy_json(list(compaction.replacement)),
    }


def read_compaction(value: object, where: str) -> Compaction:
    data = read_object(value, where, ("count", "digest", "head", "marks", "replacement"))
    count = data["count"]
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise SnapshotError("must be a positive count", field=f"{where}.count")

    def digest(text: object, name: str) -> bytes:
        try:
            if not isinstance(text, str):
                raise ValueError(text)
            return bytes.fromhex(text)
        except ValueError:
            raise SnapshotError("must be a hex digest", field=f"{where}.{name}") from None

    return Compaction(
        count=count,
        digest=digest(data["digest"], "digest"),
        head=digest(data["head"], "head"),
        replacement=read_messages(data["replacement"], f"{where}.replacement"),
        marks=tuple(
            digest(mark, f"marks[{i}]") for i, mark in enumerate(read_list(data["marks"], "marks"))
        ),
        running=None,
    )
