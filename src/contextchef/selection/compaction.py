"""Durable compaction: summarise old turns with the user's model, or clear them mechanically.

These are pure functions over IR messages (the model call enters as a parameter), usable on
their own to compact a history the host persists, and used by the overflow strategies.

- `prepare_for_summary` turns messages into a plain transcript any provider accepts: tool calls
  and results become text, large tool results become stubs, attachments become placeholders,
  consecutive messages of one role are merged, and the instruction comes last as a user turn.
- `summarize_history` / `asummarize_history` call the model on that transcript and keep only
  the `<summary>` part of its answer.
- `plan_compaction` and `compact_history` split on turn boundaries and replace the old part
  with one summary message; `compact_messages` clears old tool results, thinking or
  `<think>` tags without any model call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from contextchef import prompts
from contextchef._effects import Call, Flow, drive_async, drive_sync
from contextchef._repair import ensure_valid_history
from contextchef.errors import ConfigError
from contextchef.messages import Message, content_text, group_turns

__all__ = [
    "CompactionPlan",
    "Compressor",
    "asummarize_history",
    "compact_history",
    "compact_messages",
    "format_summary",
    "plan_compaction",
    "prepare_for_summary",
    "summarize_history",
    "summary_flow",
    "summary_message",
]

Compressor = Callable[[list[Message]], Any]
"""The user's model: takes the transcript (IR messages), returns the summary text (or awaits)."""

_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.S | re.I)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S | re.I)
_BLANK_LINES = re.compile(r"\n{3,}")
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)


def format_summary(raw: str) -> str:
    """Keep what the model meant as the summary: drop `<analysis>` blocks, take the first
    `<summary>` block if any, collapse runs of blank lines, trim."""
    text = _ANALYSIS.sub("", raw)
    match = _SUMMARY.search(text)
    if match:
        text = match.group(1)
    return _BLANK_LINES.sub("\n\n", text).strip()


def _tool_names(messages: Iterable[Message]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            names[call["id"]] = call["function"]["name"]
    return names


def _flat_text(message: Message) -> str:
    content = message.get("content")
    if not isinstance(content, list):
        return content or ""
    pieces = []
    for part in content:
        if part["type"] == "text":
            pieces.append(part["text"])
        else:
            label = part.get("filename") or part.get("url")
            pieces.append(prompts.attachment_placeholder(part["type"], label))
    return "\n".join(pieces)


def prepare_for_summary(
    messages: Sequence[Message],
    instruction: str,
    *,
    tool_result_stub_threshold: int | None = None,
) -> list[Message]:
    """The transcript the compression model reads (see the module docstring)."""
    names = _tool_names(messages)
    flat: list[Message] = []
    for message in messages:
        role = message["role"]
        text = _flat_text(message)
        if role == "tool":
            name = names.get(message.get("tool_call_id", ""), "tool")
            if tool_result_stub_threshold is not None and len(text) > tool_result_stub_threshold:
                text = prompts.tool_result_stub(name, len(text))
            text = f"[{name} returned]\n{text}"
            role = "user"
        elif role == "assistant":
            calls = [
                f"[called {c['function']['name']} with {c['function']['arguments']}]"
                for c in message.get("tool_calls") or ()
            ]
            text = "\n".join(part for part in (text, *calls) if part)
        elif role == "system":
            role = "user"
            text = f"[system note]\n{text}"
        if not text:
            continue
        if flat and flat[-1]["role"] == role:
            flat[-1] = {"content": f"{flat[-1]['content']}\n\n{text}", "role": role}
        else:
            flat.append({"content": text, "role": role})
    if flat and flat[-1]["role"] == "user":
        flat[-1] = {"content": f"{flat[-1]['content']}\n\n{instruction}", "role": "user"}
    else:
        flat.append({"content": instruction, "role": "user"})
    return flat


def build_instruction(
    base: str | None = None,
    *,
    guidelines: Sequence[str] = (),
    extra: str | None = None,
) -> str:
    """The instruction for the compression model: ours, then the user's guidelines and extras."""
    text = base or prompts.COMPACTION_INSTRUCTION
    kept = [line.strip() for line in guidelines if line and line.strip()]
    if kept:
        numbered = "\n".join(f"{i}. {line}" for i, line in enumerate(kept, 1))
        text += f"\n\n{prompts.GUIDELINES_HEADER}\n{numbered}"
    if extra and extra.strip():
        text += f"\n\n{prompts.EXTRA_INSTRUCTIONS_HEADER}\n{extra.strip()}"
    return text


def summary_flow(
    messages: Sequence[Message],
    compress: Compressor,
    *,
    instruction: str | None = None,
    guidelines: Sequence[str] = (),
    extra_instructions: str | None = None,
    tool_result_stub_threshold: int | None = None,
) -> Flow[str]:
    """The summarisation as a flow (one `Call` of the model); errors of the model propagate."""
    if not messages:
        return ""
    text = build_instruction(instruction, guidelines=guidelines, extra=extra_instructions)
    transcript = prepare_for_summary(
        messages, text, tool_result_stub_threshold=tool_result_stub_threshold
    )
    raw = yield Call.of(compress, transcript, what="compression model")
    if not isinstance(raw, str):
        raise TypeError(f"the compression model must return a string, got {type(raw).__name__}")
    return format_summary(raw)


def summarize_history(messages: Sequence[Message], compress: Compressor, **options: Any) -> str:
    """Summarise `messages` with `compress` (sync); `""` for no messages, without a call."""
    return drive_sync(summary_flow(messages, compress, **options))


async def asummarize_history(
    messages: Sequence[Message], compress: Compressor, **options: Any
) -> str:
    """`summarize_history` for a compression model that may be a coroutine function."""
    return await drive_async(summary_flow(messages, compress, **options))


def summary_message(summary: str, *, window: str | None = None) -> Message:
    """The user message that replaces a summarised span."""
    return {"content": prompts.summary_wrapper(summary, window=window), "role": "user"}


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """How a history splits: system messages, the turns to summarise, the turns to keep.

    Pinned turns of the old part move to the front of `to_keep`, in order.
    """

    system: list[Message]
    to_summarize: list[Message]
    to_keep: list[Message]


def plan_compaction(history: Sequence[Message], keep_recent_turns: float = 2) -> CompactionPlan:
    """Split `history` on turn boundaries, keeping the last `keep_recent_turns` turns."""
    keep = max(0, int(keep_recent_turns))
    repaired, _ = ensure_valid_history(list(history))
    system = [m for m in repaired if m["role"] == "system"]
    turns = group_turns([m for m in repaired if m["role"] != "system"])
    cut = max(0, len(turns) - keep)
    old, recent = turns[:cut], turns[cut:]
    pinned = [m for turn in old if turn.pinned for m in turn.messages]
    summarize = [m for turn in old if not turn.pinned for m in turn.messages]
    return CompactionPlan(system, summarize, pinned + [m for t in recent for m in t.messages])


def compact_history(
    history: list[Message],
    compress: Compressor,
    *,
    keep_recent_turns: float = 2,
    **options: Any,
) -> list[Message]:
    """Replace all but the last turns with one summary; return `history` itself when there is
    nothing to summarise or the summary comes back blank. Model errors propagate."""
    plan = plan_compaction(history, keep_recent_turns)
    if not plan.to_summarize:
        return history
    summary = summarize_history(plan.to_summarize, compress, **options)
    if not summary.strip():
        return history
    return [*plan.system, summary_message(summary), *plan.to_keep]


ClearTarget = Literal["tool-result", "thinking", "reasoning-tags"]


def compact_messages(
    history: Sequence[Message],
    clear: ClearTarget | Iterable[ClearTarget] = "tool-result",
    *,
    keep_recent: int = 0,
    tools: Iterable[str] | None = None,
    exempt_tools: Iterable[str] = (),
) -> list[Message]:
    """Mechanical clearing without a model call; pinned turns are never touched.

    - `"tool-result"`: tool results become a short placeholder, except the `keep_recent` most
      recent clearable ones; `tools` limits clearing to those tool names, `exempt_tools` wins.
    - `"thinking"`: `thinking` and `redacted_thinking` are removed from assistant messages.
    - `"reasoning-tags"`: `<think>…</think>` spans are removed from assistant text.

    Messages are replaced, never edited: the input is left as it was.
    """
    targets = {clear} if isinstance(clear, str) else set(clear)
    unknown = targets - {"tool-result", "thinking", "reasoning-tags"}
    if unknown:
        raise ConfigError(
            f"cannot clear {sorted(unknown)}; use tool-result, thinking or reasoning-tags"
        )
    if keep_recent < 0:
        raise ConfigError("keep_recent must be 0 or more")
    out = list(history)
    pinned = {i for turn in group_turns(out) if turn.pinned for i in range(turn.start, turn.stop)}
    if "tool-result" in targets:
        names = _tool_names(out)
        allowed = None if tools is None else set(tools)
        exempt = set(exempt_tools)
        clearable = [
            i
            for i, m in enumerate(out)
            if m["role"] == "tool"
            and i not in pinned
            and names.get(m.get("tool_call_id", "")) not in exempt
            and (allowed is None or names.get(m.get("tool_call_id", "")) in allowed)
            and content_text(m) != prompts.CLEARED_TOOL_RESULT
        ]
        for i in clearable[: len(clearable) - keep_recent if keep_recent else None]:
            out[i] = {**out[i], "content": prompts.CLEARED_TOOL_RESULT}
    for i, message in enumerate(out):
        if message["role"] != "assistant" or i in pinned:
            continue
        if "thinking" in targets and ("thinking" in message or "redacted_thinking" in message):
            dropped = ("thinking", "redacted_thinking")
            message = {k: v for k, v in message.items() if k not in dropped}  # type: ignore[assignment]
        content = message.get("content")
        if "reasoning-tags" in targets and isinstance(content, str) and _THINK.search(content):
            cleaned = _BLANK_LINES.sub("\n\n", _THINK.sub("", content)).strip()
            message = {**message, "content": cleaned}
        out[i] = message
    return out
