"""Per-namespace eviction: the policy, the sweep, and the typed report of what it did.

Eviction is a mechanism, never automatic: `Store.cleanup(ns)` runs one sweep. Entries older
than `max_age` go first (reason `max_age`); then the least recently used entries go, one at a
time, while the namespace holds more than `max_files` entries or more than `max_bytes` UTF-8
bytes (reason `max_files` when the count cap is the one exceeded, else `max_bytes`).

"Recently used" is the latest of the entry's persisted `accessed_at` (backends with the `touch`
capability keep it across restarts), the time this process last read it, and its
`updated_at`/`created_at`: a fresh write counts as a use. Ties go to the smaller path, so the
same state always evicts the same entries. The sweep works from `list()`, so it sees every
entry the backend holds, not only the ones this process touched.

A delete that raises is recorded in `CleanupReport.failed` and the sweep moves on; the entry
still counts against the caps, so the next candidate is evicted in its place.

`StoreCore.cleanup` runs `sweep_flow`: the namespace's policy (with the call's caps), the pending
read times written first, then `cleanup_flow`; the evicted entries leave the semantic index and
the store's `on_evicted` hooks hear the report.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, fields
from typing import Any, Literal, Protocol, TypedDict, Unpack

from contextchef._effects import Emit, Flow
from contextchef.errors import ConfigError
from contextchef.store.backend import ListedEntry, StoredEntry
from contextchef.store.indexing import IndexConfig
from contextchef.store.ops import BackendOps, Op
from contextchef.store.paths import URI_PREFIX, validate_namespace
from contextchef.store.pending import Pending

__all__ = [
    "Caps",
    "CleanupReport",
    "Evicted",
    "EvictionFailure",
    "EvictionPolicy",
    "EvictionReason",
    "cleanup_flow",
    "sweep_flow",
]

logger = logging.getLogger("contextchef.store.eviction")

EvictionReason = Literal["max_age", "max_files", "max_bytes"]


class Caps(TypedDict, total=False):
    """Per-call overrides of an `EvictionPolicy` (`cleanup(ns, max_files=…)`); None = keep."""

    max_files: float | None
    max_bytes: float | None
    max_age: float | None


@dataclass(frozen=True, slots=True)
class EvictionPolicy:
    """Caps for one namespace; `None` means no cap, `0` evicts everything, `inf` disables."""

    max_files: float | None = None
    """Most entries the namespace keeps."""
    max_bytes: float | None = None
    """Most UTF-8 bytes of content the namespace keeps."""
    max_age: float | None = None
    """Seconds after `created_at` past which an entry is evicted."""

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"eviction {spec.name} must be a number, got {value!r}")
            if math.isnan(value) or value < 0:
                raise ConfigError(f"eviction {spec.name} must be non-negative, got {value!r}")

    @classmethod
    def coerce(cls, value: EvictionPolicy | Mapping[str, Any]) -> EvictionPolicy:
        """Accept a policy or a plain dict such as `{"max_files": 500}`."""
        if isinstance(value, EvictionPolicy):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"an eviction policy must be a mapping, got {value!r}")
        known = {spec.name for spec in fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            listing = ", ".join(sorted(known))
            raise ConfigError(f"unknown eviction option(s) {', '.join(unknown)}; known: {listing}")
        return cls(**value)

    def override(self, **caps: Unpack[Caps]) -> EvictionPolicy:
        """This policy with the caps given (not `None`) replaced, field by field."""
        given = {name: value for name, value in caps.items() if value is not None}
        if not given:
            return self
        current = {spec.name: getattr(self, spec.name) for spec in fields(self)}
        return self.coerce({**current, **given})  # rejects unknown names as ConfigError


@dataclass(frozen=True, slots=True)
class Evicted:
    """One entry the sweep deleted, and why."""

    path: str
    uri: str
    reason: EvictionReason
    bytes: int
    created_at: float | None
    last_used_at: float | None


@dataclass(frozen=True, slots=True)
class EvictionFailure:
    """An entry the sweep tried to delete; the backend raised `error`."""

    path: str
    uri: str
    reason: EvictionReason
    error: Exception


@dataclass(frozen=True, slots=True)
class CleanupReport:
    """What one `cleanup()` sweep evicted and what it failed to evict."""

    namespace: str
    evicted: tuple[Evicted, ...] = ()
    failed: tuple[EvictionFailure, ...] = ()

    @property
    def evicted_bytes(self) -> int:
        return sum(item.bytes for item in self.evicted)

    def count(self, reason: EvictionReason) -> int:
        """How many entries were evicted for `reason`."""
        return sum(1 for item in self.evicted if item.reason == reason)

    @property
    def paths(self) -> list[str]:
        """Evicted paths, in eviction order."""
        return [item.path for item in self.evicted]


@dataclass(slots=True)
class _Candidate:
    path: str
    bytes: int
    created_at: float | None
    last_used_at: float


def _number(meta: Mapping[str, Any], key: str) -> float | None:
    value = meta.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _candidate(listed: ListedEntry, seen: Mapping[str, float]) -> _Candidate:
    meta = listed.meta
    created = _number(meta, "created_at")
    times = [
        value
        for value in (
            _number(meta, "accessed_at"),
            _number(meta, "updated_at"),
            created,
            seen.get(listed.path),
        )
        if value is not None
    ]
    size = meta.get("bytes")
    return _Candidate(
        path=listed.path,
        bytes=size if isinstance(size, int) and not isinstance(size, bool) else 0,
        created_at=created,
        last_used_at=max(times, default=0.0),
    )


def cleanup_flow(
    ops: BackendOps,
    ns: str,
    policy: EvictionPolicy,
    now: float,
    seen: MutableMapping[str, float],
) -> Op[CleanupReport]:
    """One sweep of `ns` under `policy`; `seen` holds this process's read times, by path."""
    listed = yield from ops.list(ns, "")
    candidates = [_candidate(item, seen) for item in listed]
    evicted: list[Evicted] = []
    failed: list[EvictionFailure] = []

    def evict(item: _Candidate, reason: EvictionReason) -> Op[bool]:
        uri = f"{URI_PREFIX}{ns}/{item.path}"
        try:
            deleted = yield from ops.delete(ns, item.path)
        except Exception as exc:
            logger.warning("eviction of %s (%s) failed: %s", uri, reason, exc)
            failed.append(EvictionFailure(item.path, uri, reason, exc))
            return False
        seen.pop(item.path, None)
        if deleted:
            evicted.append(
                Evicted(item.path, uri, reason, item.bytes, item.created_at, item.last_used_at)
            )
        else:
            logger.debug("%s vanished before eviction", uri)
        return True

    survivors: list[_Candidate] = []
    for item in sorted(candidates, key=lambda c: (c.created_at or 0.0, c.path)):
        expired = (
            policy.max_age is not None
            and item.created_at is not None
            and now - item.created_at > policy.max_age
        )
        if not expired or not (yield from evict(item, "max_age")):
            survivors.append(item)

    count = len(survivors)
    total = sum(item.bytes for item in survivors)
    failed_paths = {failure.path for failure in failed}
    for item in sorted(survivors, key=lambda c: (c.last_used_at, c.path)):
        over_files = policy.max_files is not None and count > policy.max_files
        over_bytes = policy.max_bytes is not None and total > policy.max_bytes
        if not (over_files or over_bytes):
            break
        if item.path in failed_paths:
            continue
        if (yield from evict(item, "max_files" if over_files else "max_bytes")):
            count -= 1
            total -= item.bytes
    return CleanupReport(ns, tuple(evicted), tuple(failed))


class StoreCore(Protocol):
    """What `sweep_flow` uses of `contextchef.store.core.StoreCore` (which calls it; a protocol,
    so that this module does not import the one that imports it)."""

    ops: BackendOps
    clock: Callable[[], float]
    eviction: dict[str, EvictionPolicy]
    index: IndexConfig | None
    on_evicted: list[Callable[[CleanupReport], Any]]
    _pending: Pending

    def _open_write(self) -> Op[None]: ...
    def _index(self, ns: str, entries: Mapping[str, StoredEntry | None]) -> Op[None]: ...


def sweep_flow(core: StoreCore, ns: str, **caps: Unpack[Caps]) -> Flow[CleanupReport]:
    """See `StoreCore.cleanup`."""
    validate_namespace(ns)
    policy = core.eviction.get(ns, EvictionPolicy()).override(**caps)
    yield from core._open_write()  # the sweep decides on persisted times too
    report = yield from cleanup_flow(
        core.ops, ns, policy, core.clock(), core._pending.seen.setdefault(ns, {})
    )
    if report.evicted and core.index is not None:
        yield from core._index(ns, {item.path: None for item in report.evicted})
    if report.evicted and core.on_evicted:
        yield Emit(tuple(core.on_evicted), report)
    return report
