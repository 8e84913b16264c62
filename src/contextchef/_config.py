"""Typed configuration from plain dicts: every config option accepts a dict or its dataclass.

`options(cls, value, name)` turns `None`, an instance of `cls` or a dict into an instance, and
refuses unknown keys by name, listing the known ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from contextchef.errors import ConfigError

__all__ = ["options"]

C = TypeVar("C")


def options(cls: type[C], value: C | Mapping[str, Any] | None, name: str) -> C:
    """`cls` built from `value`; `ConfigError` naming `name` for anything it cannot take."""
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name} must be a dict or a {cls.__name__}")
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = set(value) - known
    if unknown:
        raise ConfigError(f"unknown {name} option(s) {sorted(unknown)}; known: {sorted(known)}")
    return cls(**value)
