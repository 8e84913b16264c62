"""Conditions on an entry that a backend can test where the entries are (`read_recent_where`).

A caller that filters entries by their JSON content (the LangGraph store's `search(filter=…)`)
describes the filter with these nodes, and a backend that has `read_recent_where` renders them
in its own query language (SQLite: JSON1, see `backends/sqlite/_where.py`), so only the
matching entries are read and paged. Every node is two-valued: it holds or it does not, never
"unknown" (a missing field makes a comparison false, and `Not` of it true). `matches` is the
reference: the same conditions tested in Python.

The content is read as JSON; an entry whose content is not JSON matches no condition on it. A
`Field` walks into the content from its top: a `str` step is an object member, an `int` step an
array element; a field is missing when a step finds no object member (or array element) there.
A `str` step uses `[A-Za-z0-9_.-]` only (`is_label`), so every backend can address it exactly.

Not offered on PostgreSQL yet: PostgreSQL 15 has no cast of TEXT to `jsonb` that fails softly
(`IS JSON` and `pg_input_is_valid` are 16's), so one entry that is not JSON would fail the query.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from contextchef.store.backend import StoredEntry

__all__ = [
    "All",
    "Compare",
    "Condition",
    "Field",
    "IfPresent",
    "Is",
    "JsonKind",
    "Length",
    "NameStarts",
    "Not",
    "Number",
    "is_label",
    "is_operand",
    "matches",
    "reads_content",
]

Field = tuple[str | int, ...]
"""A path into the content: object members (`str`) and array elements (`int`)."""

JsonKind = Literal["object", "array", "string", "number", "boolean", "null"]

Number = int | float
"""A number a condition compares with: under 2**63 in size (`is_operand`)."""

_LABEL = re.compile(r"[A-Za-z0-9_.\-]+")
_INT64 = 2**63


def is_label(step: object) -> bool:
    """Whether `step` can be a `str` step of a `Field`."""
    return isinstance(step, str) and _LABEL.fullmatch(step) is not None


def is_operand(value: object) -> bool:
    """Whether `value` is an operand `Compare` takes: a `str`, a bool (0 or 1, as Python
    compares it), or a number under 2**63 in size. (SQLite reads a JSON integer beyond 64 bits
    as the nearest double, which stays on the same side of any such number as the integer.)"""
    if isinstance(value, bool | str):
        return True
    if isinstance(value, int | float):
        return -_INT64 < value < _INT64 and value - value == 0  # finite
    return False


@dataclass(frozen=True, slots=True)
class Is:
    """The field is present and of one of `kinds`."""

    field: Field
    kinds: frozenset[JsonKind]


@dataclass(frozen=True, slots=True)
class Compare:
    """The field is present, of the operand's kind and compares so with it: a `str` operand
    with a JSON string (by code point), a `Number` with a JSON number or boolean (true as 1,
    false as 0: Python's `True == 1`)."""

    field: Field
    op: Literal["=", "<", "<=", ">", ">="]
    operand: str | Number


@dataclass(frozen=True, slots=True)
class Length:
    """The field is an array of `count` elements."""

    field: Field
    count: int


@dataclass(frozen=True, slots=True)
class IfPresent:
    """`then` when the field is present (JSON null included), else `otherwise`."""

    field: Field
    then: Condition
    otherwise: Condition


@dataclass(frozen=True, slots=True)
class Not:
    condition: Condition


@dataclass(frozen=True, slots=True)
class All:
    """Every one of `conditions` (none: always)."""

    conditions: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class NameStarts:
    """The entry's name (the last segment of its path) starts with `text`."""

    text: str


Condition = Is | Compare | Length | IfPresent | Not | All | NameStarts


# -- the reference: the same conditions tested in Python ----------------------------------------

_MISSING: Any = object()
_KIND: dict[type, JsonKind] = {
    dict: "object",
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def matches(condition: Condition, path: str, entry: StoredEntry) -> bool:
    """Whether `condition` holds for the entry at `path`: what a backend's query answers, in
    Python (for the entries a backend keeps where its query language does not reach)."""
    try:
        value = json.loads(entry.content)
    except ValueError:
        if reads_content(condition):
            return False  # not JSON: no condition on the content holds, nor its `Not`
        value = _MISSING
    return _holds(condition, path[path.rfind("/") + 1 :], value)


def reads_content(condition: Condition) -> bool:
    """Whether `condition` tests the content (anything but the entry's name)."""
    if isinstance(condition, All):
        return any(reads_content(c) for c in condition.conditions)
    if isinstance(condition, Not):
        return reads_content(condition.condition)
    return not isinstance(condition, NameStarts)


def _at(value: Any, field: Field) -> Any:
    for step in field:
        if isinstance(step, str) and type(value) is dict:
            value = value.get(step, _MISSING)
        elif isinstance(step, int) and type(value) is list and 0 <= step < len(value):
            value = value[step]
        else:
            return _MISSING
    return value


def _holds(condition: Condition, name: str, value: Any) -> bool:
    if isinstance(condition, NameStarts):
        return name.startswith(condition.text)
    if isinstance(condition, All):
        return all(_holds(c, name, value) for c in condition.conditions)
    if isinstance(condition, Not):
        return not _holds(condition.condition, name, value)
    found = _at(value, condition.field)
    if isinstance(condition, IfPresent):
        branch = condition.then if found is not _MISSING else condition.otherwise
        return _holds(branch, name, value)
    if found is _MISSING:
        return False
    kind = _KIND.get(type(found))
    if isinstance(condition, Is):
        return kind in condition.kinds
    if isinstance(condition, Length):
        return kind == "array" and len(found) == condition.count
    wanted: tuple[JsonKind, ...] = (
        ("string",) if isinstance(condition.operand, str) else ("number", "boolean")
    )
    return kind in wanted and _OPS[condition.op](found, condition.operand)
