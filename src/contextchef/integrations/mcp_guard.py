"""Every MCP request gets an answer: what the SDK's transport cannot read is answered here.

The `mcp` SDK's stdio transport parses each line with pydantic; a line it cannot read (a
`\ud800` escape, which pydantic's JSON parser refuses as invalid Unicode; a `params` that is
a string) is put on the read stream as the exception, and the server's dispatcher drops it with
a debug log, so the client waits forever. Upstream: modelcontextprotocol/python-sdk#2751 (open;
the fix proposed in #2766 was closed unmerged); the SDK's HTTP transport already answers such
requests (400, with a JSON-RPC error), so only stdio needs this guard.
`AnsweringReadStream` wraps the read stream a transport hands the server: it passes messages on
and answers each unreadable request itself, on the transport's write stream, with a JSON-RPC
error that names the request id (`PARSE_ERROR` with id null when there is none to name). A
notification (no id) is never answered, as JSON-RPC says; every unreadable line is logged.

`unreadable_reply` is pure: the error for one such exception, or None.
"""

from __future__ import annotations

import json
import logging
from types import TracebackType
from typing import Any, Self

from pydantic import ValidationError

from contextchef._hosttext import find_surrogate
from contextchef.errors import MissingDependencyError

try:
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage
except ImportError as exc:  # pragma: no cover - exercised by simulating the import failing
    raise MissingDependencyError(exc.name or "mcp", "mcp") from exc

__all__ = ["AnsweringReadStream", "unreadable_reply"]

logger = logging.getLogger("contextchef.integrations.mcp")


def unreadable_reply(exc: Exception) -> types.JSONRPCError | None:
    """The JSON-RPC error answering the request the transport could not read, or None (not a
    request, or a notification: nothing to answer)."""
    if not isinstance(exc, ValidationError):
        return None
    request: Any = None
    for error in exc.errors(include_url=False):
        given = error.get("input")
        if error.get("type") == "json_invalid" and isinstance(given, str | bytes):
            try:
                request = json.loads(given)  # Python's parser reads a lone surrogate escape
            except (ValueError, RecursionError):
                return _error(None, types.PARSE_ERROR, "Parse error: the message is not JSON")
            break
        if isinstance(given, dict) and "method" in given:
            request = given
            break
    if not isinstance(request, dict) or "method" not in request or "id" not in request:
        return None  # a response, or a notification: JSON-RPC answers neither
    ident = request["id"]
    if type(ident) not in (str, int):
        return _error(
            None, types.INVALID_REQUEST, "Invalid request: the id must be a string or int"
        )
    found = find_surrogate(request)
    if found is not None:
        path, problem = found
        where = ".".join(str(step) for step in path) or "the request"
        code = types.INVALID_PARAMS if path[:1] == ["params"] else types.INVALID_REQUEST
        return _error(ident, code, f"Invalid params: {where} {problem}")
    params = request.get("params")
    if params is not None and not isinstance(params, dict):
        kinds: dict[type, str] = {str: "a string", list: "an array"}
        kind = kinds.get(type(params), type(params).__name__)
        text = f"Invalid params: params must be an object (a JSON dict), got {kind}"
        return _error(ident, types.INVALID_PARAMS, text)
    return _error(ident, types.INVALID_REQUEST, "Invalid request: not a JSON-RPC request")


def _error(ident: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message)
    )


class AnsweringReadStream:
    """A transport's read stream, with the unreadable requests answered on `write_stream`
    instead of passed on (the server would drop them)."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    def __getattr__(self, name: str) -> Any:  # e.g. `last_context`, read by the dispatcher
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        while True:
            item = await self._inner.__anext__()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc_val, exc_tb)
        return result

    async def _answer(self, exc: Exception) -> None:
        reply = unreadable_reply(exc)
        logger.warning(
            "an unreadable MCP message (%s)%s",
            type(exc).__name__,
            f": answered with error {reply.error.code}" if reply is not None else "",
        )
        if reply is None:
            return
        try:
            await self._write.send(SessionMessage(reply))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.warning("the client left before its unreadable request was answered")
