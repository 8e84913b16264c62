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
  ones the next turn reads from. Automatic marks (`_auto_cache_breakpoint`, placed by the chef at
  the end of the stable prefix, see `placement.breakpoints`) take what budget the host's own
  marks leave, newest first, without a warning.
- **System messages in the history** (mid-conversation ones, or dynamic state placed as a system
  message) are hoisted into `system`, after the top layer, in order, logged once per compile at
  DEBUG. They hold text only; an attachment there is a `CompileError`.
- **Tool-call ids** that break Anthropic's `^[a-zA-Z0-9_-]+$` rule (ids from other providers)
  are rewritten the same way in `tool_use` and `tool_result`, with a short hash against clashes.

State Anthropic cannot take (arguments that are not a JSON object, an image or document type it
does not read) raises `CompileError` naming the message index.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import re
from typing import Any, NamedTuple

from contextchef import prompts
from contextchef._jsonvalue import loads_sorted
from contextchef.adapters.anthropic_compaction import compaction_keys
from contextchef.adapters.base import AdapterInput, ConversionCache, ToolDefinition, sorted_keys
from contextchef.errors import CompileError, ConfigError
from contextchef.messages import Message
from contextchef.placement.breakpoints import AUTO_MARK

__all__ = ["ANTHROPIC_MAX_BREAKPOINTS", "AnthropicAdapter"]

logger = logging.getLogger("contextchef.adapters.anthropic")

ANTHROPIC_MAX_BREAKPOINTS = 4
_IMAGE_TYPES = frozenset(("image/jpeg", "image/png", "image/gif", "image/webp"))
_UNCACHEABLE = frozenset(("thinking", "redacted_thinking"))
_WIRE_ID = re.compile(r"[A-Za-z0-9_-]+")
_Block = dict[str, Any]


class _Unsupported(Exception):
    """Raised by a conversion; `compile` re-raises it as `CompileError` with the index."""


class _Piece(NamedTuple):
    """One IR message converted: its wire role, blocks, and the block a breakpoint marks."""

    role: str
    blocks: list[_Block]
    mark: int  # index in `blocks` of the block that carries the breakpoint, -1 for none
    wire: dict[str, Any]  # the message as sent when it forms a turn on its own
    auto: bool = False  # the breakpoint is an automatic one (the host's own take precedence)


def _has_text(text: str) -> bool:
    return bool(text) and not text.isspace()


def _text(text: str) -> _Block:
    return {"text": text, "type": "text"}


def _wire_id(call_id: str) -> str:
    if _WIRE_ID.fullmatch(call_id):
        return call_id
    digest = hashlib.blake2s(call_id.encode(), digest_size=4).hexdigest()
    return f"{re.sub(r'[^A-Za-z0-9_-]', '_', call_id)}_{digest}"


def _image(part: Any) -> _Block:
    if "url" in part:
        return {"source": {"type": "url", "url": part["url"]}, "type": "image"}
    media_type = part["media_type"]
    if media_type not in _IMAGE_TYPES:
        raise _Unsupported(
            f"Anthropic reads JPEG, PNG, GIF and WebP images, not {media_type!r}; convert the "
            "image first"
        )
    source = {"data": part["data"], "media_type": media_type, "type": "base64"}
    return {"source": source, "type": "image"}


def _document_source(part: Any) -> dict[str, Any]:
    if "url" in part:
        return {"type": "url", "url": part["url"]}
    if "text" in part:
        return {"data": part["text"], "media_type": "text/plain", "type": "text"}
    media_type = part["media_type"]
    if media_type == "application/pdf":
        return {"data": part["data"], "media_type": media_type, "type": "base64"}
    if media_type.startswith("text/"):
        try:
            text = base64.b64decode(part["data"], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise _Unsupported(f"a {media_type} document is not base64 UTF-8 text: {exc}") from None
        return {"data": text, "media_type": "text/plain", "type": "text"}
    raise _Unsupported(
        f"Anthropic reads PDF and plain-text documents, not {media_type!r}; extract its text first"
    )


def _document(part: Any) -> _Block:
    block: _Block = {"source": _document_source(part)}
    if "filename" in part:
        block["title"] = part["filename"]
    block["type"] = "document"
    return block


def _parts(content: Any) -> list[_Block]:
    """Text and attachment blocks of a content value; empty text is left out."""
    if content is None:
        return []
    if isinstance(content, str):
        return [_text(content)] if _has_text(content) else []
    blocks: list[_Block] = []
    for part in content:
        kind = part["type"]
        if kind == "text":
            if _has_text(part["text"]):
                blocks.append(_text(part["text"]))
        elif kind == "image":
            blocks.append(_image(part))
        else:
            blocks.append(_document(part))
    return blocks


def _tool_use(call: Any) -> _Block:
    function = call["function"]
    raw = function["arguments"]
    try:
        arguments = {} if not raw or raw.isspace() else loads_sorted(raw)
    except json.JSONDecodeError as exc:
        problem = f"arguments are not valid JSON ({exc.msg} at character {exc.pos})"
        raise _Unsupported(f"tool call {call['id']!r} ({function['name']}): {problem}") from None
    if type(arguments) is not dict:
        problem = f"arguments must be a JSON object, got {type(arguments).__name__}"
        raise _Unsupported(f"tool call {call['id']!r} ({function['name']}): {problem}")
    return {
        "id": _wire_id(call["id"]),
        "input": arguments,
        "name": function["name"],
        "type": "tool_use",
    }


def _assistant_blocks(message: Message) -> list[_Block]:
    blocks: list[_Block] = []
    compaction = message.get("anthropic_compaction")
    if compaction is not None:
        blocks.append(sorted_keys(compaction))
    thinking = message.get("thinking")
    if thinking is not None and thinking.get("signature"):
        signature, text = thinking["signature"], thinking["thinking"]
        blocks.append({"signature": signature, "thinking": text, "type": "thinking"})
    for redacted in message.get("redacted_thinking") or ():
        blocks.append({"data": redacted["data"], "type": "redacted_thinking"})
    blocks.extend(_parts(message.get("content")))
    blocks.extend(_tool_use(call) for call in message.get("tool_calls") or ())
    return blocks


def _tool_result(message: Message) -> _Block:
    block: _Block = {}
    content = message.get("content")
    if isinstance(content, str):
        if _has_text(content):
            block["content"] = content
    elif content:
        parts = _parts(content)
        if parts:
            block["content"] = parts
    block["tool_use_id"] = _wire_id(message["tool_call_id"])
    block["type"] = "tool_result"
    return block


def _system_blocks(message: Message) -> list[_Block]:
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            if part["type"] != "text":
                raise _Unsupported(
                    f"Anthropic's system prompt holds text only; move the {part['type']} "
                    "attachment into a user message"
                )
    return _parts(content)


def _convert(message: Message) -> _Piece:
    role = message["role"]
    if role == "assistant":
        blocks = _assistant_blocks(message)
    elif role == "tool":
        role = "user"
        blocks = [_tool_result(message)]
    elif role == "user":
        blocks = _parts(message.get("content"))
    else:
        blocks = _system_blocks(message)
    mark = -1
    user = bool(message.get("_cache_breakpoint"))
    if user or message.get(AUTO_MARK):
        mark = next(
            (i for i in range(len(blocks) - 1, -1, -1) if blocks[i]["type"] not in _UNCACHEABLE),
            -1,
        )
    return _Piece(role, blocks, mark, {"content": blocks, "role": role}, not user)


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
    """

    name = "anthropic"

    def __init__(self, *, max_cache_breakpoints: int = ANTHROPIC_MAX_BREAKPOINTS) -> None:
        if not 0 <= max_cache_breakpoints <= ANTHROPIC_MAX_BREAKPOINTS:
            raise ConfigError(
                f"max_cache_breakpoints must be between 0 and {ANTHROPIC_MAX_BREAKPOINTS}, "
                f"got {max_cache_breakpoints}"
            )
        self.max_cache_breakpoints = max_cache_breakpoints

    def compile(self, request: AdapterInput) -> dict[str, Any]:
        cache = request.cache if request.cache is not None else ConversionCache()  # empty is falsy
        system: list[_Piece] = []
        for index, message in enumerate(request.system):
            try:
                system.append(cache.convert(message, _convert))
            except _Unsupported as exc:
                raise CompileError(f"system prompt message {index}: {exc}") from None
        hoisted = 0
        turns: list[list[_Piece]] = []
        sizes: list[int] = []  # blocks in each turn so far
        marks: list[tuple[int, int, bool]] = []  # (turn, block, auto) of each breakpoint
        try:
            pieces = cache.convert_all(request.messages, _convert)
        except _Unsupported:
            raise _locate(request.messages) from None
        for piece in pieces:
            if piece.role == "system":
                system.append(piece)
                hoisted += 1
            elif piece.blocks:
                _add(piece, turns, sizes, marks)
        if request.prefill is not None and _has_text(request.prefill):
            if not turns:  # nothing came before the prefill: the conversation starts here
                starts = [_text(prompts.CONVERSATION_STARTS)]
                lead = _Piece("user", starts, -1, {"content": starts, "role": "user"})
                _add(lead, turns, sizes, marks)
            prefill = [_text(request.prefill)]
            wire = {"content": prefill, "role": "assistant"}
            _add(_Piece("assistant", prefill, -1, wire), turns, sizes, marks)
        if hoisted:
            logger.debug("hoisted %d system message(s) from the history into `system`", hoisted)

        system_blocks: list[_Block] = []
        system_marks: list[tuple[int, int, bool]] = []
        for piece in system:
            if piece.mark >= 0:
                system_marks.append((-1, len(system_blocks) + piece.mark, piece.auto))
            system_blocks.extend(piece.blocks)
        messages = [turn[0].wire if len(turn) == 1 else _merged(turn, cache) for turn in turns]
        if not messages:  # the Messages API needs at least one message
            messages.append({"content": [_text(prompts.CONVERSATION_STARTS)], "role": "user"})
        _strip_final_whitespace(messages)
        budget = self.max_cache_breakpoints
        if request.max_breakpoints is not None:
            budget = max(0, min(budget, request.max_breakpoints))
        self._place_breakpoints(system_blocks, messages, system_marks + marks, budget)

        payload: dict[str, Any] = {}
        if request.server_compaction is not None:  # `betas`, `context_management` sort first
            payload.update(compaction_keys(request.server_compaction))
        payload["messages"] = messages
        if system_blocks:
            payload["system"] = system_blocks
        if request.tools:
            payload["tools"] = [cache.convert(tool, _tool) for tool in request.tools]
        return payload

    def _place_breakpoints(
        self,
        system_blocks: list[_Block],
        messages: list[dict[str, Any]],
        marks: list[tuple[int, int, bool]],
        keep: int,
    ) -> None:
        """Put `cache_control` on the newest marked blocks, within the budget `keep`: the host's
        own marks first, automatic ones in what they leave."""
        own = [mark for mark in marks if not mark[2]]
        if len(own) > keep:
            if keep:
                logger.warning(
                    "%d cache breakpoints marked, %d allowed per request: dropped the %d oldest",
                    len(own),
                    keep,
                    len(own) - keep,
                )
            own = own[len(own) - keep :]
        room = keep - len(own)
        auto = [mark for mark in marks if mark[2]]
        chosen = {(turn, at) for turn, at, _ in own}
        chosen.update(
            (turn, at) for turn, at, _ in (auto[max(0, len(auto) - room) :] if room else ())
        )
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
        except _Unsupported as exc:
            return CompileError(str(exc), index=index)
    return CompileError("a message could not be converted")  # pragma: no cover


def _add(
    piece: _Piece,
    turns: list[list[_Piece]],
    sizes: list[int],
    marks: list[tuple[int, int, bool]],
) -> None:
    """Append `piece` to the last turn if it has the same role, else start a new turn.

    Anthropic wants the user to speak first: an assistant piece arriving first is preceded by
    the placeholder user turn `ensure_valid_history` uses.
    """
    if not turns and piece.role == "assistant":
        lead = [_text(prompts.CONVERSATION_CONTINUES)]
        turns.append([_Piece("user", lead, -1, {"content": lead, "role": "user"})])
        sizes.append(1)
    if turns and turns[-1][0].role == piece.role:
        offset = sizes[-1]
        turns[-1].append(piece)
        sizes[-1] += len(piece.blocks)
    else:
        offset = 0
        turns.append([piece])
        sizes.append(len(piece.blocks))
    if piece.mark >= 0:
        marks.append((len(turns) - 1, offset + piece.mark, piece.auto))


class _Merge:
    """The wire form of a turn merged from several pieces, and the pieces it was built from."""

    __slots__ = ("pieces", "wire")

    def __init__(self) -> None:
        self.pieces: tuple[_Piece, ...] = ()
        self.wire: dict[str, Any] = {}


def _merged(turn: list[_Piece], cache: ConversionCache) -> dict[str, Any]:
    """One turn of several pieces, as the same object as long as its pieces are the same: the
    conversion cache keeps each piece per message, and keeping the merged turn too lets
    everything that memoises by identity (token counts, the cache ledger) skip it next compile.
    The memo is keyed by the first piece's block list, an object only that piece holds."""
    merge: _Merge = cache.convert(turn[0].blocks, lambda _: _Merge())
    pieces = merge.pieces
    if len(pieces) != len(turn) or any(a is not b for a, b in zip(pieces, turn, strict=True)):
        merge.pieces = tuple(turn)
        merge.wire = {"content": [b for p in turn for b in p.blocks], "role": turn[0].role}
    return merge.wire


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
