"""Manual offload and recall: `store.offload(content)` and `store.resolve(uri)`.

The chef offloads long tool results at compile; a host may offload content of its own (a file it
read, a large string) the same way and hand the model the marker. What the marker says depends
on the chef (its `offload=` options and its tool vocabulary), so the store does not write it: the
chef that opens the store installs an `Offloader` on its `StoreCore` (the last chef opened over
a store, when several share one), and `offload` runs that chef's flow. `resolve` needs no chef:
it reads the content a `context://` URI names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from contextchef._effects import Flow
from contextchef.errors import ConfigError, InvalidPathError
from contextchef.store.core import StoreCore
from contextchef.store.ops import Op
from contextchef.store.paths import parse_uri

__all__ = ["Offloaded", "Offloader", "offload_flow", "resolve_flow"]


@dataclass(frozen=True, slots=True)
class Offloaded:
    """Content stored whole, content-addressed: `uri` (`namespace`, `path`) is where it is,
    `marker` the text to give the model in its place (the preview a long tool result gets:
    head, tail, the error lines of the middle, and how to read the rest), `chars` its length."""

    uri: str
    namespace: str
    path: str
    marker: str
    chars: int


class Offloader(Protocol):
    """What a chef installs on its store (`StoreCore.offloader`) to offload with its options."""

    def offload(
        self,
        core: StoreCore,
        content: str,
        name: str | None,
        meta: Mapping[str, Any] | None,
    ) -> Flow[Offloaded]: ...


def offload_flow(
    core: StoreCore, content: str, name: str | None, meta: Mapping[str, Any] | None
) -> Flow[Offloaded]:
    """Offload `content` with the chef's offloader; `ConfigError` on a store no chef opened."""
    offloader: Offloader | None = core.offloader
    if offloader is None:
        raise ConfigError(
            "offload() needs a chef's store: the marker is written with the chef's offload= "
            "options and tool vocabulary (use chef.store.offload)"
        )
    return (yield from offloader.offload(core, content, name, meta))


def resolve_flow(core: StoreCore, uri: str) -> Op[str | None]:
    """The content `uri` names, or None when nothing is stored there; `InvalidPathError` for
    a string that is not a `context://` URI."""
    address = parse_uri(uri) if isinstance(uri, str) else None
    if address is None:
        raise InvalidPathError(f"not a context:// URI: {uri!r}")
    entry = yield from core.get(address.ns, address.path)
    return None if entry is None else entry.content
