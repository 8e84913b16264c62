"""One compile from files: a history file, and optionally a state, a system prompt and tools.

`compile` and `inspect` share this, so what `inspect` X-rays is exactly what `compile` prints.
The chef is a plain `ContextChef()` (the `context` tool offered as in any default chef);
`--system` replaces whatever system prompt the history file carried. With `--memory`, the
project's memory entries are copied from the store (`--store`, `--project`) into the chef's
own in-memory store, so the compile shows them as the agent would see them and writes nothing
back (a compile advances memory's turn count, which must not touch the real store).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextchef.cli.history_file import (
    LoadedHistory,
    load_history,
    load_state,
    load_system,
    load_tools,
)

if TYPE_CHECKING:  # the chef loads when a compile runs, not when the CLI starts
    from contextchef.chef import ContextChef
    from contextchef.payload import Payload

__all__ = ["CompileInputs", "Compiled", "compile_inputs", "payload_text"]


@dataclass(frozen=True, slots=True)
class CompileInputs:
    """What the user named on the command line."""

    history: Path
    target: str = "openai"
    fmt: str | None = None
    state: Path | None = None
    system: str | None = None
    tools: Path | None = None
    memory: bool = False
    store: Path | None = None
    project: str | None = None


@dataclass(frozen=True, slots=True)
class Compiled:
    """The result: the imported history, the chef that compiled it, and its payload."""

    inputs: CompileInputs
    loaded: LoadedHistory
    chef: ContextChef
    payload: Payload


def compile_inputs(inputs: CompileInputs) -> Compiled:
    """Read every file named in `inputs` (each failure a one-line `UserError`), then compile."""
    loaded = load_history(inputs.history, fmt=inputs.fmt)
    state = load_state(inputs.state) if inputs.state is not None else None
    system: Any = load_system(inputs.system) if inputs.system is not None else loaded.system
    tools = load_tools(inputs.tools) if inputs.tools is not None else None
    chef = _chef(inputs).set_system_prompt(system).set_history(loaded.history)
    if state is not None:
        chef.set_dynamic_state(dict[str, Any], state)
    if tools is not None:
        chef.tools.register(tools)
    return Compiled(inputs, loaded, chef, chef.compile(target=inputs.target))


def _chef(inputs: CompileInputs) -> ContextChef:
    from contextchef.chef import ContextChef
    from contextchef.cli.store_open import opened_store
    from contextchef.memory.entry import MEMORY_NAMESPACE
    from contextchef.store.backends.inmemory import InMemoryBackend

    # The cache audit only reports (into payload.meta), so `inspect` can list its findings.
    if not inputs.memory:
        return ContextChef(cache_audit=True)
    local = InMemoryBackend()
    with opened_store(inputs.store, inputs.project) as opened:
        for path, entry in opened.store.namespace(MEMORY_NAMESPACE).entries().items():
            local.write(MEMORY_NAMESPACE, path, entry)
    return ContextChef(store=local, memory={}, cache_audit=True)


def payload_text(payload: Any) -> str:
    """The payload as `compile` prints and writes it: indented JSON, keys in the payload's
    (sorted) order, non-ASCII kept as is."""
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
