"""`contextchef mcp` as MCP clients see it: the SDK's own client over stdio against a subprocess
(and over streamable HTTP on loopback). Every `context` call answers exactly what the chef's
`handle_tool` answers; mistakes and hostile paths are tool errors; the session survives them."""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import typer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    PARSE_ERROR,
    CallToolRequestParams,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from typer.testing import CliRunner

from contextchef import (
    AsyncPostgresBackend,
    ContextChef,
    InMemoryBackend,
    MissingDependencyError,
    SQLiteBackend,
    get_context_tool_definition,
)
from contextchef.cli import app
from contextchef.cli.mcp import open_backend
from contextchef.integrations.mcp import ContextServer
from contextchef.integrations.mcp_guard import unreadable_reply
from contextchef.integrations.mcp_resources import mime_type
from tests.docs_pages import section_text
from tests.integrations.mcp_client import (
    PROJECT,
    Client,
    RawStdio,
    http_client_for,
    http_server,
    raw_stdio,
    server_args,
    stdio_client_for,
)

SESSION = [
    {"command": "create", "path": "context://notes/plan.md", "file_text": "1. parse\n2. test\n"},
    {"command": "view", "path": "context://notes/plan.md"},
    {"command": "str_replace", "path": "notes/plan.md", "old_str": "parse", "new_str": "lex"},
    {"command": "insert", "path": "context://notes/plan.md", "insert_line": 1, "insert_text": "x"},
    {"command": "view", "path": "context://notes/"},
    {"command": "search", "path": "context://notes/", "query": "lex"},
    {"command": "rename", "path": "context://notes/plan.md", "new_path": "context://notes/p.md"},
    {"command": "create", "path": "context://memory/user.md", "file_text": "prefers tabs"},
    {"command": "view", "path": "context://memory/user.md", "view_range": [1, -1]},
    {"command": "delete", "path": "context://notes/p.md"},
    {"command": "view", "path": "context://notes/p.md"},
]
MISTAKES: list[dict[str, Any]] = [
    {},
    {"command": "bogus", "path": "context://notes/a"},
    {"command": "view"},
    {"command": "view", "path": "context://notes/../../etc/passwd"},
    {"command": "view", "path": "/etc/passwd"},
    {"command": "view", "path": "file:///etc/passwd"},
    {"command": "view", "path": "context://notes/a\u0000b"},
    {"command": "view", "path": "context://notes/" + "x" * 5000},
    {"command": "view", "path": "context://notes/a", "view_range": "all"},
    {"command": "create", "path": "context://vfs/x.txt", "file_text": "y"},
    {"command": "create", "path": "context://archive/../notes/x", "file_text": "y"},
    {"command": "create", "path": "context://notes/big.txt", "file_text": "x" * 300_000},
    {"command": "insert", "path": "context://notes/none.md", "insert_line": -4},
    {"command": ["view"], "path": 7},
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp") / "context.db"


@pytest.fixture(scope="module")
def client(store: Path) -> Iterator[Client]:
    with stdio_client_for(server_args(store), store.parent / "home") as session:
        yield session


def test_it_lists_the_context_tool_as_defined_and_a_search_tool(client: Client) -> None:
    tools = {tool.name: tool for tool in client.list_tools().tools}
    assert sorted(tools) == ["context", "search"]
    definition = get_context_tool_definition()
    assert tools["context"].description == definition["description"]
    assert tools["context"].input_schema == json.loads(json.dumps(definition["parameters"]))
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["search"].annotations is not None and tools["search"].annotations.read_only_hint


def test_every_command_answers_what_handle_tool_answers(client: Client) -> None:
    chef = ContextChef(memory={})
    for arguments in SESSION:
        expected = chef.handle_tool("context", arguments)
        assert client.text("context", arguments) == (expected.startswith("Error: "), expected)


def test_mistakes_and_hostile_paths_are_tool_errors_and_the_session_goes_on(
    client: Client,
) -> None:
    chef = ContextChef(memory={})
    for arguments in MISTAKES:
        expected = chef.handle_tool("context", arguments)
        assert expected.startswith("Error: "), arguments
        assert client.text("context", arguments) == (True, expected)
    with pytest.raises(MCPError, match="unknown tool 'nope'"):
        client.call_tool("nope", {})
    no_query = chef.handle_tool("context", {"command": "search", "path": "memory/"})
    assert client.text("search", {}) == (True, no_query)
    create = {"command": "create", "path": "notes/after.md", "file_text": "still here"}
    assert client.text("context", create) == (False, "Created context://notes/after.md.")


def test_search_looks_through_every_namespace_or_one_path(client: Client) -> None:
    client.text("context", {"command": "create", "path": "notes/s1.md", "file_text": "zebra one"})
    client.text("context", {"command": "create", "path": "memory/s2", "file_text": "zebra two"})
    is_error, text = client.text("search", {"query": "zebra"})
    assert not is_error
    assert "context://notes/s1.md" in text and "context://memory/s2" in text
    is_error, text = client.text("search", {"query": "zebra", "path": "context://notes/"})
    assert "context://notes/s1.md" in text and "memory" not in text
    roots = "context://memory/, context://notes/, context://vfs/, context://archive/"
    assert client.text("search", {"query": "okapi"}) == (
        False,
        f'No matches for "okapi" under {roots}.',
    )


def test_entries_are_resources_with_mime_types(client: Client) -> None:
    client.text("context", {"command": "create", "path": "notes/r.json", "file_text": "{}"})
    client.text("context", {"command": "create", "path": "memory/r", "file_text": "fact"})
    listed = {str(r.uri): r for r in client.list_resources().resources}
    assert listed["context://notes/r.json"].mime_type == "application/json"
    assert listed["context://memory/r"].mime_type == "text/plain"
    assert listed["context://notes/r.json"].size == 2
    (template,) = client.list_resource_templates().resource_templates
    assert template.uri_template == "context://{namespace}/{path}"
    (content,) = client.read_resource("context://notes/r.json").contents
    assert (content.text, content.mime_type) == ("{}", "application/json")
    (content,) = client.read_resource("context://memory/r").contents
    assert content.text == "fact"
    for missing in ("context://notes/none", "context://notes/", "file:///etc/passwd"):
        with pytest.raises(MCPError):
            client.read_resource(missing)
    assert client.text("context", {"command": "view", "path": "notes/r.json"})[0] is False


def test_the_memory_block_is_a_prompt(client: Client) -> None:
    client.text("context", {"command": "create", "path": "memory/editor", "file_text": "vim"})
    (prompt,) = client.list_prompts().prompts
    assert prompt.name == "memory"
    (message,) = client.get_prompt("memory").messages
    assert "vim" in message.content.text and "editor" in message.content.text
    with pytest.raises(MCPError):
        client.get_prompt("other")


def test_mime_types_follow_the_path() -> None:
    assert mime_type("notes", "plan.md") == "text/markdown"
    assert mime_type("notes", "plan") == "text/plain"
    assert mime_type("vfs", "vfs_0123.txt") == "text/plain"
    assert mime_type("archive", "archive_0123.txt") == "application/json"
    assert mime_type("notes", "dir.d/file") == "text/plain"


def test_two_clients_on_one_sqlite_file_see_each_others_writes(tmp_path: Path) -> None:
    store = tmp_path / "shared.db"
    with (
        stdio_client_for(server_args(store), tmp_path / "a") as first,
        stdio_client_for(server_args(store), tmp_path / "b") as second,
    ):
        first.text("context", {"command": "create", "path": "notes/n.md", "file_text": "from A"})
        assert "from A" in second.text("context", {"command": "view", "path": "notes/n.md"})[1]
        second.text("context", {"command": "create", "path": "memory/k", "file_text": "from B"})
        (content,) = first.read_resource("context://memory/k").contents
        assert content.text == "from B"
        edit = {"command": "str_replace", "path": "notes/n.md", "old_str": "A", "new_str": "B!"}
        assert second.text("context", edit) == (False, "Edited context://notes/n.md.")
        assert "from B!" in first.text("context", {"command": "view", "path": "notes/n.md"})[1]
        uris = {str(r.uri) for r in first.list_resources().resources}
        assert {"context://notes/n.md", "context://memory/k"} <= uris


def test_read_only_refuses_writes_with_tool_errors(tmp_path: Path) -> None:
    store = tmp_path / "ro.db"
    backend = SQLiteBackend(store, project=PROJECT)  # the host writes; the server only reads
    ContextChef(store=backend).store.namespace("notes").put("a.md", "kept")
    backend.close()
    chef = ContextChef(memory={}, context_tool={"writable": []})
    with stdio_client_for(server_args(store, "--read-only"), tmp_path / "r") as reader:
        tool = next(t for t in reader.list_tools().tools if t.name == "context")
        assert tool.annotations is not None and tool.annotations.read_only_hint
        for arguments in (
            {"command": "create", "path": "notes/b.md", "file_text": "x"},
            {"command": "str_replace", "path": "notes/a.md", "old_str": "kept", "new_str": "y"},
            {"command": "delete", "path": "notes/a.md"},
            {"command": "create", "path": "memory/k", "file_text": "x"},
        ):
            assert reader.text("context", arguments) == (
                True,
                chef.handle_tool("context", arguments),
            )
        assert "kept" in reader.text("context", {"command": "view", "path": "notes/a.md"})[1]


def test_streamable_http_on_loopback(tmp_path: Path) -> None:
    with (
        http_server(server_args(tmp_path / "http.db"), tmp_path / "home") as url,
        http_client_for(url) as client,
    ):
        assert {tool.name for tool in client.list_tools().tools} == {"context", "search"}
        created = client.text("context", {"command": "create", "path": "notes/h", "file_text": "x"})
        assert created == (False, "Created context://notes/h.")
        assert client.text("context", {"command": "bogus"})[0] is True
        (content,) = client.read_resource("context://notes/h").contents
        assert content.text == "x"


def test_without_the_extra_the_import_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp_types", None)
    monkeypatch.delitem(sys.modules, "contextchef.integrations.mcp", raising=False)
    with pytest.raises(MissingDependencyError, match=r"pip install 'contextchef\[mcp\]'") as info:
        importlib.import_module("contextchef.integrations.mcp")
    assert info.value.extra == "mcp"
    result = CliRunner().invoke(app, ["mcp", "--store", ":memory:"])
    assert result.exit_code == 1
    assert "contextchef[mcp]" in result.output


def test_the_documented_configuration_snippet_is_a_valid_command_line() -> None:
    body = section_text("how-to/mcp.md")
    (snippet,) = re.findall(r"```json\n(.*?)```", body, re.S)
    server = json.loads(snippet)["mcpServers"]["contextchef"]
    assert server["command"] == "contextchef"
    root: Any = typer.main.get_command(app)
    parent = root.make_context("contextchef", [], resilient_parsing=True)
    command = root.get_command(parent, server["args"][0])
    assert command is not None
    context = command.make_context(server["args"][0], list(server["args"][1:]))
    assert context.params["project"] == "/home/me/code/app"
    assert context.params["transport"] == "stdio"


def test_the_store_option_picks_the_backend(tmp_path: Path) -> None:
    assert isinstance(open_backend(":memory:", None), InMemoryBackend)
    sqlite = open_backend(str(tmp_path / "x.db"), "team:cli")
    assert isinstance(sqlite, SQLiteBackend) and sqlite.path == tmp_path / "x.db"
    sqlite.close()
    postgres = open_backend("postgresql://nobody@127.0.0.1:1/none", "team:cli")
    assert isinstance(postgres, AsyncPostgresBackend)  # its pool opens on first use
    result = CliRunner().invoke(app, ["mcp", "--store", ":memory:", "--transport", "sse"])
    assert result.exit_code == 2 and "stdio or http" in result.output


def call_line(params: str, ident: int = 7) -> str:
    return f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call","params":{params}}}'


# (the raw request line, the JSON-RPC error code, a fragment of its message): lines the SDK's
# stdio transport cannot read, which it used to drop without an answer
UNREADABLE = [
    (
        call_line(
            '{"name":"context","arguments":{"command":"create","path":"notes/s.md",'
            '"file_text":"x\\ud800"}}'
        ),
        INVALID_PARAMS,
        "params.arguments.file_text holds the lone surrogate U+D800",
    ),
    (call_line('{"name":"\\udfff","arguments":{}}'), INVALID_PARAMS, "params.name holds"),
    (call_line('"context"'), INVALID_PARAMS, "params must be an object (a JSON dict), got a str"),
    (call_line('["context"]'), INVALID_PARAMS, "got an array"),
    ("tools/call {", PARSE_ERROR, "Parse error"),
]


def test_requests_the_sdk_cannot_read_are_answered_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with raw_stdio(server_args(tmp_path / "raw.db"), home) as raw:
        for line, code, text in UNREADABLE:
            answer = raw.ask(line)
            assert answer["id"] == (None if code == PARSE_ERROR else 7), line
            assert answer["error"]["code"] == code, line
            assert text in answer["error"]["message"], line
        view = call_line('{"name":"context","arguments":{"command":"view","path":"notes/s.md"}}')
        answer = raw.ask(view)
        assert answer["result"]["isError"] is True  # the refused create wrote nothing
        assert "notes/s.md" in answer["result"]["content"][0]["text"]
    assert (home / "server.log").read_text().count("an unreadable MCP message") == len(UNREADABLE)


def test_over_http_unreadable_requests_get_json_rpc_errors(tmp_path: Path) -> None:
    with http_server(server_args(tmp_path / "http.db"), tmp_path / "home") as url:
        headers = {"Accept": "application/json, text/event-stream"}
        hello = httpx.post(url, headers=headers, json=RawStdio.INITIALIZE, timeout=60)
        headers["mcp-session-id"] = hello.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = "2025-06-18"
        headers["Content-Type"] = "application/json"
        for line, code, _ in UNREADABLE[:3]:
            answer = httpx.post(url, headers=headers, content=line, timeout=60)
            assert answer.status_code == 400, line
            assert answer.json()["error"]["code"] in (code, PARSE_ERROR), line


def test_a_lone_surrogate_that_reaches_a_tool_call_is_a_tool_error() -> None:
    """A transport that reads "\\ud800" with Python's `json` hands the string to the server."""
    server = ContextServer("memory")
    params = CallToolRequestParams(
        name="context", arguments={"command": "create", "path": "notes/a\ud800", "file_text": "x"}
    )
    result = anyio.run(server._call_tool, None, params)  # the SDK's on_call_tool handler
    (part,) = result.content
    assert result.is_error and "path holds the lone surrogate U+D800" in part.text
    json.dumps(result.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","method":"notifications/x","params":"p"}',  # a notification
        '{"jsonrpc":"2.0","id":3,"result":"x\\ud800"}',  # a response
    ],
)
def test_what_is_not_a_request_gets_no_reply(line: str) -> None:
    with pytest.raises(ValidationError) as caught:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    assert unreadable_reply(caught.value) is None
