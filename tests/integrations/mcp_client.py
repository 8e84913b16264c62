"""A blocking MCP client for tests: the SDK's own `ClientSession` over stdio (a subprocess of
`contextchef mcp`) or streamable HTTP, driven from a portal thread so sync tests can share one
session for a whole module."""

from __future__ import annotations

import json
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, ClassVar

import anyio.from_thread
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

PROJECT = "team:mcp"


def server_args(store: Path | str, *extra: str) -> list[str]:
    return ["-m", "contextchef", "mcp", "--store", str(store), "--project", PROJECT, *extra]


class Client:
    """One MCP session whose coroutine methods are called through a blocking portal."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.session, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.portal.call(lambda: method(*args, **kwargs))

        return call

    def text(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        """`(is_error, text)` of one tool call."""
        result = self.call_tool(tool, arguments)
        (part,) = result.content
        return bool(result.is_error), part.text


@asynccontextmanager
async def _stdio_session(args: list[str], env: dict[str, str]) -> Any:
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    with Path(env["CONTEXTCHEF_HOME"], "server.log").open("a") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


@asynccontextmanager
async def _http_session(url: str) -> Any:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def _through_portal(manager: AbstractContextManager[Any] | Any) -> Iterator[Client]:
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(manager) as session,
    ):
        yield Client(portal, session)


def stdio_client_for(args: list[str], home: Path) -> AbstractContextManager[Client]:
    """A session with a `contextchef mcp` subprocess started with `args`."""
    home.mkdir(parents=True, exist_ok=True)
    return _through_portal(_stdio_session(args, {"CONTEXTCHEF_HOME": str(home)}))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def http_server(args: list[str], home: Path) -> Iterator[str]:
    """A `contextchef mcp --transport http` subprocess on a free loopback port; its URL."""
    port = free_port()
    home.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, *args, "--transport", "http", "--port", str(port)]
    env = {"CONTEXTCHEF_HOME": str(home), "PATH": "/usr/bin:/bin"}
    log = home / "server.log"
    with log.open("w") as errors:
        process = subprocess.Popen(command, env=env, stderr=errors)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"the server exited: {log.read_text()}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("the HTTP server did not start listening")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def http_client_for(url: str) -> AbstractContextManager[Client]:
    return _through_portal(_http_session(url))


class RawStdio:
    """A `contextchef mcp` subprocess spoken to line by line, for requests the SDK's client
    cannot send (a lone surrogate escape, a `params` that is a string)."""

    INITIALIZE: ClassVar[dict[str, Any]] = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("ascii") + b"\n")
        self.process.stdin.flush()

    def ask(self, line: str) -> dict[str, Any]:
        """Send one JSON-RPC line and read the next line the server writes, as JSON. A server
        that never answers fails the test after a minute (a guard, not a timing)."""
        self.send(line)
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        assert ready, f"no answer to {line}"
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        return answer


@contextmanager
def raw_stdio(args: list[str], home: Path) -> Iterator[RawStdio]:
    """An initialized `contextchef mcp` subprocess for `RawStdio` lines."""
    home.mkdir(parents=True, exist_ok=True)
    env = {"CONTEXTCHEF_HOME": str(home), "PATH": "/usr/bin:/bin"}
    with (home / "server.log").open("a") as errors:
        process = subprocess.Popen(
            [sys.executable, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
        )
    raw = RawStdio(process)
    try:
        assert "result" in raw.ask(json.dumps(RawStdio.INITIALIZE))
        raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield raw
    finally:
        process.kill()
        process.communicate(timeout=30)  # waits, and closes the pipes
