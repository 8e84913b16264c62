"""Lazy exports for a package `__init__` (PEP 562): a name's module is imported on first use.

`import contextchef` (or any submodule, which runs the package `__init__` first) then costs
what the process needs, not the whole public API. A package lists its exports by home module,
the same pairs its `if TYPE_CHECKING:` imports spell out for type checkers and IDEs (a test
keeps the two equal):

    __getattr__, __dir__ = lazy_exports(__name__, globals(), {"pkg.mod": ("Name",)})

The first `pkg.Name` (or `from pkg import Name`) imports `pkg.mod`, binds `Name` in the
package's namespace (later reads skip `__getattr__`) and returns it; an error importing the
module (`MissingDependencyError` naming the extra, say) surfaces unchanged. `renamed` serves old
names (old → new) with the `DeprecationWarning` of `_renamed`. A public submodule is served on
first use too, as PEP 562's own example does: `import contextchef` then
`contextchef.errors.StoreError` kept working when the package stopped importing everything.

A name that is also a submodule of its home (`contextchef.selection.anchored`) is taken from
the module defining it: once that submodule is imported, the home's attribute is the module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, MutableMapping

from contextchef._renamed import warn_renamed

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    namespace: MutableMapping[str, object],
    homes: Mapping[str, Iterable[str]],
    *,
    renamed: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package` (`namespace` is its `globals()`)
    for the names of `homes` (home module → names it exports)."""
    home_of = {name: module for module, names in homes.items() for name in names}
    old_names = dict(renamed or {})

    def __getattr__(name: str) -> object:
        home = home_of.get(name)
        if home is not None:
            value: object = getattr(importlib.import_module(home), name)
            namespace[name] = value
            return value
        new = old_names.get(name)
        if new is not None:
            warn_renamed(f"{package}.{name}", f"{package}.{new}", stacklevel=2)
            return __getattr__(new)
        if not name.startswith("_"):
            try:
                return importlib.import_module(f"{package}.{name}")  # binds it in `namespace`
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise  # the submodule exists but needs something missing
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *home_of})

    return __getattr__, __dir__
