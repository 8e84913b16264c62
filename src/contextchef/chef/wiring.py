"""How a chef's options become its parts: `wire` validates every option, builds the store,
memory, overflow runner, compile runtime and dispatcher, and hands each part the collaborators it
needs (the shared `StateCell`, the runtime, the dispatcher's `owns`) explicitly.

Kept apart from the facade so that the facade is only its verbs, and so that the order in which
parts are built (the dispatcher before the tools part that asks it what it owns) is written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contextchef.adapters import AdapterRegistry, adapter_registry
from contextchef.cache.planning import CacheOptions
from contextchef.chef.announce import Announcer
from contextchef.chef.cell import StateCell
from contextchef.chef.history import History
from contextchef.chef.options import (
    ChefOptions,
    library_tools,
    offered_vocabulary,
    open_context_tool,
    open_memory,
    open_store,
)
from contextchef.chef.prompt import Prompt
from contextchef.chef.skills import check_skill_placement
from contextchef.chef.snapshots import Snapshots
from contextchef.chef.tools import ToolkitLoader, Tools, open_pruner
from contextchef.compiler.pipeline import CompileRuntime
from contextchef.events import Handlers
from contextchef.memory.memory import AsyncMemory, Memory
from contextchef.retrieval.dispatch import Dispatcher
from contextchef.selection.budget import BudgetConfig
from contextchef.selection.offload import ChefOffloader, OffloadConfig
from contextchef.selection.overflow import OverflowConfig, OverflowRunner
from contextchef.selection.pruner import PrunerState
from contextchef.selection.tool_results import TransformHook
from contextchef.store.aio import AsyncStore
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.core import StoreCore
from contextchef.store.store import Store
from contextchef.tokens import MessageCounter, Tokenizer

__all__ = ["Wiring", "wire"]


@dataclass(frozen=True, slots=True)
class Wiring:
    """The parts both chefs share, built from the options (the skills part, whose activation
    each chef drives its own way, is built by the chef from `runtime.skill_placement`)."""

    default_target: str
    cell: StateCell
    runtime: CompileRuntime
    dispatcher: Dispatcher
    core: StoreCore
    tools: Tools
    prompt: Prompt
    history: History
    snapshots: Snapshots


def wire(
    *,
    asynchronous: bool,
    store: Store | AsyncStore | StorageBackend | AsyncStorageBackend | str | None,
    memory: Memory | AsyncMemory | Mapping[str, Any] | None,
    tools: str,
    context_tool: Mapping[str, Any] | None,
    budget: BudgetConfig | Mapping[str, Any] | None,
    overflow: OverflowConfig | Mapping[str, Any] | None,
    offload: OffloadConfig | Mapping[str, Any] | None,
    transform_tool_result: TransformHook | None,
    tokenizer: Tokenizer | None,
    default_target: str | None,
    adapters: AdapterRegistry | None,
    skill_placement: str,
    pruner: PrunerState | Mapping[str, Any] | None,
    cache: str,
    cache_audit: bool,
    prompt_cache_key: str | None,
    cached_content: str | None,
    pipeline_checks: bool,
    handlers: Handlers,
) -> Wiring:
    """Validate the options (see `ContextChef.__init__`) and build the shared parts."""
    options = ChefOptions.of(
        tools=tools,
        context_tool=context_tool,
        offload=offload,
        transform_tool_result=transform_tool_result,
        default_target=default_target,
    )
    registry = adapters if adapters is not None else adapter_registry
    placement = check_skill_placement(skill_placement)
    runner = (
        OverflowRunner(budget, overflow) if budget is not None or overflow is not None else None
    )
    core = open_store(store, asynchronous=asynchronous)
    memory_core = open_memory(memory, core, asynchronous=asynchronous)
    vocabulary = offered_vocabulary(options, memory_core, runner)
    library = library_tools(vocabulary, by_meaning=core.index is not None)
    library_names = tuple(tool["name"] for tool in library)
    cell = StateCell(open_pruner(pruner))
    dispatcher = Dispatcher(
        open_context_tool(options, core, memory_core),
        on_new_context=cell.request_new_context if runner is not None else None,
        toolkits=ToolkitLoader(cell, library_names),
    )
    runtime = CompileRuntime(
        registry=registry,
        counter=MessageCounter(tokenizer),
        overflow_runner=runner,
        store=core,
        vocabulary=vocabulary,
        offload=options.offload,
        transform=options.transform_tool_result,
        memory=memory_core,
        library_tools=library,
        skill_placement=placement,
        cache=CacheOptions.of(
            cache=cache,
            cache_audit=cache_audit,
            prompt_cache_key=prompt_cache_key,
            cached_content=cached_content,
            pipeline_checks=pipeline_checks,
        ),
    )
    history = History(cell, runtime)
    # The chef's events reach the parts that emit outside a compile (see `store.offloads`).
    core.offloader = ChefOffloader(options.offload, vocabulary, handlers.for_event)
    if memory_core is not None:
        memory_core.events = handlers.for_event
    announce = Announcer(handlers, asynchronous=asynchronous)
    return Wiring(
        default_target=options.default_target,
        cell=cell,
        runtime=runtime,
        dispatcher=dispatcher,
        core=core,
        tools=Tools(cell, library_names, dispatcher.owns, vocabulary, announce),
        prompt=Prompt(cell, runtime),
        history=history,
        snapshots=Snapshots(cell, runtime, memory_core, history),
    )
