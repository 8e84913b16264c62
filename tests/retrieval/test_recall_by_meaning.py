"""Recall by meaning through the `context` tool: a note stored in one wording is found by
another, and the tool says which matches were found by meaning (issue 28)."""

from __future__ import annotations

import asyncio

from contextchef import AsyncContextChef, ContextChef, prompts
from contextchef.store import AsyncStore, InMemoryBackend, Store
from tests.semantic_embedding import DIMS, AsyncEmbedding, Embedding

FIX = "context://notes/auth-fix.md"
FIX_TEXT = "Retry on 401 in auth.py: the token refresh raced the request."
OTHERS = {
    "context://notes/weather.md": "Sunny weather forecast for the offsite on Friday.",
    "context://notes/lunch.md": "Lunch order: two pizzas, one salad.",
}
QUERY = "flaky login test"  # what the model remembers: none of these words is in the note


def _store_notes(chef: ContextChef) -> None:
    for path, text in {FIX: FIX_TEXT, **OTHERS}.items():
        reply = chef.handle_tool("context", {"command": "create", "path": path, "file_text": text})
        assert reply == prompts.created(path)


def test_a_note_stored_in_one_wording_is_found_by_another() -> None:
    plain = ContextChef(store=Store(InMemoryBackend()), tools="unified")
    _store_notes(plain)
    search = {"command": "search", "path": "context://notes/", "query": QUERY}
    assert plain.handle_tool("context", search) == prompts.no_matches(QUERY, "context://notes/")

    index = {"embed": Embedding(), "dims": DIMS}
    chef = ContextChef(store=Store(InMemoryBackend(), index=index), tools="unified")
    _store_notes(chef)
    lines = chef.handle_tool("context", search).splitlines()
    assert lines[0] == prompts.search_header(3, QUERY, "context://notes/")
    assert lines[1] == prompts.search_hit(FIX, FIX_TEXT, True)  # the best match, by meaning
    assert lines[-1] == prompts.search_by_meaning_note()
    assert all("(by meaning)" in line for line in lines[1:4])


def test_text_matches_are_not_marked_and_rank_first() -> None:
    chef = ContextChef(
        store=Store(InMemoryBackend(), index={"embed": Embedding(), "dims": DIMS}),
        tools="unified",
    )
    _store_notes(chef)
    reply = chef.handle_tool(
        "context", {"command": "search", "path": "context://notes/", "query": "token refresh"}
    )
    lines = reply.splitlines()
    assert lines[1].startswith(f"- {FIX}: ")  # found by its text too: not marked
    assert "(by meaning)" not in lines[1]
    assert lines[-1] == prompts.search_by_meaning_note()  # the others came by meaning


def test_the_async_chef_recalls_by_meaning_with_an_async_embedding() -> None:
    async def scenario() -> str:
        store = AsyncStore(InMemoryBackend(), index={"embed": AsyncEmbedding(), "dims": DIMS})
        chef = AsyncContextChef(store=store, tools="unified")
        for path, text in {FIX: FIX_TEXT, **OTHERS}.items():
            await chef.handle_tool(
                "context", {"command": "create", "path": path, "file_text": text}
            )
        return await chef.handle_tool(
            "context", {"command": "search", "path": "context://notes/", "query": QUERY}
        )

    assert asyncio.run(scenario()).splitlines()[1] == prompts.search_hit(FIX, FIX_TEXT, True)


def _context_description(chef: ContextChef) -> str:
    chef.set_history([{"role": "user", "content": "Where was that fix?"}])
    payload = chef.compile(target="openai")
    (tool,) = [t for t in payload["tools"] if t["function"]["name"] == "context"]
    return str(tool["function"]["description"])


def test_the_tool_says_its_search_finds_by_meaning_only_over_an_indexed_store() -> None:
    plain = ContextChef(store=Store(InMemoryBackend()), tools="unified")
    assert _context_description(plain) == prompts.CONTEXT_TOOL_DESCRIPTION  # bytes unchanged
    index = {"embed": Embedding(), "dims": DIMS}
    chef = ContextChef(store=Store(InMemoryBackend(), index=index), tools="unified")
    assert _context_description(chef) == prompts.CONTEXT_TOOL_DESCRIPTION_BY_MEANING
    assert "(by meaning)" in prompts.CONTEXT_TOOL_DESCRIPTION_BY_MEANING


def test_a_memory_fact_stored_in_one_wording_is_found_by_another() -> None:
    index = {"embed": Embedding(), "dims": DIMS}
    chef = ContextChef(store=Store(InMemoryBackend(), index=index), memory={}, tools="unified")
    facts = {"auth": FIX_TEXT, "weather": OTHERS["context://notes/weather.md"]}
    for key, text in facts.items():
        create = {"command": "create", "path": f"context://memory/{key}", "file_text": text}
        assert chef.handle_tool("context", create) == prompts.created(f"context://memory/{key}")
    search = {"command": "search", "path": "context://memory/", "query": QUERY}
    lines = chef.handle_tool("context", search).splitlines()
    assert lines[0] == prompts.search_header(2, QUERY, "context://memory/")
    assert lines[1] == prompts.search_hit("context://memory/auth", FIX_TEXT, True)
    assert lines[-1] == prompts.search_by_meaning_note()
    by_text = {"command": "search", "path": "context://memory/", "query": "token refresh"}
    lines = chef.handle_tool("context", by_text).splitlines()
    assert lines[1].startswith("- context://memory/auth: ") and "(by meaning)" not in lines[1]
