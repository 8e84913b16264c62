"""The `anthropic` target: keyword arguments of `client.messages.create` (minus model/max_tokens).

The payload is `{"messages", "system"?, "tools"?}`, plus `betas` and `context_management` when
the input asks for server-side compaction (see `anthropic_compaction`). Anthropic wants
alternating user/assistant turns, so the adapter merges consecutive same-role messages into one
turn: parallel tool results share one user turn, and a user message right after them joins that
turn too. Tool calls become
`tool_use` blocks (arguments parsed, keys sorted) and results `tool_result` blocks. Signed
thinking and redacted thinking go first in their assistant turn; unsigned thinking (from another
provider) cannot be verified by Anthropic and is left out. A prefill is a real trailing assistant
message, merged into a trailing assistant turn if the history ends with one.

Choices the API forces on us:

- **Empty text.** Anthropic rejects empty or whitespace-only text blocks, so such text is left
  out; a message with nothing left is left out too (its neighbours then merge; if that leaves an
  assistant turn first, the placeholder user turn of `ensure_valid_history` opens). An empty tool
  result keeps its `tool_result` block, without `content`. The final assistant text loses its
  trailing whitespace, which Anthropic also rejects.
- **Cache breakpoints.** A message marked `_cache_breakpoint` gets `cache_control: {"type":
  "ephemeral"}` on its last block that can carry one (every block but thinking), whatever its
  role: system prompt, user text, tool result or tool call. Anthropic allows 4 per request; when
  more are marked, the oldest (earliest in the request: system first, then messages) are dropped
  and one warning per compile says how many. Newer breakpoints cover longer prefixes and are the
  ones the next turn reads from. Automatic marks (the positions in `AdapterInput.auto_marks`
  the chef chose at the end of the stable prefix, see `placement.breakpoints`, or the
  `_auto_cache_breakpoint` key on a message given by hand) take what budget the host's own
  marks leave, newest first, without a warning. A mark is added while the turns are
  serialised, on this request's copy of the turn: no message is copied to carry it.
- **System messages in the history** (mid-conversation ones, or dynamic state placed as a system
  message) are hoisted into `system`, after the top layer, in order, logged once per compile at
  DEBUG. They hold text only; an attachment there is a `CompileError`.
- **Tool-call ids** that break Anthropic's `^[a-zA-Z0-9_-]+$` rule (ids from other providers)
  are rewritten the same way in `tool_use` and `tool_result`, with a short hash against clashes.

State Anthropic cannot take (arguments that are not a JSON object, an image or document type it
does not read) raises `CompileError` naming the message index.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from contextchef import prompts
from contextchef.adapters.anthropic_blocks import Unsupported, has_text
from contextchef.adapters.anthropic_blocks import convert as _convert
from contextchef.adapters.anthropic_compaction import compaction_keys
from contextchef.adapters.anthropic_turns import (
    Piece,
    Turns,
    last_marks,
    lead_piece,
    piece_mark,
    text_block,
)
from contextchef.adapters.base import AdapterInput, ConversionCache, ToolDefinition
from contextchef.adapters.profile import AdapterProfile
from contextchef.errors import CompileError, ConfigError
from contextchef.messages import Message

__all__ = ["ANTHROPIC_MAX_BREAKPOINTS", "AnthropicAdapter"]

logger = logging.getLogger("contextchef.adapters.anthropic")

ANTHROPIC_MAX_BREAKPOINTS = 4
_Block = dict[str, Any]


def _with_cache_control(block: _Block) -> _Block:
    # "cache_control" sorts before every other key a cacheable block has.
    return {"cache_control": {"type": "ephemeral"}, **block}


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "defer_loading" in tool:  # passed through for Anthropic's tool search
        out["defer_loading"] = tool["defer_loading"]
    out["description"] = tool.get("description", "")
    out["input_schema"] = tool.get("parameters", {"properties": {}, "type": "object"})
    out["name"] = tool["name"]
    if "strict" in tool:
        out["strict"] = tool["strict"]
    return out


class AnthropicAdapter:
    """Compiles to Messages API `system`, `messages` and `tools`.

    `max_cache_breakpoints` (default and maximum 4) lowers the breakpoint budget, e.g. when the
    caller adds a `cache_control` of its own to the request; 0 sends none, without a warning.
    Its profile: that many cache breakpoints (so the chef places automatic ones when there are
    any) and server-side compaction (`anthropic_compaction`).
    """

    __slots__ = ("_max_cache_breakpoints", "_profile")
    name = "anthropic"

    def __init__(self, *, max_cache_breakpoints: int = ANTHROPIC_MAX_BREAKPOINTS) -> None:
        if not 0 <= max_cache_breakpoints <= ANTHROPIC_MAX_BREAKPOINTS:
            raise ConfigError(
                f"max_cache_breakpoints must be between 0 and {ANTHROPIC_MAX_BREAKPOINTS}, "
                f"got {max_cache_breakpoints}"
            )
        self._max_cache_breakpoints = max_cache_breakpoints
        self._profile = AdapterProfile(
            cache_breakpoints=max_cache_breakpoints, server_compaction=True
        )

    @property
    def max_cache_breakpoints(self) -> int:
        """The breakpoint budget (read-only: the default registry's adapter is every chef's)."""
        return self._max_cache_breakpoints

    @property
    def profile(self) -> AdapterProfile:
        return self._profile

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        cache = request.cache if request.cache is not None else ConversionCache()  # empty is falsy
        head = len(request.system)
        positions = frozenset(request.auto_marks)
        system: list[tuple[Message, Piece, bool]] = []
        for index, message in enumerate(request.system):
            try:
                piece = cache.convert(message, _convert)
            except Unsupported as exc:
                raise CompileError(f"system prompt message {index}: {exc}") from None
            system.append((message, piece, index in positions))
        turns = self._turns(request, cache)
        if turns.hoisted:
            logger.debug(
                "hoisted %d system message(s) from the history into `system`", len(turns.hoisted)
            )
            hoisted = zip(turns.hoisted_at, turns.hoisted, strict=True)
            system += [
                (request.messages[at], piece, head + at in positions) for at, piece in hoisted
            ]

        system_blocks: list[_Block] = []
        system_own: list[tuple[int, int]] = []
        system_auto: list[tuple[int, int]] = []
        for message, piece, auto in system:
            mark = piece_mark(message, piece, auto)
            if mark is not None:
                marks = system_auto if mark[1] else system_own
                marks.append((-1, len(system_blocks) + mark[0]))
            system_blocks.extend(piece["content"])
        messages = turns.wires[:]  # this request's copy: the turns' wires are never mutated
        if request.prefill is not None and has_text(request.prefill):
            _add_prefill(messages, request.prefill)
        if not messages:  # the Messages API needs at least one message
            messages.append({"content": [text_block(prompts.CONVERSATION_STARTS)], "role": "user"})
        _strip_final_whitespace(messages)
        budget = self.max_cache_breakpoints
        if request.max_breakpoints is not None:
            budget = max(0, min(budget, request.max_breakpoints))
        own = (system_own, turns.own)
        asked = [at - head for at in request.auto_marks if at >= head]
        converted = partial(cache.convert, convert=_convert)
        automatic = (system_auto, turns.automatic(request.messages, asked, converted))
        self._place_breakpoints(system_blocks, messages, own, automatic, budget)

        payload: dict[str, Any] = {}
        if request.server_compaction is not None:  # `betas`, `context_management` sort first
            payload.update(compaction_keys(request.server_compaction))
        payload["messages"] = messages
        if system_blocks:
            payload["system"] = system_blocks
        if request.tools:
            payload["tools"] = [cache.convert(tool, _tool) for tool in request.tools]
        return payload

    def _turns(self, request: AdapterInput, cache: ConversionCache) -> Turns:
        """The history's turns, resumed from those of this cache's previous compile."""
        turns: Turns | None = cache.state.get(self)
        if turns is None:
            turns = cache.state[self] = Turns()
        try:
            turns.update(request.messages, _convert, cache, request.lineage)
        except Unsupported:
            raise _locate(request.messages) from None
        return turns

    def _place_breakpoints(
        self,
        system_blocks: list[_Block],
        messages: list[dict[str, Any]],
        own: tuple[list[tuple[int, int]], list[tuple[int, int]]],
        auto: tuple[list[tuple[int, int]], list[tuple[int, int]]],
        keep: int,
    ) -> None:
        """Put `cache_control` on the newest marked blocks, within the budget `keep`: the host's
        own marks first (system ones, then the history's), automatic ones in what they leave."""
        marked = len(own[0]) + len(own[1])
        if marked > keep and keep:
            logger.warning(
                "%d cache breakpoints marked, %d allowed per request: dropped the %d oldest",
                marked,
                keep,
                marked - keep,
            )
        chosen = set(last_marks(*own, keep))
        chosen.update(last_marks(*auto, keep - len(chosen)))
        for turn, at in sorted(chosen):
            if turn < 0:
                system_blocks[at] = _with_cache_control(system_blocks[at])
                continue
            message = messages[turn]
            content = list(message["content"])  # never mutate a cached conversion
            content[at] = _with_cache_control(content[at])
            messages[turn] = {"content": content, "role": message["role"]}


def _locate(messages: Any) -> CompileError:
    """The error of the first message that cannot be converted, with its index."""
    for index, message in enumerate(messages):
        try:
            _convert(message)
        except Unsupported as exc:
            return CompileError(str(exc), index=index)
    return CompileError("a message could not be converted")  # pragma: no cover


def _add_prefill(messages: list[dict[str, Any]], prefill: str) -> None:
    """The prefill as a trailing assistant turn, merged into one that ends the history (on a
    copy); a history with no turn at all starts with the placeholder user turn."""
    block = text_block(prefill)
    if not messages:
        messages.append(lead_piece(prompts.CONVERSATION_STARTS))
    last = messages[-1]
    if last["role"] == "assistant":
        messages[-1] = {"content": [*last["content"], block], "role": "assistant"}
    else:
        messages.append({"content": [block], "role": "assistant"})


def _strip_final_whitespace(messages: list[dict[str, Any]]) -> None:
    """Anthropic rejects a final assistant text that ends in whitespace: trim it (on a copy)."""
    if not messages or messages[-1]["role"] != "assistant":
        return
    content = messages[-1]["content"]
    last = content[-1]
    if last["type"] != "text" or not last["text"][-1:].isspace():
        return
    content = [*content[:-1], {**last, "text": last["text"].rstrip()}]
    messages[-1] = {"content": content, "role": "assistant"}
