"""Deep-frozen JSON values, for tool definitions that must never change.

A tool definition sits in the provider's cached prefix, so the library hands out one object per
definition, built once at import. `FrozenDict` and `FrozenList` are real `dict` and `list`
subclasses (so `json.dumps`, pydantic and `isinstance` checks treat them as JSON), but every
mutating method raises `TypeError`. `copy.copy` and `copy.deepcopy` return plain, mutable
containers, which is how a caller derives a variant.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "deep_freeze"]

_MESSAGE = "this value is frozen; copy it with copy.deepcopy() to get a mutable one"


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(_MESSAGE)


class FrozenDict(dict[str, Any]):
    """A `dict` that refuses every change."""

    __slots__ = ()

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))


class FrozenList(list[Any]):
    """A `list` that refuses every change."""

    __slots__ = ()

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(value, memo) for value in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))


def deep_freeze(value: Any) -> Any:
    """`value` with every dict and list (recursively) replaced by its frozen twin."""
    if isinstance(value, Mapping):
        return FrozenDict({str(key): deep_freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList(deep_freeze(item) for item in value)
    return value
