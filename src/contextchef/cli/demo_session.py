"""The live part of `contextchef demo`: the scripted agent run through a real `ContextChef`.

`Session` plays `FakeModel` (see `demo_script`) against a chef with a small window, an overflow
strategy with a fake summarizer, offloading and memory, on the store the user chose, and yields
one `TurnRecord` per model call; `Session.summary()` gives the figures the demo ends with. It
never prints: rendering is `demo_display`'s job, so the figures stay testable.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from contextchef.chef import ContextChef
from contextchef.cli.demo_script import (
    MEMORY_KEY,
    TOOLS,
    FakeModel,
    Reply,
    ToolCall,
    Workspace,
    fake_summarizer,
)
from contextchef.cli.report_model import ReportEvent, ReportTurn, payload_layers
from contextchef.payload import Payload
from contextchef.selection import summarize
from contextchef.store import StorageBackend, Store
from contextchef.tokens import EstimateTokenizer

SYSTEM_PROMPT = (
    "You are a careful coding agent working in the `shop` repository. Make small, tested "
    "changes, one tool call at a time, and keep what you learn in memory and notes."
)
_VFS_URI = re.compile(r"context://vfs/[A-Za-z0-9._/-]*[A-Za-z0-9_/-]")
_ARCHIVE_URI = re.compile(r"context://archive/[A-Za-z0-9._/-]*[A-Za-z0-9_/-]")


@dataclass(frozen=True)
class SessionOptions:
    """What the user chose on the command line."""

    turns: int = 150
    seed: int = 7
    window: int = 6000
    target: str = "openai"


@dataclass(frozen=True)
class TurnRecord:
    """One model call: its number, the window's tokens as sent (in total and per layer), the
    share of its prompt bytes reusable from the previous call, and what happened."""

    turn: int
    tokens: int
    window: int
    events: tuple[ReportEvent, ...]
    layers: dict[str, int] = field(default_factory=dict)
    reuse: float | None = None

    def report_turn(self) -> ReportTurn:
        """This call as the window report draws it."""
        return ReportTurn(self.turn, self.layers, self.window, self.reuse)


@dataclass
class SessionSummary:
    """The figures of one run; deterministic for a seed, a window and a target."""

    turns: int = 0
    window: int = 0
    peak_window_tokens: int = 0
    final_window_tokens: int = 0
    overflows: int = 0
    messages_summarized: int = 0
    offloads: int = 0
    offloaded_bytes: int = 0
    archived_spans: int = 0
    memory_entries: int = 0
    memory_at_start: list[str] = field(default_factory=list)
    context_reads: int = 0
    notes_saved: int = 0
    windows_exceeded: int = 0
    prefix_reuse_mean: float = 0.0
    prefix_reuse_min: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _kb(size: int) -> str:
    return f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} B"


class Session:
    """The scripted run: a fake model, a fake workspace and a real chef on `store`."""

    def __init__(self, options: SessionOptions, store: StorageBackend) -> None:
        self.options = options
        rng = random.Random(options.seed)
        self.model = FakeModel(rng)
        self.workspace = Workspace(rng)
        self.tokenizer = EstimateTokenizer()
        self.chef = ContextChef(
            store=store,
            tokenizer=self.tokenizer,
            memory={},
            budget={"context_window": options.window, "trigger_ratio": 0.8},
            overflow={"strategy": summarize(fake_summarizer, preserve_ratio=0.4)},
            offload={"threshold": 3000, "head_chars": 200, "tail_chars": 300, "error_chars": 400},
            default_target=options.target,
        ).set_system_prompt(SYSTEM_PROMPT)
        self.chef.tools.register(TOOLS)
        self.stats = SessionSummary(window=options.window)
        self.stats.memory_at_start = self._memory_keys()
        self._events: list[ReportEvent] = []
        self.records: list[TurnRecord] = []
        """Every call played so far (the window report draws them)."""
        self._turn = 0
        self._seen_vfs: set[str] = set()
        self._reuse: list[float] = []
        self.chef.on("compress:end", self._on_compress)
        self.chef.on("window:exceeded", self._on_exceeded)

    def memory_value(self, key: str) -> str | None:
        """A memory entry's value (for the display of what an earlier run left)."""
        entry = self.chef.memory.get(key)
        return None if entry is None else str(entry.value)

    def _memory_keys(self) -> list[str]:
        return sorted(entry.key for entry in self.chef.memory.entries())

    def _on_compress(self, event: Any) -> None:
        report = event.report
        if not report.changed:
            return
        self.stats.overflows += 1
        self.stats.messages_summarized += len(report.span)
        uris = _ARCHIVE_URI.findall(report.summary or "")
        if uris:
            self.stats.archived_spans += 1
        where = f" → {uris[0]}" if uris else ""
        text = f"overflow: {len(report.span)} messages summarized{where}"
        self._event("overflow", text, uris[0] if uris else None)

    def _on_exceeded(self, event: Any) -> None:
        self.stats.windows_exceeded += 1
        self._event("exceeded", f"window exceeded: {event.tokens} > {event.limit:.0f}")

    def _event(self, kind: str, text: str, uri: str | None = None) -> None:
        self._events.append(ReportEvent(self._turn, kind, text, uri))

    def run(self) -> Iterator[TurnRecord]:
        """Play the session, one model call per turn; the summary is complete afterwards."""
        history: list[Any] = []
        last_result = ""
        need_user = True
        for turn in range(1, self.options.turns + 1):
            self._turn = turn
            if need_user:
                history.append({"role": "user", "content": self.model.start_task()})
            payload = self.chef.set_history(history).compile()
            history = self.chef.history  # the compacted history, when overflow landed
            tokens = payload.meta.tokens.total
            text = json.dumps(payload, sort_keys=True)
            # the bytes the provider can serve from its cache (payload.meta.cache)
            reuse = payload.meta.cache.reuse_ratio if turn > 1 else None
            if reuse is not None:
                self._reuse.append(reuse)
            self._note_offloads(payload, text)
            layers = self.layers(payload)
            reply = self.model.reply(text, last_result)
            need_user = reply.call is None
            last_result = self._act(turn, reply, history)
            self._record_tokens(tokens)
            events, self._events = tuple(self._events), []
            record = TurnRecord(turn, tokens, self.options.window, events, layers, reuse)
            self.records.append(record)
            yield record
        self._finish()

    def layers(self, payload: Payload) -> dict[str, int]:
        """Tokens per layer of `payload`, the memory block counted apart (see `payload_layers`)."""
        return payload_layers(payload, self.tokenizer.count_text)

    def _record_tokens(self, tokens: int) -> None:
        self.stats.turns += 1
        self.stats.peak_window_tokens = max(self.stats.peak_window_tokens, tokens)
        self.stats.final_window_tokens = tokens

    def _finish(self) -> None:
        self.stats.memory_entries = len(self._memory_keys())
        if self._reuse:
            self.stats.prefix_reuse_mean = round(sum(self._reuse) / len(self._reuse), 4)
            self.stats.prefix_reuse_min = round(min(self._reuse), 4)

    def _note_offloads(self, payload: Payload, text: str) -> None:
        """Every vfs URI the payload shows for the first time is a tool output just offloaded."""
        for uri in _VFS_URI.findall(text):
            if uri in self._seen_vfs:
                continue
            self._seen_vfs.add(uri)
            parsed = Store.parse_uri(uri)
            if parsed is None:
                continue
            entry = self.chef.store.namespace(parsed[0]).get(parsed[1])
            size = len(entry.content.encode()) if entry is not None else 0
            self.stats.offloads += 1
            self.stats.offloaded_bytes += size
            self._event("offload", f"offloaded {_kb(size)} → {uri}", uri)

    def _act(self, turn: int, reply: Reply, history: list[Any]) -> str:
        """Append the model's message and, for a tool call, run it and append its result."""
        call = reply.call
        if call is None:
            history.append({"role": "assistant", "content": reply.text})
            return ""
        call_id = f"call_{turn:04d}"
        arguments = json.dumps(call.arguments, sort_keys=True)
        history.append(
            {
                "role": "assistant",
                "content": reply.text,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": arguments},
                    }
                ],
            }
        )
        result = self._run_tool(call)
        history.append({"role": "tool", "tool_call_id": call_id, "content": result})
        return result

    def _run_tool(self, call: ToolCall) -> str:
        """A workspace tool (faked) or the library's `context` tool (real)."""
        args = call.arguments
        if call.name == "read_file":
            return self.workspace.read_file(str(args["path"]))
        if call.name == "run_tests":
            return self.workspace.run_tests(self.model.module, passing=self.model.fix_holds())
        if call.name == "edit_file":
            return f"Applied 1 edit to {args['path']}."
        result = self.chef.handle_tool("context", args)
        self._note_context_call(args, result)
        return result

    def _note_context_call(self, args: dict[str, Any], result: str) -> None:
        command, path = args.get("command"), str(args.get("path", ""))
        failed = result.startswith("Error")
        if command == "view":
            self.stats.context_reads += 1
            lines = args.get("view_range")
            span = f" lines {lines[0]}-{lines[1]}" if lines else ""
            self._event("context", f"context: read {path}{span}", path)
        elif path.startswith("memory/"):
            what = "kept from an earlier run" if failed else "saved"
            self._event(
                "memory", f"memory: {what} {path.removeprefix('memory/')}", f"context://{path}"
            )
        elif not failed:
            self.stats.notes_saved += 1
            self._event("note", f"note: saved context://{path}", f"context://{path}")


__all__ = [
    "MEMORY_KEY",
    "Session",
    "SessionOptions",
    "SessionSummary",
    "TurnRecord",
]
