"""`contextchef identity [DIR]`: git root or directory hash, linked aliases; it only reads."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from contextchef.store.backend import StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.backends.sqlite.identity import dir_identity
from contextchef.store.datadir import default_database_path
from tests.cli.helpers import error_line, invoke


def _identity(*args: str | Path) -> Any:
    result = invoke("identity", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _git(directory: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin",
        "HOME": str(directory),
    }
    done = subprocess.run(
        ["git", *args], cwd=directory, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_plain_directory_is_its_path_hash(tmp_path: Path) -> None:
    data = _identity(tmp_path)
    assert data["git_roots"] is None
    assert data["derived"] == data["dir_alias"] == dir_identity(tmp_path.resolve())
    assert data["project"] is None  # never used: reported, not recorded
    assert not default_database_path().exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_git_checkout_is_its_root_commit_and_shows_linked_aliases(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("a")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first")
    root = _git(repo, "rev-list", "--max-parents=0", "HEAD")
    with SQLiteBackend(project=repo) as backend:
        backend.write("notes", "n.md", StoredEntry("note"))
    database = default_database_path()
    before = database.read_bytes()
    data = _identity(repo)
    assert data["derived"] == f"git:{root}" and data["git_roots"] == [root]
    assert data["project"] == f"git:{root}"
    assert sorted(data["linked"]) == sorted([f"git:{root}", dir_identity(repo.resolve())])
    assert data["entries"] == {"notes": 1}
    assert data["directories"] == [str(repo.resolve())]
    text = invoke("identity", repo).stdout
    assert f"derived identity  git:{root}" in text
    assert database.read_bytes() == before  # read-only


def test_identity_errors(tmp_path: Path) -> None:
    result = invoke("identity", tmp_path / "missing")
    assert result.exit_code == 1 and "does not exist" in error_line(result)
    assert "is a directory" in error_line(invoke("identity", tmp_path, "--store", tmp_path))
    text = tmp_path / "x.db"
    text.write_text("not sqlite")
    assert "not a context database" in error_line(invoke("identity", tmp_path, "--store", text))
    assert text.read_text() == "not sqlite"
