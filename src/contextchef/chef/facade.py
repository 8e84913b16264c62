"""`ChefFacade`: the everyday verbs both chefs share, over parts built by `wiring.wire`.

A chef is a thin facade over parts that are objects with their own small APIs: `tools`
(registration, pruning, toolkits, the blocklist), `skills`, `prompt` (system prompt, dynamic
state, guardrails, announcements), `memory` and `store`, and, behind the verbs, the history
(intake, write-back) and snapshots. The parts share one `StateCell` (the compile state) and are
handed what else they need explicitly; this class keeps them and delegates.
It holds no state of its own parts: `ContextChef` and `AsyncContextChef` (in
`contextchef.chef.chefs`) add only the lock and the driver of each flow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Self

from contextchef._effects import Flow
from contextchef.adapters import AdapterRegistry
from contextchef.chef.cell import StateCell
from contextchef.chef.observer import FlowObserver
from contextchef.chef.options import renamed_options
from contextchef.chef.prompt import Prompt
from contextchef.chef.tools import Tools
from contextchef.chef.wiring import wire
from contextchef.compiler.pipeline import CompileState, Payload, Signal, compile_flow
from contextchef.errors import ConfigError
from contextchef.events import Handlers, Slots
from contextchef.memory.core import MemoryCore
from contextchef.memory.memory import AsyncMemory, Memory
from contextchef.messages import DocumentPart, ImagePart, Message, TextPart
from contextchef.placement.guardrail import GuardrailPlacement
from contextchef.selection.budget import BudgetConfig
from contextchef.selection.offload import OffloadConfig
from contextchef.selection.overflow import OverflowConfig, OverflowRunner
from contextchef.selection.pruner import PrunerState
from contextchef.selection.tool_results import TransformHook
from contextchef.skills.model import LoadedSkills, Skill
from contextchef.store.aio import AsyncStore
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.core import StoreCore
from contextchef.store.store import Store
from contextchef.tokens import Tokenizer

__all__ = ["ChefFacade"]


class ChefFacade:
    """What the sync and async chefs share (see the module docstring)."""

    def __init__(
        self,
        *,
        store: Store | AsyncStore | StorageBackend | AsyncStorageBackend | str | None = None,
        memory: Memory | AsyncMemory | Mapping[str, Any] | None = None,
        tools: str = "unified",
        context_tool: Mapping[str, Any] | None = None,
        budget: BudgetConfig | Mapping[str, Any] | None = None,
        overflow: OverflowConfig | Mapping[str, Any] | None = None,
        offload: OffloadConfig | Mapping[str, Any] | None = None,
        transform_tool_result: TransformHook | None = None,
        tokenizer: Tokenizer | None = None,
        default_target: str | None = None,
        adapters: AdapterRegistry | None = None,
        skills: Iterable[Skill] | LoadedSkills | None = None,
        skill_placement: str = "after_system",
        pruner: PrunerState | Mapping[str, Any] | None = None,
        cache: str = "auto",
        cache_audit: bool = False,
        prompt_cache_key: str | None = None,
        cached_content: str | None = None,
        pipeline_checks: bool = False,
        **renamed: Any,
    ) -> None:
        """Build a chef; every option is keyword-only and optional.

        Args:
            store: where memory/, notes/, vfs/ and archive/ live: a `Store` or `AsyncStore`,
                a backend (`InMemoryBackend`, `FileSystemBackend`, `SQLiteBackend`, or an
                async-native one for `AsyncContextChef`), `"memory"` (the default: nothing
                touches the disk) or `"sqlite"` (the machine's embedded database).
            memory: durable facts shown to the model: a dict of `Memory` options
                (`allowed_keys`, `default_ttl`, `placement`, `turns`, hooks…) or a `Memory` /
                `AsyncMemory`. None: no memory. Turn-based TTLs count host turns: a compile
                whose history holds a new user message (`turns="user_messages"`, the default),
                or only `memory.advance_turn()` (`turns="explicit"`).
            tools: the vocabulary of contextchef's own tools: `"unified"` (the default: the
                `context` tool over every namespace) or `"legacy"` (`create_memory`,
                `modify_memory`, `recall_context`).
            context_tool: `{"writable": [...], "max_entry_bytes": n, "max_argument_bytes": n}`:
                the namespaces the model may write (default memory and notes), and the byte
                caps on one entry it writes (256 KiB) and one call's arguments (1 MiB).
            budget: the window budget: `{"context_window": n, "trigger_ratio": r,
                "usage_preference": ...}` or a `BudgetConfig`. With `overflow`, turns
                overflow handling on.
            overflow: what happens over budget: `{"strategy": summarize(...), "archive":
                "archive", "handoff": {...}, "write_back": True, hooks…}` or an
                `OverflowConfig`.
            offload: tool-result offloading: `{"threshold": chars, "namespace": "vfs", ...}`
                or an `OffloadConfig`.
            transform_tool_result: `(content, info) -> str`, applied to every tool result
                before offloading.
            tokenizer: the one token counter of the chef (budget and `payload.meta.tokens`);
                default: an offline estimate.
            default_target: the target `compile()` uses without one (default "openai").
            adapters: an `AdapterRegistry` with your own targets, for this chef (and any other
                you give it) only: `adapter_registry.with_adapters({"mine": adapter})`
                (default: the read-only built-ins, `adapter_registry`).
            skills: the skills `skills.activate(name)` finds by name (a list of `Skill`, or what
                `load_skills` returned); names not registered are looked up in the store's
                `skills/` namespace.
            skill_placement: where the active skill's instructions go: `"after_system"` (the
                default: a system message right after your system prompt, cached with it) or
                `"tail"` (first in the tail of the last user message).
            pruner: which of your tools the model sees: `{"namespaces": {"git": {"tools":
                [...], "description": "..."}}, "toolkits": {"browser": {"tools": [...],
                "description": "..."}}, "keep": [...], "blocked": [...],
                "use_allowed_tools": False}` or a `PrunerState`. Namespaces compile a group
                into one tool (`tools.resolve_namespace` maps its calls back); toolkits stay out
                of the payload until loaded (`tools.load_toolkit`); `tools.allow_only` /
                `tools.prune_by_task` narrow the rest; `keep` is never pruned; `blocked` starts
                the runtime blocklist; `use_allowed_tools` makes the targets that restrict calls
                by name
                (the OpenAI ones; `AdapterProfile.allowed_tools`) keep every definition and
                restrict calls through `tool_choice` instead.
            cache: prompt-cache breakpoints: `"auto"` (the default: on targets that take them,
                `AdapterProfile.cache_breakpoints` such as Anthropic's, breakpoints at the end of
                the stable prefix, within the 4 allowed together with your own
                `_cache_breakpoint` marks), `"explicit"` (only your
                marks) or `"off"` (none). `payload.meta.cache` reports the reuse either way.
            cache_audit: report what in the layout costs cache hits (`cache:finding` events
                and `payload.meta.cache.findings`); never fails a compile.
            prompt_cache_key: passed through to both OpenAI targets as `prompt_cache_key`
                (to every adapter whose profile has `prompt_cache_key`).
            cached_content: a Gemini context cache name, passed through (to every adapter
                whose profile has `cached_content`) as
                `config.cached_content` (the cache then holds the system instruction and tools,
                which leave the request, as the API requires).
            pipeline_checks: after assembly, check that pinned messages survived, tool calls
                kept their results and every message before the tail is byte-identical to the
                history; violations are logged once and emitted as `pipeline:invariant`
                events, never raised (a development aid, off by default).
            **renamed: the TypeScript reference's names `janitor=` (now `budget=`) and `vfs=`
                (now `offload=`) still work for now, with a `DeprecationWarning`.
        """
        budget, offload = renamed_options(
            renamed, owner=type(self).__name__, budget=budget, offload=offload
        )
        self._handlers = Handlers()
        wired = wire(
            asynchronous=self._asynchronous,
            handlers=self._handlers,
            store=store,
            memory=memory,
            tools=tools,
            context_tool=context_tool,
            budget=budget,
            overflow=overflow,
            offload=offload,
            transform_tool_result=transform_tool_result,
            tokenizer=tokenizer,
            default_target=default_target,
            adapters=adapters,
            skill_placement=skill_placement,
            pruner=pruner,
            cache=cache,
            cache_audit=cache_audit,
            prompt_cache_key=prompt_cache_key,
            cached_content=cached_content,
            pipeline_checks=pipeline_checks,
        )
        self.default_target: str = wired.default_target
        self._registry = wired.runtime.registry
        self._cell = wired.cell
        self._runtime = wired.runtime
        self._dispatcher = wired.dispatcher
        self._core = wired.core
        self._memory_core = wired.runtime.memory
        self._slots = Slots()
        self._tools = wired.tools
        self._prompt = wired.prompt
        self._history = wired.history
        self._snapshots = wired.snapshots
        self._open_parts(wired.cell, wired.core, skills, wired.runtime.skill_placement, store)
        self._lock = self._make_lock()

    _asynchronous = False
    _observer: FlowObserver | None = None
    """Set by `contextchef.telemetry.instrument`; None costs one check per compile."""

    def _open_parts(
        self,
        cell: StateCell,
        core: StoreCore,
        skills: Iterable[Skill] | LoadedSkills | None,
        placement: str,
        store: object,
    ) -> None:
        """Build the parts whose API differs between the chefs (skills, store)."""
        raise NotImplementedError

    def _make_lock(self) -> Any:
        raise NotImplementedError

    # -- the parts ---------------------------------------------------------------------------

    @property
    def tools(self) -> Tools:
        """Your tools: `register`, `allow_only`, `prune_by_task`, toolkits, the blocklist
        (`set_blocked_tools`, `check_tool_call`), `resolve_namespace` (see `Tools`)."""
        return self._tools

    @property
    def prompt(self) -> Prompt:
        """The layers around the history: system prompt, dynamic state, guardrails,
        announcements, and `refresh_memory` (see `Prompt`)."""
        return self._prompt

    def _require_memory(self) -> MemoryCore:
        if self._memory_core is None:
            raise ConfigError("this chef has no memory: pass memory={...} to the chef")
        return self._memory_core

    # -- the everyday setters ----------------------------------------------------------------

    def set_system_prompt(self, messages: str | Iterable[object]) -> Self:
        """The static top layer: system messages (or one string), never changed by compile."""
        self._prompt.set_system_prompt(messages)
        return self

    def set_dynamic_state(
        self, model_or_schema: Any, data: Any = None, *, placement: str = "last_user"
    ) -> Self:
        """The live task state: a schema type and its data (a pydantic model class, a TypedDict or
        a dataclass), or a model instance. A dict is refused (`DynamicStateError`): pydantic
        validates against Python types, not JSON schemas.

        It is validated and rendered as XML now; `placement="last_user"` stitches it into the
        last user message, `"system"` puts it in a system message of its own after the history.
        `prompt.clear_dynamic_state()` drops it.
        """
        self._prompt.set_dynamic_state(model_or_schema, data, placement=placement)
        return self

    def with_guardrails(
        self,
        options: Mapping[str, Any] | None = None,
        /,
        *,
        enforce_xml: Mapping[str, Any] | str | None = None,
        prefill: str | None = None,
        placement: GuardrailPlacement | None = None,
    ) -> Self:
        """Ask for the reply inside an XML tag and/or starting with `prefill`.

        Replaces earlier guardrails; `with_guardrails(None)` (or no arguments) clears them.
        Applied at compile, so the order of setter calls never matters.

        `placement` says where the XML instruction goes: `"last_user"` (the default) at the end
        of the last user message, where it never changes the cached prefix; `"system"` (the
        TypeScript reference's default) as a system message after the history, which the
        Anthropic and Gemini adapters lift into their system parameter, so changing it there
        changes the cached prefix. The prefill is the reply's opening either
        way.
        """
        self._prompt.with_guardrails(
            options, enforce_xml=enforce_xml, prefill=prefill, placement=placement
        )
        return self

    def set_history(self, messages: Iterable[object]) -> Self:
        """The rolling conversation, as IR messages (see `contextchef.messages`).

        What providers would reject is repaired now (`ensure_valid_history`), and every compile
        reports the repairs in `payload.meta.repairs`. An overflow result written back earlier is
        re-applied when the history starts with the messages it compacted, recognised by their
        content: the same dicts, or fresh ones reloaded from a database or JSON.
        """
        self._history.set(messages)
        return self

    def append_history(self, messages: Iterable[object]) -> Self:
        """Add messages at the end of the history: `set_history(previous + messages)`, where
        `previous` is the list the last `set_history` or `append_history` received, as it was
        then. The cheapest turn: earlier messages are not compared again, so edit one in place
        and `set_history` must see the whole list (which stays fast: it re-validates only
        what is new or changed)."""
        self._history.append(messages)
        return self

    def add_response(self, response: object) -> Self:
        """Append the model's reply, exactly as the provider SDK returned it (a `ChatCompletion`,
        a Responses API `Response`, an Anthropic `Message`, a Gemini `GenerateContentResponse`,
        their dict forms, or one message already taken out: see `contextchef.adapters.reply`).

        Its tool calls wait for `add_tool_result`; a compile in between answers them with
        placeholders in that payload only (`payload.meta.repairs` says so). A value that is not
        a response raises `ConfigError`, one without an assistant message `MessageError`, and
        the chef is left as it was.
        """
        self._history.add_response(response)
        return self

    def add_tool_result(
        self,
        call_id: str | None,
        content: str | Sequence[TextPart | ImagePart | DocumentPart],
        *,
        name: str | None = None,
    ) -> Self:
        """Append the result of a tool call the last reply made: a `tool` message answering
        `call_id`, whose `content` is text or a list of IR content parts (text, image, document).

        `call_id` must name a call of the last assistant message still waiting for its result,
        else `MessageError` lists the calls that are. `name=` (the function name) is checked
        against the call; with `call_id=None` it picks the first waiting call of that function
        (Gemini calls that came without an id).
        """
        self._history.add_tool_result(call_id, content, name)
        return self

    @property
    def history(self) -> list[Message]:
        """A copy of the history the chef holds (after repairs). Tool calls of the last turn
        that still wait for their results have none here: a compile answers them with
        placeholders (see `payload.meta.repairs`) until the host adds the real ones."""
        return self._history.messages()

    def clear_history(self) -> Self:
        """Empty the history and start a new context window (overflow state is reset too)."""
        self._history.clear()
        return self

    # -- the window --------------------------------------------------------------------------

    def report_token_usage(self, input_tokens: int) -> Self:
        """Feed the provider's reported input tokens of the last call; the next compile's
        budget uses it once (see `budget={"usage_preference": ...}`)."""
        self._require_budget("report_token_usage").report_usage(input_tokens)
        return self

    def request_new_context(self) -> Self:
        """Make the next compile run the overflow strategy whatever the budget (once)."""
        self._require_budget("request_new_context")
        self._cell.request_new_context()
        return self

    def _require_budget(self, what: str) -> OverflowRunner:
        if self._runtime.overflow_runner is None:
            raise ConfigError(f"{what}() needs overflow configured: ContextChef(budget={{...}})")
        return self._runtime.overflow_runner

    # -- library-owned tools -----------------------------------------------------------------

    def owns_tool(self, name: str) -> bool:
        """Whether `name` is one of contextchef's own tools (`context`, `new_context`, and the
        legacy `create_memory`, `modify_memory`, `recall_context`), whatever the vocabulary."""
        return self._dispatcher.owns(name)

    # -- events and slots --------------------------------------------------------------------

    def on(self, event: str, handler: Callable[[Any], Any]) -> Callable[[], bool]:
        """Call `handler(event)` on `event`; returns a function that unsubscribes it. Event
        handlers watch a compile and never fail it."""
        self._handlers.add(event, handler)
        return lambda: self.off(event, handler)

    def off(self, event: str, handler: Callable[[Any], Any]) -> bool:
        """Unsubscribe `handler` from `event`; whether it was subscribed."""
        return self._handlers.remove(event, handler)

    def use(self, slot: str, handler: Callable[..., Any]) -> Self:
        """Take part in every compile at `slot` (see `contextchef.events.Slots`): unlike an
        event handler, a slot handler that raises fails the compile."""
        self._slots.add(slot, handler)
        return self

    def unuse(self, slot: str, handler: Callable[..., Any]) -> bool:
        """Remove the first registration of `handler` at `slot`."""
        return self._slots.remove(slot, handler)

    # -- the flows each chef drives ----------------------------------------------------------

    def _flow(
        self, target: str | None, signal: Signal | None
    ) -> tuple[CompileState, Flow[Payload]]:
        """The flow of one compile, and the state it started from (see `_land`)."""
        resolved = target if target is not None else self.default_target
        self._registry.get(resolved)  # an unknown target fails before anything is consumed
        forced = self._cell.take_new_context()
        state = self._cell.state
        flow = compile_flow(
            state,
            self._runtime,
            resolved,
            signal=signal,
            handlers=self._handlers,
            slots=self._slots,
            forced=forced,
        )
        if self._observer is not None:
            flow = self._observer.compile(flow, resolved, state, self._runtime)
        return state, flow

    def _land(self, started: CompileState, payload: Payload) -> Payload:
        """Write a landed overflow back into the history (see `History.land`)."""
        return self._history.land(started, payload)

    def _tool_flow(self, name: str, arguments: object) -> Flow[str]:
        """The flow of one call of an owned tool (`UnknownToolError` before it starts)."""
        flow = self._dispatcher.flow(name, arguments)
        if self._observer is not None:
            flow = self._observer.tool(flow, name, arguments)
        return flow
