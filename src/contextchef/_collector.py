"""When contextchef pauses Python's cyclic garbage collector, and how.

Compiling a long history allocates tens of thousands of small dicts and lists; with a large heap
(the host's own history, our copies, the payload) that triggers full collections which cost more
than the work itself (a cold 10k-message compile spends 30-45 % of its time in them, measured in
benchmarks/compile.py). Our code creates no reference cycles, so the collector is paused over
stretches of our own code only:

- `paused_steps` pauses it inside each step of an effect flow, that is between two effects:
  never across an effect (a store call, a user callback, an event handler) and so never across an
  `await`;
- `collector_paused` pauses it over one synchronous stretch (`set_history`'s intake and repair,
  a built-in adapter's conversion).

The pause is taken only when the collector is on at that moment, and it is switched back on only
if it was on: a collector the user turned off (even from a callback between two steps) stays off.
A compile whose steps would run user code inline (a registered adapter, a user tokenizer) gets no
step pause; a built-in conversion inside it still gets `collector_paused`.
"""

from __future__ import annotations

import gc
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["collector_paused", "paused_steps"]

R = TypeVar("R")


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector for the `with` block if it is on; leave it as it was after."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def paused_steps(flow: Generator[Any, Any, R]) -> Generator[Any, Any, R]:
    """`flow`, with the collector paused while each of its steps runs (see the module)."""
    send: Any = None
    error: BaseException | None = None
    while True:
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            effect = flow.throw(error) if error is not None else flow.send(send)
        except StopIteration as stop:
            result: R = stop.value
            return result
        finally:
            if paused:
                gc.enable()
        try:
            send, error = (yield effect), None
        except GeneratorExit:
            flow.close()
            raise
        except BaseException as exc:  # handed to the flow, which decides what it means
            send, error = None, exc
