"""Stable project identity, tested with real git repositories in temporary directories."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextchef.errors import ConfigError
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite import identity as ident
from contextchef.store.backends.sqlite.migrations import open_database

_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **_ENV}
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def make_repo(path: Path, message: str = "first") -> str:
    """A repository with one commit at `path`; returns its root commit."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    (path / f"{message}.txt").write_text(message)
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD")


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    opened = open_database(tmp_path / "id.db")
    yield opened
    opened.close()


def test_repository_is_identified_by_its_root_commit(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    root = make_repo(tmp_path / "repo")
    (tmp_path / "repo" / "sub").mkdir()
    ref = ident.resolve_project(conn, tmp_path / "repo")
    assert ref.identity == ref.derived == f"git:{root}"
    assert ident.resolve_project(conn, tmp_path / "repo" / "sub").id == ref.id


def test_merged_histories_use_the_smallest_root_and_keep_the_first_identity(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    first = make_repo(tmp_path / "repo", "a")
    before = ident.resolve_project(conn, tmp_path / "repo")
    other = make_repo(tmp_path / "other", "b")
    git(tmp_path / "repo", "fetch", "-q", str(tmp_path / "other"), "main")
    git(tmp_path / "repo", "merge", "-q", "--allow-unrelated-histories", "-m", "m", "FETCH_HEAD")
    assert ident.git_root_commits(tmp_path / "repo") == sorted([first, other])
    after = ident.resolve_project(conn, tmp_path / "repo")
    assert after.derived == f"git:{min(first, other)}"
    assert (after.id, after.identity) == (before.id, f"git:{first}")
    # The other repository, seen later on its own, joins the same project through its root.
    assert ident.resolve_project(conn, tmp_path / "other").id == before.id


def test_a_clone_elsewhere_is_the_same_project(tmp_path: Path, conn: sqlite3.Connection) -> None:
    make_repo(tmp_path / "repo")
    git(tmp_path, "clone", "-q", str(tmp_path / "repo"), str(tmp_path / "elsewhere" / "clone"))
    one = ident.resolve_project(conn, tmp_path / "repo")
    two = ident.resolve_project(conn, tmp_path / "elsewhere" / "clone")
    assert one.id == two.id


def test_plain_directory_then_git_init_keeps_its_project(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    before = ident.resolve_project(conn, plain)
    assert before.identity == ident.dir_identity(plain.resolve())
    git(plain, "init", "-q")  # no commit yet: still the directory's identity
    assert ident.resolve_project(conn, plain) == before
    root = make_repo(plain)
    after = ident.resolve_project(conn, plain)
    assert after.derived == f"git:{root}"
    assert (after.id, after.identity) == (before.id, before.identity)


def test_another_repository_in_a_reused_path_is_a_new_project(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    make_repo(tmp_path / "path", "one")
    first = ident.resolve_project(conn, tmp_path / "path")
    subprocess.run(["rm", "-rf", str(tmp_path / "path")], check=True)
    make_repo(tmp_path / "path", "two")
    second = ident.resolve_project(conn, tmp_path / "path")
    assert second.id != first.id


def test_symlinked_spelling_is_the_same_project(tmp_path: Path, conn: sqlite3.Connection) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert ident.resolve_project(conn, tmp_path / "link") == ident.resolve_project(
        conn, tmp_path / "real"
    )


def test_git_failure_reuses_the_last_known_identity_of_an_ancestor(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    make_repo(tmp_path / "repo")
    (tmp_path / "repo" / "deep" / "er").mkdir(parents=True)
    known = ident.resolve_project(conn, tmp_path / "repo")
    missing = str(tmp_path / "no-such-git")
    with pytest.raises(ident.GitUnavailableError):
        ident.git_root_commits(tmp_path / "repo", git=missing)
    reused = ident.resolve_project(conn, tmp_path / "repo" / "deep" / "er", git=missing)
    assert (reused.id, reused.identity) == (known.id, known.identity)


def test_git_timeout_is_transient(tmp_path: Path, conn: sqlite3.Connection) -> None:
    make_repo(tmp_path / "repo")
    known = ident.resolve_project(conn, tmp_path / "repo")
    slow = tmp_path / "slow-git"
    slow.write_text("#!/bin/sh\nsleep 5\n")
    slow.chmod(0o755)
    with pytest.raises(ident.GitUnavailableError, match="longer than"):
        ident.git_root_commits(tmp_path / "repo", git=str(slow), timeout=0.2)
    assert ident.resolve_project(conn, tmp_path / "repo", git=str(slow), timeout=0.2) == known


def test_cold_start_git_failure_links_up_later(tmp_path: Path, conn: sqlite3.Connection) -> None:
    root = make_repo(tmp_path / "repo")
    cold = ident.resolve_project(conn, tmp_path / "repo", git=str(tmp_path / "missing"))
    assert cold.identity.startswith("dir:")
    warm = ident.resolve_project(conn, tmp_path / "repo")
    assert warm.derived == f"git:{root}" and warm.id == cold.id


def test_home_is_not_a_project_unless_allowed(
    tmp_path: Path, conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "dotfiles-sub").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(ConfigError, match="home directory"):
        ident.resolve_project(conn, home)
    assert ident.resolve_project(conn, home, allow_home=True).identity.startswith("dir:")
    make_repo(home)  # a dotfiles repository rooted at home
    with pytest.raises(ConfigError):
        ident.resolve_project(conn, home / "dotfiles-sub")


def test_missing_directory_is_a_config_error(tmp_path: Path, conn: sqlite3.Connection) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        ident.resolve_project(conn, tmp_path / "nope")


def test_a_one_letter_scheme_is_refused_with_the_identity_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`project="t:a"` is not an identity (one letter is a Windows drive): the error says so."""
    monkeypatch.chdir(tmp_path)
    with (
        SQLiteBackend(tmp_path / "c.db", project="t:a") as backend,
        pytest.raises(ConfigError) as refused,
    ):
        backend.write("notes", "n.md", StoredEntry("x"))
    message = str(refused.value)
    assert 'project "t:a"' in message
    assert "at least 2 characters" in message and '"git:…"' in message
    assert "Windows drive" in message
    with SQLiteBackend(tmp_path / "c.db", project="ta:a") as two_letters:
        assert two_letters.project.identity == "ta:a"


def test_a_drive_letter_path_and_a_colon_in_a_directory_name_stay_paths(
    tmp_path: Path, conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t:a").mkdir()
    assert ident.explicit_identity("t:a") is None
    assert ident.explicit_identity("C:\\work") is None
    assert ident.resolve_project(conn, "t:a").identity.startswith("dir:")
    (tmp_path / "ab:c").mkdir()
    assert ident.explicit_identity("ab:c") is None  # an existing directory wins
    with pytest.raises(ConfigError, match="does not exist") as missing:
        ident.resolve_project(conn, str(tmp_path / "x:y"))
    assert "identity" not in str(missing.value)  # a path with a separator: a plain path


def test_backend_defaults_to_the_working_directory_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "repo")
    git(tmp_path, "clone", "-q", str(tmp_path / "repo"), str(tmp_path / "clone"))
    monkeypatch.chdir(tmp_path / "repo")
    with SQLiteBackend(tmp_path / "c.db") as here:
        assert here.project.derived == f"git:{root}"
        here.write("notes", "shared.md", StoredEntry("seen by every clone"))
        here.write("memory", "k", StoredEntry("project memory"))
    with SQLiteBackend(tmp_path / "c.db", project=tmp_path / "clone") as clone:
        assert clone.read("notes", "shared.md") is not None
        assert clone.read("memory", "k") is not None
    with SQLiteBackend(tmp_path / "c.db", project=str(tmp_path / "clone")) as by_string:
        assert by_string.project.id == clone.project.id
