"""Skills on a chef: activation by name, object or store; placement per target; the tools an
active skill keeps; switching off; the same bytes turn after turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from contextchef import (
    AsyncContextChef,
    ConfigError,
    ContextChef,
    InMemoryBackend,
    Skill,
    SkillError,
    SQLiteBackend,
)
from contextchef.errors import UnknownSkillError
from contextchef.skills import apublish_skill, load_store_skills, publish_skill
from contextchef.store.backends.inmemory import AsyncInMemoryBackend
from tests.payload_parts import (
    TARGETS,
    conversation,
    dumps,
    last_user_text,
    system_text,
    tool_names,
)

PLAN = Skill(
    name="plan",
    description="Plans a change before any file is edited.",
    instructions="Write a numbered plan for $ARGUMENTS before editing.",
    allowed_tools=("read_file", "search_*"),
)
TOOLS = [
    {"name": name, "description": f"The {name} tool.", "parameters": {"type": "object"}}
    for name in ("read_file", "search_code", "write_file", "deploy")
]


class Task(BaseModel):
    goal: str


def history() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Deploy the fix."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "deploy", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "deployed"},
        {"role": "user", "content": "Now plan the next change."},
    ]


def chef(**options: Any) -> ContextChef:
    made = (
        ContextChef(**options)
        .set_system_prompt("You are a coding agent.")
        .set_history(history())
        .set_dynamic_state(Task, {"goal": "ship"})
    )
    made.tools.register(TOOLS)
    return made


@pytest.mark.parametrize("target", TARGETS)
def test_after_system_puts_the_skill_right_after_the_system_prompt(target: str) -> None:
    c = chef(skills=[PLAN])
    c.skills.activate("plan", args="the parser")
    payload = c.compile(target=target)
    system = system_text(payload, target)
    assert system.startswith('You are a coding agent.\n\n<skill_instructions skill="plan">')
    assert "Write a numbered plan for the parser before editing." in system
    assert "skill_instructions" not in dumps(conversation(payload, target))
    assert c.skills.active == PLAN


@pytest.mark.parametrize("target", TARGETS)
def test_tail_placement_opens_the_tail_and_leaves_the_system_part_alone(target: str) -> None:
    c = chef(skill_placement="tail")
    c.skills.activate(PLAN, args="the parser")
    payload = c.compile(target=target)
    assert system_text(payload, target) == system_text(chef().compile(target=target), target)
    tail = last_user_text(payload, target)
    assert 'Now plan the next change.\n\n<skill_instructions skill="plan">' in tail
    assert tail.index("</skill_instructions>") < tail.index("<dynamic_state>")


@pytest.mark.parametrize("target", TARGETS)
def test_switching_off_gives_the_bytes_of_a_chef_that_never_had_it(target: str) -> None:
    plain = dumps(chef().compile(target=target))
    c = chef(skills=[PLAN])
    c.skills.activate("plan")
    assert dumps(c.compile(target=target)) != plain
    c.skills.activate(None)
    assert dumps(c.compile(target=target)) == plain and c.skills.active is None


@pytest.mark.parametrize("target", TARGETS)
def test_allowed_tools_keep_their_tools_and_every_tool_the_window_calls(target: str) -> None:
    c = chef()
    c.skills.activate(PLAN)
    names = tool_names(c.compile(target=target), target)
    # read_file and search_* are allowed; deploy is called in the window; context is ours
    assert names == ["read_file", "search_code", "deploy", "context"]
    c.set_history(history()[-1:])
    assert tool_names(c.compile(target=target), target) == ["read_file", "search_code", "context"]
    c.skills.activate(Skill("any", "Uses every tool there is.", "Go."))
    assert len(tool_names(c.compile(target=target), target)) == 5


def test_the_skill_keeps_the_prefix_byte_stable_turn_after_turn() -> None:
    c = chef(skills=[PLAN])
    c.skills.activate("plan", args="x")
    first = c.compile(target="anthropic")
    grown = [*history(), {"role": "assistant", "content": "Plan: 1."}]
    second = c.set_history([*grown, {"role": "user", "content": "go on"}]).compile(
        target="anthropic"
    )
    assert dumps(first["system"]) == dumps(second["system"])
    assert dumps(first["tools"]) == dumps(second["tools"])
    assert dumps(c.compile(target="anthropic")) == dumps(second)


def test_a_name_is_found_in_the_store_one_sqlite_file_serves_every_agent(tmp_path: Path) -> None:
    folder = tmp_path / "review"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: review\ndescription: Reviews a diff for bugs and unclear names.\n"
        "allowed-tools: read_file\n---\nReview $0. See ${SKILL_DIR}references/style.md.\n"
    )
    (folder / "references" / "style.md").write_text("Names say what things are.")
    database = tmp_path / "team.db"
    uri = publish_skill(SQLiteBackend(database), folder)
    assert uri == "context://skills/review/SKILL.md"

    agent = chef(store=SQLiteBackend(database))
    agent.skills.activate("review", args="src/parser.py")
    system = system_text(agent.compile(target="openai"), "openai")
    assert "Review src/parser.py. See context://skills/review/references/style.md." in system
    assert "The skill's files are under context://skills/review/" in system
    style = agent.handle_tool(
        "context", {"command": "view", "path": "skills/review/references/style.md"}
    )
    assert "Names say what things are." in style
    found = load_store_skills(SQLiteBackend(database))
    assert [s.name for s in found.skills] == ["review"] and not found.errors
    assert found.skills[0].base_dir == "context://skills/review/"


def test_publishing_a_skill_object_round_trips_and_replaces_old_files() -> None:
    backend = InMemoryBackend()
    skill = Skill(
        "plan",
        "Plans a change: steps first, edits after.",
        "Plan it.",
        when_to_use="Before editing: always",
        allowed_tools=(),
        metadata={"license": "MIT", "tags": ["a", "b"]},
        arguments=("scope",),
    )
    publish_skill(backend, Skill("plan", "An older version of it.", "Old.", metadata={"x": 1}))
    publish_skill(backend, skill)
    (loaded,) = load_store_skills(backend).skills
    assert loaded == Skill(**{**_fields(skill), "base_dir": "context://skills/plan/"})


def _fields(skill: Skill) -> dict[str, Any]:
    return {name: getattr(skill, name) for name in Skill.__dataclass_fields__}


def test_an_unknown_name_lists_what_there_is_and_changes_nothing() -> None:
    backend = InMemoryBackend()
    publish_skill(backend, Skill("review", "Reviews a diff for bugs.", "Review."))
    c = chef(store=backend, skills=[PLAN])
    c.skills.activate("plan")
    before = dumps(c.compile())
    with pytest.raises(UnknownSkillError) as caught:
        c.skills.activate("deploy")
    assert "no skill named 'deploy'" in str(caught.value)
    assert caught.value.available == ["plan", "review"]
    with pytest.raises(UnknownSkillError):
        c.skills.activate("../../etc")
    with pytest.raises(ConfigError):
        c.skills.activate(42)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        c.skills.activate(None, args="x")
    assert dumps(c.compile()) == before and c.skills.active == PLAN


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="skill_placement"):
        ContextChef(skill_placement="top")
    with pytest.raises(ConfigError, match="Skill objects"):
        ContextChef(skills=["plan"])


async def test_the_async_chef_activates_a_stored_skill_with_the_same_bytes() -> None:
    backend = AsyncInMemoryBackend()
    achef = AsyncContextChef(store=backend)
    await apublish_skill(backend, PLAN)
    achef.set_system_prompt("You are a coding agent.").set_history(history())
    achef.tools.register(TOOLS)
    achef.set_dynamic_state(Task, {"goal": "ship"})
    assert await achef.skills.activate("plan", args="x") is achef.skills
    shared = InMemoryBackend()
    publish_skill(shared, PLAN)
    sync = chef(store=shared)
    sync.skills.activate("plan", args="x")
    for target in TARGETS:
        assert dumps(await achef.compile(target=target)) == dumps(sync.compile(target=target))


@pytest.mark.postgres
def test_one_postgres_store_serves_a_published_skill_to_every_agent() -> None:
    import secrets

    import psycopg

    from contextchef import PostgresBackend
    from tests.contract import pg

    pg.require_server()
    schema = f"contextchef_skills_{secrets.token_hex(4)}"
    try:
        publisher = PostgresBackend(pg.DSN, schema=schema, pool_size=1)
        publish_skill(publisher, PLAN)
        agents = [chef(store=PostgresBackend(pg.DSN, schema=schema, pool_size=1)) for _ in range(2)]
        for agent in agents:
            agent.skills.activate("plan", args="x")
        payloads = [dumps(agent.compile()) for agent in agents]
        assert payloads[0] == payloads[1] and "Plan the work" not in payloads[0]
        assert "Write a numbered plan for x before editing." in payloads[0]
        for backend in (publisher, *(a.store.core.backend for a in agents)):
            backend.close()
    finally:
        with psycopg.connect(pg.DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_a_malformed_stored_skill_names_its_uri_and_line_and_changes_nothing() -> None:
    backend = InMemoryBackend()
    publish_skill(backend, PLAN)
    backend.write("skills", "broken/SKILL.md", _entry("---\nname: broken\n---\nBody\n"))
    c = chef(store=backend)
    c.skills.activate("plan")
    before = dumps(c.compile())
    with pytest.raises(SkillError) as caught:
        c.skills.activate("broken")
    assert str(caught.value).startswith("context://skills/broken/SKILL.md, line 2: ")
    assert dumps(c.compile()) == before
    found = load_store_skills(backend)
    assert [s.name for s in found.skills] == ["plan"] and len(found.errors) == 1


def _entry(text: str) -> Any:
    from contextchef.store import StoredEntry

    return StoredEntry(text, {})


def test_stored_skills_warn_about_links_to_files_the_store_lacks() -> None:
    backend = InMemoryBackend()
    body = "Follow [the rules](references/rules.md) and [the list](checklist.md)."
    publish_skill(backend, Skill("review", "Reviews a diff for bugs and names.", body))
    backend.write("skills", "review/references/rules.md", _entry("Rules."))
    found = load_store_skills(backend)
    assert [str(w) for w in found.warnings] == [
        "context://skills/review/SKILL.md: links to checklist.md, which is not among the "
        "skill's files"
    ]
