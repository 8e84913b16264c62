"""LangGraph's search filters and namespace conditions, as pure functions.

A filter maps a key to a wanted value or to operators (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`,
`$lte`). A key is a dotted path into the value (`"user.access-level"` reads
`value["user"]["access-level"]`), as `SqliteStore` and `PostgresStore` read it; a key outside
`[A-Za-z0-9_.-]` is refused with `SqliteStore`'s `ValueError` before anything is read. A wanted
dict without operators matches a dict holding at least those fields; a wanted list matches an
equal list.

`pushdown` translates a filter into conditions a backend tests where the entries are
(`contextchef.store.where`), each key exactly or not at all: what it cannot say exactly (a
non-finite or 65-bit number, an `$eq` of a dict or list, an order against a list, a dict or
None, a nested key outside `[A-Za-z0-9_.-]`) stays in the filter that `matches_filter` checks.

`text_needles` gives what the stored JSON text of every value passing a filter must contain, so a
search skips most non-matching entries without decoding them (a necessary condition only: what
passes it is still decoded and checked by `matches_filter`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from contextchef.errors import MissingDependencyError
from contextchef.store import where as w

try:
    from langgraph.store.base import MatchCondition
except ImportError as exc:  # pragma: no cover - exercised by the runtime-only install gate
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = [
    "ITEM",
    "check_filter",
    "matches_filter",
    "matches_namespace",
    "pushdown",
    "text_needles",
]

_FILTER_KEY = re.compile(r"^[a-zA-Z0-9_.-]+$")
_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})
_MISSING = object()


def check_filter(filter: Mapping[str, Any] | None) -> None:
    """Refuse a filter with a key outside `[A-Za-z0-9_.-]` or an unknown operator
    (`ValueError`, with `SqliteStore`'s message for the key)."""
    for key, wanted in (filter or {}).items():
        if not isinstance(key, str) or not _FILTER_KEY.match(key):
            raise ValueError(
                f"Invalid filter key: '{key}'. Filter keys must contain only alphanumeric "
                "characters, underscores, dots, and hyphens."
            )
        if isinstance(wanted, Mapping) and any(str(k).startswith("$") for k in wanted):
            unknown = [op for op in wanted if op not in _OPERATORS]
            if unknown:
                raise ValueError(f"Unsupported operator: {unknown[0]}")


_SCALARS = (str, int, float, bool, type(None))
"""Wanted values compared by equality alone (checked by exact type: no ABC check per item)."""


def _at(value: Any, key: str) -> Any:
    """The field `key` names: a literal top-level key first, else the dotted path."""
    if type(value) is dict:  # what a decoded item is: one lookup
        found = value.get(key, _MISSING)
        if found is not _MISSING or "." not in key:
            return found
    elif isinstance(value, Mapping) and key in value:
        return value[key]
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def matches_filter(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether the item value `value` passes `filter` (checked by `check_filter`)."""
    for key, wanted in (filter or {}).items():
        found = _at(value, key)
        if type(wanted) in _SCALARS:  # `_compare`'s first case, inline: the common filter
            if found is _MISSING or not _same(found, wanted):
                return False
        elif not _compare(found, wanted):
            return False
    return True


_VERBATIM = re.compile(r"[ !#-%(-.0-;=?-\[\]-~]*")
"""Strings every JSON writer spells verbatim between quotes: printable ASCII without `"` and
`\\` (always escaped) and without `/ < > & '` (which some writers escape, though neither `json`
nor orjson, the writers of `_jsondump`, does)."""


def text_needles(filter: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Texts (`"<string>"`) that the JSON text of every value passing `filter` contains: one per
    string the filter wants equal (as a value, an `$eq` operand, or inside a wanted dict or
    list) that `_VERBATIM` spells as written. A value equal to such a string is that string
    (only a `str` equals a `str`), written by `_jsondump` as its characters between quotes."""
    needles: list[str] = []
    for wanted in (filter or {}).values():
        _needles_of(wanted, needles)
    return tuple(dict.fromkeys(needles))


def _needles_of(wanted: Any, needles: list[str]) -> None:
    if type(wanted) is str:
        if _VERBATIM.fullmatch(wanted):
            needles.append(f'"{wanted}"')
    elif isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):  # every operator must hold
            _needles_of(wanted.get("$eq"), needles)  # equality: stricter than a wanted value
        else:  # each wanted field must compare equal
            for item in wanted.values():
                _needles_of(item, needles)
    elif isinstance(wanted, list | tuple):  # each element must compare equal
        for item in wanted:
            _needles_of(item, needles)


def _compare(value: Any, wanted: Any) -> bool:
    if type(wanted) in _SCALARS:
        return value is not _MISSING and _same(value, wanted)
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, Mapping) and all(
            _compare(value.get(k, _MISSING), v) for k, v in wanted.items()
        )
    if value is _MISSING:
        return False
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return _same(value, wanted)


def _same(value: Any, wanted: Any) -> bool:
    return bool(value == wanted)


def _operator(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return value is not _MISSING and _same(value, operand)
    if operator == "$ne":
        return value is _MISSING or not _same(value, operand)
    if value is _MISSING or value is None:
        return False
    try:
        if operator == "$gt":
            return bool(value > operand)
        if operator == "$gte":
            return bool(value >= operand)
        if operator == "$lt":
            return bool(value < operand)
        return bool(value <= operand)
    except TypeError:  # a string against a number, say: no match, as in SQL
        return False


ITEM = w.NameStarts("=")
"""The entries that are items: their name starts with the key mark (see `_langgraph_items`)."""


def pushdown(filter: Mapping[str, Any] | None) -> tuple[w.Condition, dict[str, Any]]:
    """`(condition, rest)`: the entries that are items and pass the keys of `filter` a backend
    can test exactly, and the keys left for `matches_filter` (checked by `check_filter`)."""
    pushed: list[w.Condition] = [ITEM]
    rest: dict[str, Any] = {}
    for key, wanted in (filter or {}).items():
        condition = _key_condition(key, wanted)
        if condition is None:
            rest[key] = wanted
        else:
            pushed.append(condition)
    return w.All(tuple(pushed)), rest


def _key_condition(key: str, wanted: Any) -> w.Condition | None:
    """`_compare(_at(value, key), wanted)` as a condition: the literal key first, then the
    dotted path (as `_at` reads it)."""
    literal = _condition((key,), wanted) if w.is_label(key) else None
    if literal is None or "." not in key:
        return literal
    steps = tuple(key.split("."))
    nested = _condition(steps, wanted) if all(steps) else None
    return None if nested is None else w.IfPresent((key,), literal, nested)


def _condition(field: w.Field, wanted: Any) -> w.Condition | None:
    """`_compare(<field>, wanted)` as a condition, or None when it cannot be said exactly."""
    if type(wanted) in _SCALARS:
        return _equal(field, wanted)
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            ops = [_operator_condition(field, op, operand) for op, operand in wanted.items()]
            return None if None in ops else w.All(tuple(c for c in ops if c is not None))
        if not all(w.is_label(k) for k in wanted):
            return None
        fields = [_condition((*field, k), v) for k, v in wanted.items()]
        if None in fields:
            return None
        return w.All((w.Is(field, frozenset({"object"})), *(c for c in fields if c is not None)))
    if isinstance(wanted, list | tuple):
        elements = [_condition((*field, i), v) for i, v in enumerate(wanted)]
        if None in elements:
            return None
        shape = (w.Is(field, frozenset({"array"})), w.Length(field, len(wanted)))
        return w.All((*shape, *(c for c in elements if c is not None)))
    return None


def _equal(field: w.Field, wanted: Any) -> w.Condition | None:
    """`value == wanted` for a present value and a scalar `wanted`."""
    if wanted is None:
        return w.Is(field, frozenset({"null"}))
    if type(wanted) in _OPERANDS and w.is_operand(wanted):
        return w.Compare(field, "=", wanted)
    return None  # a non-finite or 65-bit number


_ORDER = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
_OPERANDS = (str, int, float, bool)
"""Operands compared in the backend (by exact type: a subclass may compare otherwise)."""


def _operator_condition(field: w.Field, op: str, operand: Any) -> w.Condition | None:
    if op in ("$eq", "$ne"):
        equal = _equal(field, operand) if type(operand) in _SCALARS else None
        return equal if equal is None or op == "$eq" else w.Not(equal)
    order = _ORDER.get(op)
    if order is None or type(operand) not in _OPERANDS or not w.is_operand(operand):
        return None
    return w.Compare(field, order, operand)  # type: ignore[arg-type]


def matches_namespace(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether `namespace` meets a `list_namespaces` prefix/suffix condition (`*` any label)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    elif condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type!r}")
    return all(wanted == "*" or label == wanted for label, wanted in pairs)
