"""`Snapshot`: everything that decides a chef's next compile, portable across processes.

`chef.snapshot()` takes one; `chef.restore(snapshot)` returns the chef to it, so the next compile
is byte-identical to the one the chef would have made. `to_dict()` / `to_json()` turn it into
JSON data, and `from_dict()` / `from_json()` read it back in any process, with the same chef
configuration (a snapshot holds state: the system prompt, the history and the compaction
records `set_history` re-applies, tools, dynamic state, guardrails, the active skill,
announcements, memory entries and the turn counter, the overflow runner's state and window
lineage, and the pruner's section). The store's other namespaces (notes/, vfs/, archive/) live
in the store, not in a snapshot.

The data is versioned: `format_version` newer than this module reads is refused with
`SnapshotTooNewError`; a missing, unknown or malformed field is a `SnapshotError` naming it.
Nothing is changed on error.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, get_args, get_type_hints

from contextchef._chef_parts import Compaction
from contextchef._jsonvalue import NotJson, copy_json, strict_json
from contextchef._repair import HistoryFix
from contextchef.adapters import normalize_tools
from contextchef.errors import ConfigError, ContextChefError, SnapshotError, SnapshotTooNewError
from contextchef.messages import Message, validate_history
from contextchef.pipeline import CompileState
from contextchef.placement.announcements import Announcement, make_announcement
from contextchef.placement.guardrail import Guardrails, make_guardrails
from contextchef.placement.state import DynamicState, render_dynamic_state, schema_path
from contextchef.selection.janitor import Lineage
from contextchef.selection.usage import Reported
from contextchef.skills.active import ActiveSkill

__all__ = ["FORMAT", "FORMAT_VERSION", "Snapshot", "copy_state"]

FORMAT = "contextchef.snapshot"
FORMAT_VERSION = 1
"""The version `to_dict` writes and the newest `from_dict` reads."""

_FIELDS = (
    "announcements",
    "compactions",
    "dynamic_state",
    "format",
    "format_version",
    "guardrails",
    "history",
    "janitor",
    "label",
    "memory",
    "pending_new_context",
    "pruner",
    "repairs",
    "skill",
    "system_prompt",
    "tools",
)

_REPAIR_KINDS = frozenset(get_args(get_type_hints(HistoryFix)["kind"]))


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A deep copy of a chef's state; restoring it makes the next compile identical.

    `state` holds the layers; `runner` the overflow runner's state (None without one);
    `memory` the memory entries and turn counter (None without memory); `compactions` the
    records `set_history` re-applies to a host's reloaded history; `pruner` the pruner's own
    section (JSON data); `pending_new_context` whether `request_new_context()` was pending.
    """

    state: CompileState
    label: str | None = None
    runner: Mapping[str, Any] | None = None
    memory: Mapping[str, Any] | None = None
    compactions: tuple[Compaction, ...] = ()
    pruner: Mapping[str, Any] = field(default_factory=dict)
    pending_new_context: bool = False

    # -- to JSON -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as JSON data (every value a dict, list, string, number, bool or None)."""
        state = self.state
        data = {
            "announcements": [
                {"channel": a.channel, "id": a.id, "text": a.text} for a in state.announcements
            ],
            "compactions": [_compaction_data(c) for c in self.compactions],
            "dynamic_state": _state_data(state.state),
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "guardrails": _guardrails_data(state.guardrails),
            "history": copy_json(list(state.history)),
            "janitor": _runner_data(self.runner),
            "label": self.label,
            "memory": copy_json(dict(self.memory)) if self.memory is not None else None,
            "pending_new_context": self.pending_new_context,
            "pruner": copy_json(dict(self.pruner)),
            "repairs": [
                {"detail": fix.detail, "index": fix.index, "kind": fix.kind}
                for fix in state.repairs
            ],
            "skill": state.skill.to_dict() if state.skill is not None else None,
            "system_prompt": copy_json(list(state.system_prompt)),
            "tools": copy_json(list(state.tools)),
        }
        try:
            return strict_json(data)  # type: ignore[no-any-return]
        except NotJson as exc:
            raise SnapshotError(exc.describe("the snapshot"), field=exc.where() or None) from None

    def to_json(self) -> str:
        """`to_dict()` as compact JSON text with sorted keys (the same state, the same text)."""
        return json.dumps(
            self.to_dict(),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )

    # -- from JSON -----------------------------------------------------------------------

    @classmethod
    def from_json(cls, text: str | bytes, *, schemas: Iterable[type] | None = None) -> Snapshot:
        """`to_json()`'s text back (see `from_dict`)."""
        try:
            data = json.loads(text)
        except (ValueError, TypeError) as exc:
            raise SnapshotError(f"the text is not JSON: {exc}") from None
        return cls.from_dict(data, schemas=schemas)

    @classmethod
    def from_dict(cls, data: object, *, schemas: Iterable[type] | None = None) -> Snapshot:
        """`to_dict()`'s data back, checked field by field.

        The dynamic state's schema is found by its import path; `schemas` (the classes you
        allow) resolves it from that list instead of importing modules a snapshot names.
        """
        if not isinstance(data, Mapping):
            raise SnapshotError(f"a snapshot is a JSON object, got {type(data).__name__}")
        _check_version(data)
        missing = [name for name in _FIELDS if name not in data]
        if missing:
            raise SnapshotError("missing", field=missing[0])
        foreign = sorted(set(data) - set(_FIELDS))
        if foreign:
            raise SnapshotError("unknown field", field=foreign[0])
        if data["format"] != FORMAT:
            raise SnapshotError(f"must be {FORMAT!r}, got {data['format']!r}", field="format")
        system_prompt = _messages(data["system_prompt"], "system_prompt")
        if any(message["role"] != "system" for message in system_prompt):
            raise SnapshotError(
                "holds a message that is not a system message", field="system_prompt"
            )
        tools = _field("tools", lambda: tuple(normalize_tools(_list(data["tools"], "tools"))))
        state = CompileState(
            system_prompt=system_prompt,
            history=_messages(data["history"], "history"),
            repairs=_repairs(data["repairs"]),
            state=_dynamic_state(data["dynamic_state"], schemas),
            guardrails=_guardrails(data["guardrails"]),
            tools=tools,
            skill=(ActiveSkill.from_dict(data["skill"]) if data["skill"] is not None else None),
            announcements=_announcements(data["announcements"]),
        )
        label = data["label"]
        if label is not None and not isinstance(label, str):
            raise SnapshotError("must be a string or null", field="label")
        pending = data["pending_new_context"]
        if not isinstance(pending, bool):
            raise SnapshotError("must be true or false", field="pending_new_context")
        pruner = data["pruner"]
        if not isinstance(pruner, Mapping):
            raise SnapshotError("must be an object", field="pruner")
        memory = data["memory"]
        if memory is not None and not isinstance(memory, Mapping):
            raise SnapshotError("must be an object or null", field="memory")
        return cls(
            state=state,
            label=label,
            runner=_runner(data["janitor"]),
            memory=copy_json(dict(memory)) if memory is not None else None,
            compactions=tuple(
                _compaction(item, f"compactions[{i}]")
                for i, item in enumerate(_list(data["compactions"], "compactions"))
            ),
            pruner=copy_json(dict(pruner)),
            pending_new_context=pending,
        )

    def copy(self) -> Snapshot:
        """A deep copy (restoring never shares mutable data with the snapshot)."""
        return replace(
            self,
            state=copy_state(self.state),
            runner=copy_runner(self.runner),
            memory=copy_json(dict(self.memory)) if self.memory is not None else None,
            pruner=copy_json(dict(self.pruner)),
        )


def copy_state(state: CompileState) -> CompileState:
    """A copy of `state` that shares no mutable message or tool with it."""
    return replace(
        state,
        system_prompt=tuple(copy_json(m) for m in state.system_prompt),
        history=tuple(copy_json(m) for m in state.history),
        tools=tuple(copy_json(t) for t in state.tools),
    )


def copy_runner(runner: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if runner is None:
        return None
    return {key: copy_json(value) for key, value in runner.items()}


# -- fields --------------------------------------------------------------------------------


def _check_version(data: Mapping[str, Any]) -> None:
    version = data.get("format_version")
    if "format_version" not in data:
        raise SnapshotError("missing", field="format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SnapshotError(f"must be a positive integer, got {version!r}", field="format_version")
    if version > FORMAT_VERSION:
        raise SnapshotTooNewError(version, FORMAT_VERSION)


def _field(name: str, build: Callable[[], Any]) -> Any:
    """`build()`, its library errors reported as a `SnapshotError` on `name`."""
    try:
        return build()
    except SnapshotError:
        raise
    except ContextChefError as exc:
        raise SnapshotError(str(exc), field=name) from None


def _list(value: object, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise SnapshotError("must be a list", field=name)
    return value


def _object(value: object, name: str, keys: Iterable[str]) -> Mapping[str, Any]:
    """`value` as an object holding exactly `keys`."""
    if not isinstance(value, Mapping):
        raise SnapshotError("must be an object", field=name)
    wanted = set(keys)
    for key in sorted(wanted - set(value)):
        raise SnapshotError("missing", field=f"{name}.{key}")
    for key in sorted(set(value) - wanted):
        raise SnapshotError("unknown field", field=f"{name}.{key}")
    return value


def _messages(value: object, name: str) -> tuple[Message, ...]:
    messages = _list(value, name)
    checked = _field(name, lambda: validate_history(copy_json(messages)))
    return tuple(checked)


def _repairs(value: object) -> tuple[HistoryFix, ...]:
    fixes = []
    for index, item in enumerate(_list(value, "repairs")):
        where = f"repairs[{index}]"
        fix = _object(item, where, ("detail", "index", "kind"))
        if not isinstance(fix["kind"], str) or not isinstance(fix["detail"], str):
            raise SnapshotError("kind and detail must be strings", field=where)
        if not isinstance(fix["index"], int) or isinstance(fix["index"], bool):
            raise SnapshotError("must be an integer", field=f"{where}.index")
        if fix["kind"] not in _REPAIR_KINDS:
            raise SnapshotError(f"unknown repair kind {fix['kind']!r}", field=f"{where}.kind")
        fixes.append(HistoryFix(fix["kind"], fix["index"], fix["detail"]))  # type: ignore[arg-type]
    return tuple(fixes)


def _state_data(state: DynamicState | None) -> dict[str, Any] | None:
    if state is None:
        return None
    return {
        "data": copy_json(state.data),
        "placement": state.placement,
        "schema": state.schema,
        "xml": state.xml,
    }


def _dynamic_state(value: object, schemas: Iterable[type] | None) -> DynamicState | None:
    if value is None:
        return None
    data = _object(value, "dynamic_state", ("data", "placement", "schema", "xml"))
    placement, path, xml = data["placement"], data["schema"], data["xml"]
    if placement not in ("last_user", "system"):
        raise SnapshotError("must be 'last_user' or 'system'", field="dynamic_state.placement")
    if not isinstance(xml, str):
        raise SnapshotError("must be a string", field="dynamic_state.xml")
    if path is None:  # a type that cannot be imported by name: the rendered state as it was
        return DynamicState(copy_json(data["data"]), xml, placement)
    if not isinstance(path, str):
        raise SnapshotError("must be an import path or null", field="dynamic_state.schema")
    schema = _schema(path, schemas)
    rendered: DynamicState = _field(
        "dynamic_state.data",
        lambda: render_dynamic_state(schema, copy_json(data["data"]), placement=placement),
    )
    return rendered


def _schema(path: str, schemas: Iterable[type] | None) -> type:
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


def _guardrails_data(guardrails: Guardrails | None) -> dict[str, Any] | None:
    if guardrails is None:
        return None
    return {"output_tag": guardrails.output_tag, "prefill": guardrails.prefill}


def _guardrails(value: object) -> Guardrails | None:
    if value is None:
        return None
    data = _object(value, "guardrails", ("output_tag", "prefill"))
    made: Guardrails = _field(
        "guardrails", lambda: make_guardrails(data["output_tag"], data["prefill"])
    )
    return made


def _announcements(value: object) -> tuple[Announcement, ...]:
    found: list[Announcement] = []
    for index, item in enumerate(_list(value, "announcements")):
        where = f"announcements[{index}]"
        data = _object(item, where, ("channel", "id", "text"))
        try:
            found.append(make_announcement(data["id"], data["text"], data["channel"]))
        except ConfigError as exc:
            raise SnapshotError(str(exc), field=where) from None
    if len({a.id for a in found}) != len(found):
        raise SnapshotError("two announcements have one id", field="announcements")
    return tuple(found)


def _runner_data(runner: Mapping[str, Any] | None) -> dict[str, Any] | None:
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


def _runner(value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    keys = ("failures", "lineage", "noticed_window", "reported", "strategy")
    data = _object(value, "janitor", keys)
    failures = data["failures"]
    if not isinstance(failures, int) or isinstance(failures, bool) or failures < 0:
        raise SnapshotError("must be a count", field="janitor.failures")
    noticed = data["noticed_window"]
    if noticed is not None and not isinstance(noticed, str):
        raise SnapshotError("must be a window id or null", field="janitor.noticed_window")
    lineage: Lineage | None = None
    if data["lineage"] is not None:
        ids = _object(data["lineage"], "janitor.lineage", ("current", "first", "previous"))
        if not isinstance(ids["current"], str) or not isinstance(ids["first"], str):
            raise SnapshotError("window ids must be strings", field="janitor.lineage")
        if ids["previous"] is not None and not isinstance(ids["previous"], str):
            raise SnapshotError("must be a window id or null", field="janitor.lineage.previous")
        lineage = Lineage(ids["first"], ids["previous"], ids["current"])
    reported: Reported | None = None
    if data["reported"] is not None:
        rep = _object(
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


def _compaction_data(compaction: Compaction) -> dict[str, Any]:
    return {
        "count": compaction.count,
        "digest": compaction.digest.hex(),
        "head": compaction.head.hex(),
        "marks": [mark.hex() for mark in compaction.marks],
        "replacement": copy_json(list(compaction.replacement)),
    }


def _compaction(value: object, where: str) -> Compaction:
    data = _object(value, where, ("count", "digest", "head", "marks", "replacement"))
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
        replacement=_messages(data["replacement"], f"{where}.replacement"),
        marks=tuple(
            digest(mark, f"marks[{i}]") for i, mark in enumerate(_list(data["marks"], "marks"))
        ),
        running=None,
    )
