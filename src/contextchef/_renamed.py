"""Names that changed, kept working for a while with a `DeprecationWarning` that names the new one.

The first Python names followed the TypeScript reference (`janitor=`, `vfs=`, `JanitorConfig`);
they now say what the thing is. A module that kept an old name routes its `__getattr__` here.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping

__all__ = ["RENAMED_OPTIONS", "deprecated_names", "warn_renamed"]

RENAMED_OPTIONS: Mapping[str, str] = {"janitor": "budget", "vfs": "offload"}
"""Old chef option → its name now."""


def warn_renamed(old: str, new: str, *, stacklevel: int) -> None:
    """One `DeprecationWarning` pointing at the caller's line (`stacklevel` as in `warnings`)."""
    warnings.warn(
        f"{old} is renamed {new}; the old name will be removed in a later release",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


def deprecated_names(
    module: str, renamed: Mapping[str, tuple[str, object]]
) -> Callable[[str], object]:
    """A module `__getattr__` serving each old name (old → (new name, object)) with a warning."""

    def __getattr__(name: str) -> object:
        found = renamed.get(name)
        if found is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new, value = found
        warn_renamed(f"{module}.{name}", f"{module}.{new}", stacklevel=2)
        return value

    return __getattr__
