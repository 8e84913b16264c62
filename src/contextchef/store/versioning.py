"""Versioned namespaces: the store's side of the `keep_versions` and `history` capabilities.

Which namespaces keep every version of their entries is *configuration*, never a name a backend
knows: a store is built with `versioned=[...]`, or the feature that owns a namespace declares it
(memory declares its own, where the backend can keep versions). `StoreCore.keep_versions`
records the declaration without any I/O, so it works the same over a synchronous and an
async-native backend; `declare_flow` hands the pending ones to the backend (its
`keep_versions(ns)`) at the start of the next flow that writes, compare-and-swaps or reads
versions. Reads that come first need no declaration: until the backend has heard it, the
entries are where an unversioned namespace keeps them.

`history` on a namespace that keeps no versions raises `StoreCapabilityError`, whose message
says which of the two cases it is: the backend can keep versions but nobody declared the
namespace, or the backend keeps none at all (no `keep_versions` capability).
"""

from __future__ import annotations

from collections.abc import Callable

from contextchef.errors import StoreCapabilityError
from contextchef.store.backend import Capability, StoredEntry
from contextchef.store.ops import BackendOps, Op

__all__ = ["declare_flow", "history_flow", "keep_versions", "no_versions_error"]


def keep_versions(
    ns: str,
    supports: Callable[[Capability, str], bool],
    backend: object,
    versioned: set[str],
    undeclared: set[str],
    known: dict[tuple[str, str], bool],
    *,
    required: bool,
) -> bool:
    """Declare the namespace `ns` versioned, in memory: added to `versioned` (those declared
    through the store) and `undeclared` (for `declare_flow`), and `history` noted as supported
    in `known` (`StoreCore`'s capability answers). True when `ns` keeps versions from now on;
    a backend that keeps none raises `StoreCapabilityError`, or, when not `required`, gives
    False. `supports` is `StoreCore.supports`."""
    if ns in versioned:
        return True
    if not supports("keep_versions", ns):
        if supports("history", ns):
            return True  # versioned by the backend itself, without being told
        if required:
            raise no_versions_error(backend, ns, supports("keep_versions", ns))
        return False
    versioned.add(ns)
    undeclared.add(ns)
    known[("history", ns)] = True
    return True


def declare_flow(ops: BackendOps, pending: set[str]) -> Op[None]:
    """Send `keep_versions(ns)` for each namespace of `pending` (sorted), removing each from
    `pending` once the backend accepted it (a failure leaves it pending, to be sent again)."""
    for ns in sorted(pending):
        yield from ops.keep_versions(ns)
        pending.discard(ns)


def no_versions_error(backend: object, ns: str, can_keep: bool) -> StoreCapabilityError:
    """The error for reading the versions of `ns`, which keeps none; `can_keep`: whether the
    backend could keep them if `ns` were declared versioned."""
    if can_keep:
        hint = (
            f"{ns!r} is not a versioned namespace: declare it with "
            f"Store(backend, versioned=[{ns!r}]) or store.keep_versions({ns!r})."
        )
        return StoreCapabilityError(ns, ["history"], hint=hint)
    hint = f"{type(backend).__name__} keeps no versions of its entries."
    return StoreCapabilityError(ns, ["keep_versions", "history"], hint=hint)


def history_flow(
    ops: BackendOps,
    ns: str,
    path: str,
    pending: set[str],
    supports: Callable[[Capability, str], bool],
) -> Op[list[StoredEntry]]:
    """Every version of `ns/path` (`path` spelled as stored), oldest first, once the pending
    declarations are sent; `StoreCapabilityError` when `ns` keeps no versions. `supports` is
    `StoreCore.supports`."""
    if not (supports("history", ns) or supports("keep_versions", ns)):
        raise no_versions_error(ops.backend, ns, supports("keep_versions", ns))
    if pending:
        yield from declare_flow(ops, pending)
    try:  # the backend knows best: another store may have declared `ns` versioned
        return (yield from ops.history(ns, path))
    except StoreCapabilityError:
        raise no_versions_error(ops.backend, ns, supports("keep_versions", ns)) from None
