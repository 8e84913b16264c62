"""The context store over MCP: `contextchef mcp`, built on the official `mcp` SDK (extra `mcp`).

    server = ContextServer(SQLiteBackend("context.db"))
    anyio.run(server.run_stdio)          # or: await server.run_http(port=8765)

What a client gets:

- the `context` tool: the very definition a payload carries, run by the chef's own
  `handle_tool`, so the seven commands, the access policy (memory/ and notes/ writable by
  default; nothing with `read_only=True`) and every `Error: …` text are those of a payload;
- a `search` tool: the context tool's `search` over every namespace at once (or one path);
- every entry as a resource `context://<namespace>/<path>` (listed in pages, with MIME types),
  and the template `context://{namespace}/{path}` to read any other;
- the memory block as the `memory` prompt.

It uses the SDK's low-level `Server` rather than `MCPServer`, because the `context` tool's input
schema must be exactly our definition and a malformed call must come back as our `Error: …`
text (a tool result with `isError`), not as the SDK's validation message. A tool name the
server does not serve, a resource that does not exist and a bad cursor are protocol errors
(`INVALID_PARAMS`); nothing a client sends ends the session, and every request is answered:
one the SDK's stdio transport cannot read (a lone surrogate escape, a `params` that is not an
object) gets a JSON-RPC error from `mcp_guard`, and a lone surrogate that reaches a tool call
(HTTP parses with Python's `json`) an `isError` result.

Several servers (several clients) on one SQLite file or PostgreSQL schema see each other's
writes: every call reads the store, nothing is cached in the process.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from contextchef.errors import ContextChefError, MissingDependencyError

try:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError
except ImportError as exc:  # pragma: no cover - exercised by simulating the import failing
    raise MissingDependencyError(exc.name or "mcp", "mcp") from exc

from contextchef import prompts
from contextchef._hosttext import encodable, find_surrogate
from contextchef._jsonvalue import copy_json
from contextchef._version import __version__
from contextchef.chef import AsyncContextChef
from contextchef.integrations.mcp_guard import AnsweringReadStream
from contextchef.integrations.mcp_resources import (
    ResourceMissing,
    list_entries,
    read_entry,
)
from contextchef.memory.entry import MEMORY_NAMESPACE
from contextchef.prompts.mcp import (
    MEMORY_PROMPT_DESCRIPTION,
    RESOURCE_TEMPLATE_DESCRIPTION,
    SEARCH_TOOL_DESCRIPTION,
    SEARCH_TOOL_PARAMETERS,
    server_instructions,
    store_failed,
)
from contextchef.retrieval.context_tool import DEFAULT_WRITABLE
from contextchef.retrieval.definitions import CONTEXT_TOOL, get_context_tool_definition
from contextchef.store.aio import AsyncStore
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.paths import format_uri

__all__ = ["DEFAULT_NAMESPACES", "MEMORY_PROMPT", "SEARCH_TOOL", "ContextServer"]

logger = logging.getLogger("contextchef.integrations.mcp")

DEFAULT_NAMESPACES: Final = ("memory", "notes", "vfs", "archive")
SEARCH_TOOL: Final = "search"
MEMORY_PROMPT: Final = "memory"
_ERROR_PREFIX: Final = "Error: "

Context = ServerRequestContext[Any, Any]


def _text_result(text: str) -> types.CallToolResult:
    if not encodable(text):  # a lone surrogate echoed from a request would fail the reply
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        is_error=text.startswith(_ERROR_PREFIX),
    )


class ContextServer:
    """An MCP server over one context store.

    Args:
        store: the store (a backend, an `AsyncStore`, `"memory"`, `"sqlite"` or a
            `postgresql://` DSN, as `AsyncContextChef(store=...)` takes it).
        memory: True (memory/ with the default options), a dict of `Memory` options, or
            False (no memory: memory/ is not served).
        writable: the namespaces the `context` tool may write (default memory and notes).
        read_only: refuse every write (the `context` tool's read-only refusal).
        namespaces: the namespaces listed as resources and searched by `search`.
        name: the server name clients show.
    """

    def __init__(
        self,
        store: AsyncStore | StorageBackend | AsyncStorageBackend | str | None = None,
        *,
        memory: bool | Mapping[str, Any] = True,
        writable: Sequence[str] = DEFAULT_WRITABLE,
        read_only: bool = False,
        namespaces: Sequence[str] = DEFAULT_NAMESPACES,
        name: str = "contextchef",
    ) -> None:
        options = {} if memory is True else (None if memory is False else memory)
        policy = [] if read_only else list(writable)
        self.read_only = read_only
        self.has_memory = options is not None
        self.chef = AsyncContextChef(store=store, memory=options, context_tool={"writable": policy})
        self.namespaces = tuple(
            ns for ns in namespaces if ns != MEMORY_NAMESPACE or self.has_memory
        )
        self.server: Server[Any] = Server(
            name,
            version=__version__,
            instructions=server_instructions([format_uri(ns, "") for ns in policy]),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )

    # -- tools ------------------------------------------------------------------------------

    def tools(self) -> list[types.Tool]:
        """The tools this server offers: `context` (our definition) and `search`."""
        definition = get_context_tool_definition()
        return [
            types.Tool(
                name=definition["name"],
                description=definition["description"],
                input_schema=copy_json(dict(definition["parameters"])),
                annotations=types.ToolAnnotations(
                    read_only_hint=self.read_only,
                    destructive_hint=not self.read_only,
                    open_world_hint=False,
                ),
            ),
            types.Tool(
                name=SEARCH_TOOL,
                description=SEARCH_TOOL_DESCRIPTION,
                input_schema=copy_json(SEARCH_TOOL_PARAMETERS),
                annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
            ),
        ]

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> str:
        """Run one tool call and return its text (`Error: …` for a mistake the model can fix).

        A store failure the model cannot fix (a corrupt database) comes back as an `Error: …`
        text too, and is logged: a client never ends the session by calling a tool.
        """
        try:
            if name == CONTEXT_TOOL:
                return await self.chef.handle_tool(CONTEXT_TOOL, arguments)
            if name == SEARCH_TOOL:
                return await self._search(arguments)
        except ContextChefError as exc:
            logger.exception("the %s tool failed", name)
            return store_failed(str(exc))
        raise MCPError(
            types.INVALID_PARAMS, f"unknown tool {name!r}; this server has: context, search"
        )

    async def _search(self, arguments: Mapping[str, Any] | None) -> str:
        args = dict(arguments) if isinstance(arguments, Mapping) else {}
        if "path" in args and args["path"] is not None:
            return await self.chef.handle_tool(CONTEXT_TOOL, {**args, "command": "search"})
        roots = [format_uri(ns, "") for ns in self.namespaces]
        found = []
        for root in roots:
            text = await self.chef.handle_tool(
                CONTEXT_TOOL, {**args, "command": "search", "path": root}
            )
            if text.startswith(_ERROR_PREFIX):
                return text
            if text != prompts.no_matches(str(args.get("query")), root):
                found.append(text)
        if not found:
            return prompts.no_matches(str(args.get("query")), ", ".join(roots))
        return "\n\n".join(found)

    async def _list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools())

    async def _call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        found = find_surrogate(params.arguments) if params.arguments else None
        if found is not None:  # read by a transport that parses with Python's `json`
            where = ".".join(str(step) for step in found[0]) or "the arguments"
            return _text_result(f"{_ERROR_PREFIX}{where} {found[1]}; send valid Unicode text")
        return _text_result(await self.call(params.name, params.arguments))

    # -- resources --------------------------------------------------------------------------

    async def _list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        try:
            page, next_cursor = await list_entries(
                self.chef, self.namespaces, has_memory=self.has_memory, cursor=cursor
            )
        except ValueError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        resources = [
            types.Resource(
                uri=item.uri,
                name=item.path,
                description=item.description,
                mime_type=item.mime_type,
                size=item.size,
            )
            for item in page
        ]
        return types.ListResourcesResult(resources=resources, next_cursor=next_cursor)

    async def _list_templates(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template="context://{namespace}/{path}",
            name="entry",
            description=RESOURCE_TEMPLATE_DESCRIPTION,
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def _read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text, mime = await read_entry(self.chef, uri, has_memory=self.has_memory)
        except ResourceMissing as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc), {"uri": uri}) from None
        contents = [types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
        return types.ReadResourceResult(contents=contents)

    # -- the memory prompt ------------------------------------------------------------------

    async def memory_text(self) -> str:
        """The memory instruction and block, as the chef places them after the system prompt."""
        memory = self.chef.memory
        block = memory.render(await memory.entries(), self.chef.tools.vocabulary)
        instruction = self.chef.tools.vocabulary.memory_instruction
        return f"{instruction}\n\n{block}" if block else instruction

    async def _list_prompts(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        if not self.has_memory:
            return types.ListPromptsResult(prompts=[])
        prompt = types.Prompt(name=MEMORY_PROMPT, description=MEMORY_PROMPT_DESCRIPTION)
        return types.ListPromptsResult(prompts=[prompt])

    async def _get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != MEMORY_PROMPT or not self.has_memory:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}")
        text = await self.memory_text()
        message = types.PromptMessage(
            role="user", content=types.TextContent(type="text", text=text)
        )
        return types.GetPromptResult(description=MEMORY_PROMPT_DESCRIPTION, messages=[message])

    # -- transports -------------------------------------------------------------------------

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout until it disconnects."""
        async with stdio_server() as (read_stream, write_stream):
            options = self.server.create_initialization_options()
            answering = AnsweringReadStream(read_stream, write_stream)
            await self.server.run(answering, write_stream, options)

    async def run_http(
        self, *, host: str = "127.0.0.1", port: int = 8000, path: str = "/mcp"
    ) -> None:
        """Serve streamable HTTP at `http://host:port/path` until cancelled (or interrupted)."""
        import uvicorn

        app = self.server.streamable_http_app(streamable_http_path=path, host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning")
        await uvicorn.Server(config).serve()
