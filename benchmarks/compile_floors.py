"""The floors `benchmarks/compile.py` times next to a cold compile and a turn, each from the
state the measured run starts in: the cost of merely serializing the payload; the least a
`set_history` that sees in-place edits can do (`==`); the least CPython can do to read the
history and make the payload (in C, `orjson`); and the floors of this design, which validates
and copies the history (the intake's compiled validator), then makes the payload's containers
in C or by the least Python (`python_floor.py`). See compile.py's docstring for what each says.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Sequence
from typing import Any

import orjson
from python_floor import python_build

from contextchef._intake_core import BATCH, batch_intake_for
from contextchef.messages import MESSAGE_SCHEMA

__all__ = [
    "clock",
    "compare_floor",
    "emptied",
    "floors",
    "median",
    "physical_floor",
    "since",
    "validated_floors",
]


def median(values: list[float]) -> float:
    return statistics.median(values)


clock = time.perf_counter
"""Wall time, as the reference's side measures (`process.hrtime`)."""


def since(start: float) -> float:
    return (clock() - start) * 1000


def floors(payload: Any, repeats: int = 5) -> dict[str, float]:
    """`orjson.dumps` and `json.dumps` of the payload: the cost of merely serializing it."""
    fast: list[float] = []
    slow: list[float] = []
    for _ in range(repeats):
        start = clock()
        body = orjson.dumps(payload)
        fast.append(since(start))
        start = clock()
        json.dumps(payload)
        slow.append(since(start))
    return {"orjson_ms": median(fast), "json_ms": median(slow), "payload_bytes": len(body)}


def compare_floor(host: list[dict[str, Any]], copies: Sequence[Any], repeats: int = 5) -> float:
    """The host's list `==` the chef's private copies of it (the ones it holds after the turns,
    which share the host's strings): one C-level comparison, the least a `set_history` can do
    that still sees an edit the host made in place. TS's `setHistory` keeps the array and its
    compile converts every message again, so it sees edits by redoing the work."""
    times: list[float] = []
    for _ in range(repeats):
        start = clock()
        equal = host == copies
        times.append(since(start))
    assert equal
    return median(times)


VALIDATOR = batch_intake_for(MESSAGE_SCHEMA, checks=False)
"""The intake's compiled validator without a Python check of its own (tool-call arguments)."""


def _copied(history: list[dict[str, Any]]) -> list[Any]:
    """The history copied by the intake's compiled validator, in batches as the chef takes
    them (the copies kept, as the chef keeps its own)."""
    copies: list[Any] = []
    for first in range(0, len(history), BATCH):
        copies.extend(VALIDATOR(history[first : first + BATCH]))
    return copies


def validated_floors(
    history: list[dict[str, Any]], shell: bytes, payload: dict[str, Any], target: str
) -> dict[str, float]:
    """The least a chef that validates and copies the history can cost, each timed from a
    collected heap holding the host's history, the collector's passes included as they come:
    the copy alone (the intake's compiled validator, no Python per message or per call); the
    copy, kept, then the payload's containers made in C (`orjson.loads` of its JSON with every
    string emptied); the copy, kept, then the containers made by the least Python
    (`python_floor.python_build`). The copies stay alive while the containers are made, as a
    cold start's do, so the collector meets as many survivors as it does there."""
    gc.collect()
    start = clock()
    copies = _copied(history)
    intake = since(start)
    del copies
    gc.collect()
    start = clock()
    copies = _copied(history)
    built = orjson.loads(shell)
    in_c = since(start)
    del copies, built
    gc.collect()
    start = clock()
    copies = _copied(history)
    built = python_build(payload, target)
    in_python = since(start)
    assert built == payload
    del copies, built
    gc.collect()
    start = clock()
    built = python_build(payload, target)
    python = since(start)
    del built
    return {
        "floor_intake_ms": intake,
        "floor_validated_ms": in_c,
        "floor_python_ms": python,
        "floor_validated_python_ms": in_python,
    }


def physical_floor(history: list[dict[str, Any]], body: bytes, shell: bytes) -> dict[str, float]:
    """The least a cold compile can cost in CPython, from the state a cold run starts in (the
    heap collected, the host's history alive): one C pass reading the history
    (`orjson.dumps`), one C pass creating the payload's objects from its JSON (`orjson.loads`;
    the collector runs as the allocations trigger it, as it does in a cold compile). `floor`
    creates every string too; `floor_shared` creates the containers only (`shell`: the payload's
    JSON with every string emptied), the least for a path that shares the host's strings, as
    the chef does."""
    gc.collect()
    start = clock()
    orjson.dumps(history)
    read = since(start)
    start = clock()
    built = orjson.loads(body)
    build = since(start)
    del built
    gc.collect()
    start = clock()
    built = orjson.loads(shell)
    containers = since(start)
    del built
    return {
        "floor_read_ms": read,
        "floor_build_ms": build,
        "floor_ms": read + build,
        "floor_containers_ms": containers,
        "floor_shared_ms": read + containers,
    }


def emptied(value: Any) -> Any:
    """`value` with every string emptied (keys kept): the payload's containers alone."""
    if isinstance(value, dict):
        return {key: emptied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [emptied(item) for item in value]
    return "" if isinstance(value, str) else value
