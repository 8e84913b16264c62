"""`_ChefBase`: the state, setters, options, events and compile plumbing both chefs share.

`ContextChef` and `AsyncContextChef` (in `chef`) add only what differs: their lock and the driver
of each flow. Setters validate before they change anything, so a bad call raises and leaves the
chef as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Self

from contextchef._chef_events import EventsAndSlots, FlowObserver
from contextchef._chef_history import HistorySetters
from contextchef._chef_parts import (
    ChefOptions,
    Compaction,
    as_messages,
    as_tools,
    library_tools,
    offered_vocabulary,
    open_context_tool,
    open_memory,
    open_store,
)
from contextchef._chef_skills import (
    SkillsAndAnnouncements,
    check_skill_placement,
    skill_registry,
)
from contextchef._chef_snapshots import SnapshotsMixin
from contextchef._chef_tools import ToolSelection, open_pruner
from contextchef._chef_write_back import WriteBack
from contextchef._effects import Flow
from contextchef._jsonvalue import copy_json
from contextchef._memo import ContentDigests, MessageIntake
from contextchef._repair import HistoryRepair, waiting_placeholders
from contextchef.adapters import (
    AdapterRegistry,
    ToolDefinition,
    adapter_registry,
    normalize_tools,
)
from contextchef.cache.planning import CacheOptions
from contextchef.compiler.pipeline import (
    CompileRuntime,
    CompileState,
    Payload,
    Signal,
    compile_flow,
)
from contextchef.errors import ConfigError, ToolDefinitionError
from contextchef.events import Handlers, Slots
from contextchef.memory.core import MemoryCore
from contextchef.memory.memory import AsyncMemory, Memory
from contextchef.messages import Message
from contextchef.placement.guardrail import Guardrails, make_guardrails
from contextchef.placement.state import DynamicState, render_dynamic_state
from contextchef.prompts import Vocabulary
from contextchef.retrieval.dispatch import Dispatcher
from contextchef.selection.budget import JanitorConfig
from contextchef.selection.janitor import Janitor, OverflowConfig
from contextchef.selection.offload import OffloadConfig
from contextchef.selection.pruner import PrunerState
from contextchef.selection.tool_results import TransformHook
from contextchef.skills.model import LoadedSkills, Skill
from contextchef.store.aio import AsyncStore
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.store import Store, StoreBase
from contextchef.tokens import MessageCounter, Tokenizer

__all__ = ["_ChefBase"]


class _ChefBase(
    HistorySetters, SkillsAndAnnouncements, ToolSelection, SnapshotsMixin, EventsAndSlots, WriteBack
):
    """State and configuration shared by the sync and async chefs."""

    def __init__(
        self,
        *,
        store: Store | AsyncStore | StorageBackend | AsyncStorageBackend | str | None = None,
        memory: Memory | AsyncMemory | Mapping[str, Any] | None = None,
        tools: str = "unified",
        context_tool: Mapping[str, Any] | None = None,
        janitor: JanitorConfig | Mapping[str, Any] | None = None,
        overflow: OverflowConfig | Mapping[str, Any] | None = None,
        vfs: OffloadConfig | Mapping[str, Any] | None = None,
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
                or only `next_turn()` (`turns="explicit"`).
            tools: the vocabulary of contextchef's own tools: `"unified"` (the default: the
                `context` tool over every namespace) or `"legacy"` (`create_memory`,
                `modify_memory`, `recall_context`).
            context_tool: `{"writable": [...], "max_entry_bytes": n, "max_argument_bytes": n}`:
                the namespaces the model may write (default memory and notes), and the byte
                caps on one entry it writes (256 KiB) and one call's arguments (1 MiB).
            janitor: the window budget: `{"context_window": n, "trigger_ratio": r,
                "usage_preference": ...}` or a `JanitorConfig`. With `overflow`, turns
                overflow handling on.
            overflow: what happens over budget: `{"strategy": summarize(...), "archive":
                "archive", "handoff": {...}, "write_back": True, hooks…}` or an
                `OverflowConfig`.
            vfs: tool-result offloading: `{"threshold": chars, "namespace": "vfs", ...}` or
                an `OffloadConfig`.
            transform_tool_result: `(content, info) -> str`, applied to every tool result
                before offloading.
            tokenizer: the one token counter of the chef (budget and `payload.meta.tokens`);
                default: an offline estimate.
            default_target: the target `compile()` uses without one (default "openai").
            adapters: an `AdapterRegistry` with your own targets, for this chef (and any other
                you give it) only: `adapter_registry.with_adapters({"mine": adapter})`
                (default: the read-only built-ins, `adapter_registry`).
            skills: the skills `activate_skill(name)` finds by name (a list of `Skill`, or what
                `load_skills` returned); names not registered are looked up in the store's
                `skills/` namespace.
            skill_placement: where the active skill's instructions go: `"after_system"` (the
                default: a system message right after your system prompt, cached with it) or
                `"tail"` (first in the tail of the last user message).
            pruner: which of your tools the model sees: `{"namespaces": {"git": {"tools":
                [...], "description": "..."}}, "toolkits": {"browser": {"tools": [...],
                "description": "..."}}, "keep": [...], "blocked": [...],
                "use_allowed_tools": False}` or a `PrunerState`. Namespaces compile a group
                into one tool (`resolve_namespace` maps its calls back); toolkits stay out of
                the payload until loaded (`load_toolkit`); `allow_only` / `prune_by_task`
                narrow the rest; `keep` is never pruned; `blocked` starts the runtime
                blocklist; `use_allowed_tools` makes the targets that restrict calls by name
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
        """
        self._options = ChefOptions.of(
            tools=tools,
            context_tool=context_tool,
            vfs=vfs,
            transform_tool_result=transform_tool_result,
            default_target=default_target,
        )
        self._registry = adapters if adapters is not None else adapter_registry
        self._skills = skill_registry(skills)
        placement = check_skill_placement(skill_placement)
        self.default_target = self._options.default_target
        runner = Janitor(janitor, overflow) if janitor is not None or overflow is not None else None
        self._core = open_store(store, asynchronous=self._asynchronous)
        self._store = store if isinstance(store, self._store_type) else None
        self._memory = open_memory(memory, self._core, asynchronous=self._asynchronous)
        self.vocabulary: Vocabulary = offered_vocabulary(self._options, self._memory, runner)
        self.tools_mode: str = self.vocabulary.name
        self._dispatcher = Dispatcher(
            open_context_tool(self._options, self._core, self._memory),
            on_new_context=self._new_context if runner is not None else None,
            toolkits=self._toolkit_route(),
        )
        self._runtime = CompileRuntime(
            registry=self._registry,
            counter=MessageCounter(tokenizer),
            janitor=runner,
            store=self._core,
            vocabulary=self.vocabulary,
            offload=self._options.vfs,
            transform=self._options.transform_tool_result,
            memory=self._memory,
            library_tools=library_tools(self.vocabulary),
            skill_placement=placement,
            cache=CacheOptions.of(
                cache=cache,
                cache_audit=cache_audit,
                prompt_cache_key=prompt_cache_key,
                cached_content=cached_content,
                pipeline_checks=pipeline_checks,
            ),
        )
        self._force_next = False
        self._compactions: list[Compaction] = []
        self._digests = ContentDigests()
        self._handlers = Handlers()
        self._slots = Slots()
        self._system_intake = MessageIntake()
        self._history_intake = MessageIntake()
        self._history_repair = HistoryRepair()
        self._state = CompileState(
            system_prompt=(),
            history=(),
            repairs=(),
            state=None,
            guardrails=None,
            tools=(),
            pruner=open_pruner(pruner),
        )
        self._lock = self._make_lock()

    _asynchronous = False
    _store_type: type[StoreBase[Any]] = StoreBase
    _observer: FlowObserver | None = None
    """Set by `contextchef.telemetry.instrument`; None costs one check per compile."""

    def _make_lock(self) -> Any:
        raise NotImplementedError

    # -- state setters ---------------------------------------------------------------------

    def set_system_prompt(self, messages: str | Iterable[object]) -> Self:
        """The static top layer: system messages (or one string), never changed by compile."""
        taken = self._system_intake.take(as_messages(messages, "system prompt"))
        for index, message in enumerate(taken):
            if message["role"] != "system":
                raise ConfigError(
                    f"system prompt message {index} has role {message['role']!r}; "
                    "only system messages belong in the system prompt"
                )
        self._state = replace(self._state, system_prompt=tuple(taken))
        return self

    def set_dynamic_state(
        self, model_or_schema: Any, data: Any = None, *, placement: str = "last_user"
    ) -> Self:
        """The live task state: a schema type and its data (a pydantic model class, a TypedDict or
        a dataclass), or a model instance. A dict is refused (`DynamicStateError`): pydantic
        validates against Python types, not JSON schemas.

        It is validated and rendered as XML now; `placement="last_user"` stitches it into the
        last user message, `"system"` puts it in a system message of its own after the history.
        """
        state = render_dynamic_state(model_or_schema, data, placement=placement)
        self._state = replace(self._state, state=state)
        return self

    def clear_dynamic_state(self) -> Self:
        self._state = replace(self._state, state=None)
        return self

    def with_guardrails(
        self,
        options: Mapping[str, Any] | None = None,
        /,
        *,
        enforce_xml: Mapping[str, Any] | str | None = None,
        prefill: str | None = None,
    ) -> Self:
        """Ask for the reply inside an XML tag and/or starting with `prefill`.

        Replaces earlier guardrails; `with_guardrails(None)` (or no arguments) clears them.
        Applied at compile, so the order of setter calls never matters.
        """
        if options is not None:
            if enforce_xml is not None or prefill is not None:
                raise ConfigError("pass guardrails as a dict or as keywords, not both")
            unknown = set(options) - {"enforce_xml", "prefill"}
            if unknown:
                raise ConfigError(f"unknown guardrail option(s) {sorted(unknown)}")
            enforce_xml, prefill = options.get("enforce_xml"), options.get("prefill")
        guardrails: Guardrails | None = make_guardrails(enforce_xml, prefill)
        if guardrails == Guardrails():
            guardrails = None
        self._state = replace(self._state, guardrails=guardrails)
        return self

    def register_tools(self, tools: Iterable[Mapping[str, Any]]) -> Self:
        """Replace the tool set; each tool is converted to every provider's own schema."""
        normalized = normalize_tools(as_tools(tools))
        names = [tool["name"] for tool in normalized]
        self._state.pruner.check_names(names, self._library_names())
        clash = sorted(tool["name"] for tool in normalized if self._dispatcher.owns(tool["name"]))
        if clash:  # refused in every vocabulary: owns_tool() would route the calls to the library
            raise ToolDefinitionError(
                f"tool name(s) {clash} are reserved for contextchef's own tools (context, "
                "new_context, create_memory, modify_memory, recall_context): owns_tool() routes "
                "calls of those names to the library, whatever the vocabulary; rename yours"
            )
        self._state = replace(self._state, tools=tuple(normalized))
        return self

    def clear_history(self) -> Self:
        """Empty the history and start a new context window (overflow state is reset too)."""
        self._state = replace(self._state, history=(), repairs=())
        self._history_intake.rebase(())
        self._forget_compactions()
        self._runtime.memory_generation += 1
        if self._runtime.janitor is not None:
            self._runtime.janitor.reset()
        return self

    def refresh_memory(self) -> Self:
        """Render the memory block into the prefix again at the next compile of every target.

        Memory changes reach the model every compile either way: until the prefix breaks (an
        overflow, a new window, this call), the block in the instructions stays as it was
        rendered, so a memory write does not cost the cached prefix, and what changed since is
        listed at the tail. Call it when those changes have grown long.
        """
        self._runtime.memory_generation += 1
        return self

    def report_token_usage(self, input_tokens: int) -> Self:
        """Feed the provider's reported input tokens of the last call; the next compile's
        budget uses it once (see `janitor={"usage_preference": ...}`)."""
        self._require_janitor("report_token_usage").report_usage(input_tokens)
        return self

    def request_new_context(self) -> Self:
        """Make the next compile run the overflow strategy whatever the budget (once)."""
        self._require_janitor("request_new_context")
        self._force_next = True
        return self

    def _new_context(self) -> None:
        self._force_next = True

    # -- library-owned tools -----------------------------------------------------------------

    def owns_tool(self, name: str) -> bool:
        """Whether `name` is one of contextchef's own tools (`context`, `new_context`, and the
        legacy `create_memory`, `modify_memory`, `recall_context`), whatever the vocabulary."""
        return self._dispatcher.owns(name)

    def _require_memory(self) -> MemoryCore:
        if self._memory is None:
            raise ConfigError("this chef has no memory: pass memory={...} to the chef")
        return self._memory

    def _next_turn_flow(self) -> Flow[int]:
        """Count one host turn for memory's turn-based TTLs (`next_turn()`); the new count."""
        return self._require_memory().advance_turn()

    def _require_janitor(self, what: str) -> Janitor:
        if self._runtime.janitor is None:
            raise ConfigError(f"{what}() needs overflow configured: ContextChef(janitor={{...}})")
        return self._runtime.janitor

    # -- reading state -----------------------------------------------------------------------

    @property
    def history(self) -> list[Message]:
        """A copy of the history the chef holds (after repairs). Tool calls of the last turn
        that still wait for their results have none here: a compile answers them with
        placeholders (see `payload.meta.repairs`) until the host adds the real ones."""
        state = self._state
        invented = waiting_placeholders(state.history, state.repairs)
        return [copy_json(m) for i, m in enumerate(state.history) if i not in invented]

    @property
    def system_prompt(self) -> list[Message]:
        return [copy_json(m) for m in self._state.system_prompt]

    @property
    def dynamic_state(self) -> DynamicState | None:
        return self._state.state

    @property
    def tools(self) -> list[ToolDefinition]:
        return copy_json(list(self._state.tools))  # type: ignore[no-any-return]

    # -- compiling ---------------------------------------------------------------------------

    def _flow(
        self, target: str | None, signal: Signal | None
    ) -> tuple[CompileState, Flow[Payload]]:
        """The flow of one compile, and the state it started from (see `_land`)."""
        resolved = target if target is not None else self.default_target
        self._registry.get(resolved)  # an unknown target fails before anything is consumed
        forced, self._force_next = self._force_next, False
        state = self._state
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

    def _tool_flow(self, name: str, arguments: object) -> Flow[str]:
        """The flow of one call of an owned tool (`UnknownToolError` before it starts)."""
        flow = self._dispatcher.flow(name, arguments)
        if self._observer is not None:
            flow = self._observer.tool(flow, name, arguments)
        return flow
