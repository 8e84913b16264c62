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

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from contextchef._compaction import Compaction
from contextchef._jsonvalue import NotJson, copy_json, strict_json
from contextchef._snapshot_fields import (
    as_field_error,
    compaction_data,
    guardrails_data,
    read_announcements,
    read_compaction,
    read_dynamic_state,
    read_guardrails,
    read_list,
    read_messages,
    read_repairs,
    read_runner,
    runner_data,
    state_data,
)
from contextchef.adapters import normalize_tools
from contextchef.compiler.pipeline import CompileState
from contextchef.errors import SnapshotError, SnapshotTooNewError
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
    "prompt_cache",
    "repairs",
    "skill",
    "system_prompt",
    "tools",
)


_OPTIONAL = frozenset({"prompt_cache"})
"""Fields a snapshot of format version 1 may lack (written before they existed)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A deep copy of a chef's state; restoring it makes the next compile identical.

    `state` holds the layers; `runner` the overflow runner's state (None without one);
    `memory` the memory entries and turn counter (None without memory); `compactions` the
    records `set_history` re-applies to a host's reloaded history; `pruner` the pruner's own
    section (JSON data); `pending_new_context` whether `request_new_context()` was pending;
    `prompt_cache` what each target remembers of its previous payload that shapes the next one
    (the memory block in its prefix, its breakpoints, its window).
    """

    state: CompileState
    label: str | None = None
    runner: Mapping[str, Any] | None = None
    memory: Mapping[str, Any] | None = None
    compactions: tuple[Compaction, ...] = ()
    pruner: Mapping[str, Any] = field(default_factory=dict)
    pending_new_context: bool = False
    prompt_cache: Mapping[str, Any] = field(default_factory=dict)

    # -- to JSON -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as JSON data (every value a dict, list, string, number, bool or None)."""
        state = self.state
        data = {
            "announcements": [
                {"channel": a.channel, "id": a.id, "text": a.text} for a in state.announcements
            ],
            "compactions": [compaction_data(c) for c in self.compactions],
            "dynamic_state": state_data(state.state),
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "guardrails": guardrails_data(state.guardrails),
            "history": copy_json(list(state.history)),
            "janitor": runner_data(self.runner),
            "label": self.label,
            "memory": copy_json(dict(self.memory)) if self.memory is not None else None,
            "pending_new_context": self.pending_new_context,
            "pruner": copy_json(dict(self.pruner)),
            "prompt_cache": copy_json(dict(self.prompt_cache)),
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
        missing = [name for name in _FIELDS if name not in data and name not in _OPTIONAL]
        if missing:
            raise SnapshotError("missing", field=missing[0])
        foreign = sorted(set(data) - set(_FIELDS))
        if foreign:
            raise SnapshotError("unknown field", field=foreign[0])
        if data["format"] != FORMAT:
            raise SnapshotError(f"must be {FORMAT!r}, got {data['format']!r}", field="format")
        system_prompt = read_messages(data["system_prompt"], "system_prompt")
        if any(message["role"] != "system" for message in system_prompt):
            raise SnapshotError(
                "holds a message that is not a system message", field="system_prompt"
            )
        tools = as_field_error(
            "tools", lambda: tuple(normalize_tools(read_list(data["tools"], "tools")))
        )
        state = CompileState(
            system_prompt=system_prompt,
            history=read_messages(data["history"], "history"),
            repairs=read_repairs(data["repairs"]),
            state=read_dynamic_state(data["dynamic_state"], schemas),
            guardrails=read_guardrails(data["guardrails"]),
            tools=tools,
            skill=(ActiveSkill.from_dict(data["skill"]) if data["skill"] is not None else None),
            announcements=read_announcements(data["announcements"]),
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
        prompt_cache = data.get("prompt_cache", {})
        if not isinstance(prompt_cache, Mapping):
            raise SnapshotError("must be an object", field="prompt_cache")
        memory = data["memory"]
        if memory is not None and not isinstance(memory, Mapping):
            raise SnapshotError("must be an object or null", field="memory")
        return cls(
            state=state,
            label=label,
            runner=read_runner(data["janitor"]),
            memory=copy_json(dict(memory)) if memory is not None else None,
            compactions=tuple(
                read_compaction(item, f"compactions[{i}]")
                for i, item in enumerate(read_list(data["compactions"], "compactions"))
            ),
            pruner=copy_json(dict(pruner)),
            pending_new_context=pending,
            prompt_cache=copy_json(dict(prompt_cache)),
        )

    def copy(self) -> Snapshot:
        """A deep copy (restoring never shares mutable data with the snapshot)."""
        return replace(
            self,
            state=copy_state(self.state),
            runner=copy_runner(self.runner),
            memory=copy_json(dict(self.memory)) if self.memory is not None else None,
            pruner=copy_json(dict(self.pruner)),
            prompt_cache=copy_json(dict(self.prompt_cache)),
        )


def copy_state(state: CompileState) -> CompileState:
    """A copy of `state` that shares no mutable message or tool with it."""
    return replace(
        state,
        system_prompt=tuple(copy_json(m) for m in state.system_prompt),
        history=tuple(copy_json(m) for m in state.history),
        tools=tuple(copy_json(t) for t in state.tools),
        pruner=state.pruner,  # immutable plain data
    )


def copy_runner(runner: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if runner is None:
        return None
    return {key: copy_json(value) for key, value in runner.items()}


def _check_version(data: Mapping[str, Any]) -> None:
    version = data.get("format_version")
    if "format_version" not in data:
        raise SnapshotError("missing", field="format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SnapshotError(f"must be a positive integer, got {version!r}", field="format_version")
    if version > FORMAT_VERSION:
        raise SnapshotTooNewError(version, FORMAT_VERSION)
