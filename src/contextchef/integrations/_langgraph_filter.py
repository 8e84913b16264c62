"""LangGraph's search filters and namespace conditions, as pure functions.

A filter maps a key to a wanted value or to operators (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`,
`$lte`). A key is a dotted path into the value (`"user.access-level"` reads
`value["user"]["access-level"]`), as `SqliteStore` and `PostgresStore` read it; a key outside
`[A-Za-z0-9_.-]` is refused with `SqliteStore`'s `ValueError` before anything is read. A wanted
dict without operators matches a dict holding at least those fields; a wanted list matches an
equal list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from contextchef.errors import MissingDependencyError

try:
    from langgraph.store.base import MatchCondition
except ImportError as exc:  # pragma: no cover - exercised by the runtime-only install gate
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = ["check_filter", "matches_filter", "matches_namespace"]

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
