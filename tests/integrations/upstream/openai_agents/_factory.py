"""The one thing the vendored Agents SDK tests change: the name `SQLiteSession` they build their
sessions with is this class, a `ContextChefSession` taking `SQLiteSession`'s constructor
arguments. `db_path` becomes the store (`":memory:"`, the SDK's default, an in-memory store of
its own, as each `SQLiteSession(":memory:")` has its own database; a file path a contextchef
SQLite database there, opened and closed by the session). The table names are accepted and
unused: contextchef keeps sessions in a store namespace, not in tables of their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.memory import SessionSettings

from contextchef.integrations.openai_agents import ContextChefSession


class SQLiteSession(ContextChefSession):
    """`ContextChefSession` built with the SDK's `SQLiteSession` signature."""

    def __init__(
        self,
        session_id: str,
        db_path: str | Path = ":memory:",
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        store = "memory" if str(db_path) == ":memory:" else Path(db_path)
        super().__init__(session_id, store, session_settings=session_settings)
