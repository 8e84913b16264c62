"""Memory's snapshots: every stored entry and the turn count as JSON data, and back.

A snapshot holds the entries as stored (expired ones included, meta verbatim, so each keeps
its place in insertion order and its importance) and the turn counter with the marker of the
user message that last counted. Restoring makes memory hold exactly that; no events fire.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from contextchef._effects import Flow
from contextchef.errors import ConfigError
from contextchef.memory.entry import MEMORY_NAMESPACE
from contextchef.memory.turns import TurnCounter, marker_data, parse_marker
from contextchef.store.backend import StoredEntry
from contextchef.store.core import StoreCore
from contextchef.store.paths import validate_entry_path

__all__ = ["parse_snapshot", "restore_flow", "snapshot_data", "snapshot_flow"]

NS = MEMORY_NAMESPACE


def snapshot_flow(store: StoreCore, counter: TurnCounter) -> Flow[dict[str, Any]]:
    yield from counter.load()
    stored = yield from store.entries(NS, "")
    data = snapshot_data(stored, counter.turn)
    if (marker := marker_data(counter.marker)) is not None:
        data["turn_marker"] = marker
    return data


def restore_flow(
    store: StoreCore, counter: TurnCounter, data: Mapping[str, Any] | None
) -> Flow[None]:
    entries, turn = parse_snapshot(data)
    marker = parse_marker(data.get("turn_marker")) if data is not None else None
    if store.supports("restore", NS):
        yield from store.restore(NS, entries)
    else:
        for listed in (yield from store.list(NS, "")):
            yield from store.delete(NS, listed.path)
        for key, entry in entries.items():
            yield from store.put(NS, key, entry.content, entry.meta)
    yield from counter.save(turn, marker)


def snapshot_data(stored: Mapping[str, StoredEntry], turn: int) -> dict[str, Any]:
    """`Memory.snapshot()`'s JSON form of the stored entries and the turn counter."""
    return {
        "entries": {
            key: {"content": entry.content, "meta": json.loads(json.dumps(dict(entry.meta)))}
            for key, entry in stored.items()
        },
        "turn": turn,
        "version": 1,
    }


def parse_snapshot(data: Mapping[str, Any] | None) -> tuple[dict[str, StoredEntry], int]:
    """The entries and turn counter of `snapshot_data`'s output (None: empty, turn 0)."""
    if data is None:
        return {}, 0
    raw = data.get("entries") if isinstance(data, Mapping) else None
    turn = data.get("turn", 0) if isinstance(data, Mapping) else None
    if not isinstance(raw, Mapping) or not isinstance(turn, int) or isinstance(turn, bool):
        raise ConfigError("Memory.restore() takes what Memory.snapshot() returned")
    entries: dict[str, StoredEntry] = {}
    for key, item in raw.items():
        if not isinstance(item, Mapping) or not isinstance(item.get("content"), str):
            raise ConfigError(f"memory snapshot entry {key!r} has no string 'content'")
        entries[validate_entry_path(key)] = StoredEntry(item["content"], item.get("meta", {}))
    return entries, turn
