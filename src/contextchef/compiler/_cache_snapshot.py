"""The prompt-cache section of a snapshot: what each target remembers between compiles that
changes the next payload's bytes.

That is the memory block as last rendered into the target's prefix (with the `<entry>` of each
key and its refresh generation: later changes go to the tail as deltas against it), where the
previous request's stable prefix ended (the automatic Anthropic breakpoints keep that mark for
a while), and the window lineage it was rendered in. The ledger of the previous payload's parts
only feeds `meta.cache` figures, so a restored chef starts it afresh.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextchef.compiler.state import CompileRuntime
from contextchef.errors import SnapshotError
from contextchef.memory.delta import MemoryBaseline

__all__ = ["cache_section", "read_cache_section", "restore_cache_section"]

Remembered = dict[str, tuple[MemoryBaseline | None, int | None, str | None]]


def cache_section(runtime: CompileRuntime) -> dict[str, Any]:
    """The section as JSON data."""
    targets: dict[str, Any] = {}
    for name, remembered in sorted(runtime.targets.items()):
        baseline = remembered.baseline
        targets[name] = {
            "baseline": None
            if baseline is None
            else {
                "block": baseline.block,
                "entries": dict(sorted(baseline.entries.items())),
                "generation": baseline.generation,
            },
            "stable_end": remembered.stable_end,
            "window": remembered.window,
        }
    return {"generation": runtime.memory_generation, "targets": targets}


def _fail(message: str, where: str) -> SnapshotError:
    return SnapshotError(message, field=f"prompt_cache.{where}" if where else "prompt_cache")


def _integer(value: object, where: str, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _fail(f"must be a non-negative integer, got {value!r}", where)
    return value


def _baseline(value: object, where: str) -> MemoryBaseline | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) != {"block", "entries", "generation"}:
        raise _fail("must be null or {block, entries, generation}", where)
    block, entries = value["block"], value["entries"]
    if not isinstance(block, str):
        raise _fail("must be a string", f"{where}.block")
    if not isinstance(entries, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in entries.items()
    ):
        raise _fail("must map keys to strings", f"{where}.entries")
    generation = _integer(value["generation"], f"{where}.generation")
    assert generation is not None
    return MemoryBaseline(block, dict(entries), generation)


def read_cache_section(data: object) -> tuple[int, Remembered]:
    """The section checked: the refresh generation and, per target, its baseline, stable end
    and window. `SnapshotError` naming the field otherwise; an empty section is a fresh chef."""
    if not isinstance(data, Mapping):
        raise _fail("must be an object", "")
    if not data:
        return 0, {}
    if set(data) != {"generation", "targets"}:
        raise _fail("must be {generation, targets}", "")
    generation = _integer(data["generation"], "generation")
    targets = data["targets"]
    if not isinstance(targets, Mapping):
        raise _fail("must be an object", "targets")
    remembered: Remembered = {}
    for name, item in targets.items():
        where = f"targets.{name}"
        if not isinstance(item, Mapping) or set(item) != {"baseline", "stable_end", "window"}:
            raise _fail("must be {baseline, stable_end, window}", where)
        window = item["window"]
        if window is not None and not isinstance(window, str):
            raise _fail("must be a string or null", f"{where}.window")
        remembered[str(name)] = (
            _baseline(item["baseline"], f"{where}.baseline"),
            _integer(item["stable_end"], f"{where}.stable_end", optional=True),
            window,
        )
    assert generation is not None
    return generation, remembered


def restore_cache_section(runtime: CompileRuntime, generation: int, targets: Remembered) -> None:
    """Make `runtime` remember what the section holds (and nothing of its own past)."""
    runtime.memory_generation = generation
    runtime.targets.clear()
    for name, (baseline, stable_end, window) in targets.items():
        remembered = runtime.target_cache(name)
        remembered.baseline, remembered.stable_end, remembered.window = (
            baseline,
            stable_end,
            window,
        )
