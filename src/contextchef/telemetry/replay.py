"""Metric records moved off the compile: queued when a compile ends, replayed when a reader
collects.

An OpenTelemetry SDK record costs microseconds (its attributes are cleaned, hashed and
aggregated under a lock) and a compile makes about six: a tenth of an incremental compile. A
compile appends them to a `RecordQueue` instead. The SDK runs the callbacks of observable
instruments before it reads a collection's aggregates, so one callback (on a gauge that never
reports a value, `REPLAY_GAUGE`) replays the queue into the very collection that reads it:
periodic exporters and in-memory readers see the same data points, with the same attributes and
the trace context of the compile that made them (exemplars keep their trace; their timestamp is
the replay's). Past `MAX_PENDING` queued records (a provider nobody collects from, or one that
never calls callbacks) records go straight to the instruments: memory stays bounded and no
compile pays for a backlog.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics

__all__ = ["MAX_PENDING", "REPLAY_GAUGE", "RecordQueue", "queue_for"]

MAX_PENDING = 1024
"""Records a queue holds before further records go straight to their instruments."""

REPLAY_GAUGE = "contextchef.telemetry.replay"
"""The observable gauge whose callback replays the queue; it never reports a data point."""

Record = Callable[..., None]
"""An instrument's `record` or `add`: `(amount, attributes, context)`."""


class RecordQueue:
    """The records of one meter's instruments, waiting for the next collection."""

    def __init__(self, meter: Any) -> None:
        self._pending: deque[tuple[Record, float, Mapping[str, Any], Any]] = deque()
        meter.create_observable_gauge(
            REPLAY_GAUGE,
            callbacks=[self._replay],
            description="Replays contextchef's queued metric records; reports nothing itself.",
        )

    def record(self, record: Record, amount: float, attributes: Mapping[str, Any]) -> None:
        """`record(amount, attributes)` at the next collection, in the current trace context."""
        if len(self._pending) < MAX_PENDING:
            self._pending.append((record, amount, attributes, otel_context.get_current()))
        else:
            record(amount, attributes)

    def flush(self) -> None:
        """Record everything queued now (in order)."""
        pending = self._pending
        while True:
            try:
                record, amount, attributes, context = pending.popleft()
            except IndexError:
                return
            record(amount, attributes, context=context)

    def _replay(self, options: metrics.CallbackOptions) -> Iterable[metrics.Observation]:
        self.flush()
        return ()


_queues: weakref.WeakKeyDictionary[Any, RecordQueue] = weakref.WeakKeyDictionary()
_queues_lock = threading.Lock()


def queue_for(meter: Any) -> RecordQueue | None:
    """The one queue of `meter` (every instrumented chef on it shares it: the SDK keeps the
    first callback of a gauge name), or None where records go straight to the instruments (the
    API's no-op meter, which records nothing)."""
    if isinstance(meter, metrics.NoOpMeter):
        return None
    with _queues_lock:
        try:
            queue = _queues.get(meter)
            if queue is None:
                queue = _queues[meter] = RecordQueue(meter)
        except TypeError:  # a meter that cannot be weakly referenced: record as we go
            return None
        return queue
