"""Stable project identity: which project a directory belongs to, across moves, clones and merges.

A directory's *derived* identity is `git:<root commit>` (the lexicographically smallest root, so
histories merged with `--allow-unrelated-histories` do not flap), else `dir:<sha256 of the
canonical real path, 16 hex>`; sha256 because a hash tied to one runtime once orphaned a peer's
memories. Derived identities are only *aliases*: the first one seen for a project becomes its
permanent identity in the `projects` table, and later ones are linked to it:

- merging an unrelated history adds its root as a new alias of the same project;
- a plain directory that later gets `git init` and a commit links its new `git:` alias to the
  project of its earlier `dir:` alias (and every git checkout also records its `dir:` alias);
- a clone elsewhere has the same root, hence the same project and the same memories;
- when git fails transiently (binary missing, timeout, dubious ownership) for a directory that
  has a `.git`, the last project resolved for that directory or its nearest ancestor is reused
  rather than inventing an identity nobody else computes.

The home directory (or a dotfiles repository rooted at home) is not a project unless the caller
opts in: memories of a whole user account are not a project's.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from contextchef.errors import ConfigError
from contextchef.store.backends.sqlite.connection import write_transaction

__all__ = [
    "GIT_TIMEOUT_S",
    "GitUnavailableError",
    "ProjectRef",
    "canonical_dir",
    "dir_identity",
    "explicit_identity",
    "git_root_commits",
    "project_for_identity",
    "resolve_project",
]

log = logging.getLogger("contextchef.store.backends.sqlite.identity")

GIT_TIMEOUT_S = 5.0
"""How long one git probe may take before it counts as a transient failure."""

_IDENTITY = re.compile(r"^[A-Za-z@][A-Za-z0-9+._-]+:")
_SCHEME_RULE = (
    'an identity\'s scheme (before the colon) needs at least 2 characters, a letter or "@" '
    'first, then letters, digits or "+._-", like "git:…" or "demo:…"; a one-letter scheme is '
    'read as a Windows drive, as in "C:\\work"'
)
_HEX = re.compile(r"^[0-9a-f]{7,64}$")
_NOT_A_REPO = ("not a git repository", "does not have any commits", "ambiguous argument 'head'")
_GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE")


class GitUnavailableError(Exception):
    """git could not answer for a directory that has a `.git`: missing, timed out or refused."""


@dataclass(frozen=True, slots=True)
class ProjectRef:
    """A resolved project: its row id, its permanent identity and the identity derived now."""

    id: int
    identity: str
    derived: str


def explicit_identity(project: str | os.PathLike[str] | None) -> str | None:
    """`project` when it names a project by identity (`"git:abc123"`, `"team:docs"`), else None.

    A string is an identity when it starts with a scheme of 2 or more characters (a letter or
    `@` first, then letters, digits or `+._-`) and a colon, and is not an existing directory.
    One letter is not enough so that a Windows drive path (`C:\\work`, `C:work`) stays a path.
    """
    if isinstance(project, str) and _IDENTITY.match(project) and not Path(project).is_dir():
        return project
    return None


def _meant_as_identity(directory: str | os.PathLike[str]) -> bool:
    """Whether a string that is no directory has a colon before any path separator."""
    if not isinstance(directory, str):
        return False
    head, colon, _ = directory.partition(":")
    return bool(colon) and not any(sep in head for sep in ("/", "\\"))


def canonical_dir(directory: str | os.PathLike[str]) -> Path:
    """The real, absolute path of an existing directory (symlinks resolved).

    A string that is neither a directory nor an identity but has a colon before any separator
    (`"t:a"`) was probably meant as an identity: the error states the identity rule, so that a
    one-letter scheme does not read as a missing directory only.
    """
    path = Path(directory).expanduser().resolve()
    if not path.is_dir():
        if _meant_as_identity(directory):
            raise ConfigError(
                f'project "{directory}" is neither a project identity nor a directory: '
                f"{_SCHEME_RULE}; as a directory it would be {path}, which does not exist"
            )
        raise ConfigError(f"project directory {path} does not exist or is not a directory")
    return path


def dir_identity(directory: Path) -> str:
    """`dir:` plus 16 hex digits of the sha256 of the canonical path."""
    digest = hashlib.sha256(str(directory).encode("utf-8", "surrogateescape")).hexdigest()
    return f"dir:{digest[:16]}"


def _git_marker(directory: Path) -> Path | None:
    """The nearest directory at or above `directory` holding a `.git` (a file counts)."""
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def git_root_commits(
    directory: Path, *, git: str = "git", timeout: float = GIT_TIMEOUT_S
) -> list[str] | None:
    """The sorted root commits of the repository at `directory`; None if it has no history.

    Raises `GitUnavailableError` when git is missing, too slow or fails for another reason.
    """
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    try:
        result = subprocess.run(
            [git, "rev-list", "--max-parents=0", "HEAD"],
            cwd=directory,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitUnavailableError(f"git executable {git!r} not found") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitUnavailableError(f"git took longer than {timeout} s in {directory}") from exc
    except OSError as exc:
        raise GitUnavailableError(f"git failed to start in {directory}: {exc}") from exc
    if result.returncode != 0:
        error = result.stderr.strip().lower()
        if any(marker in error for marker in _NOT_A_REPO):
            return None
        raise GitUnavailableError(f"git failed in {directory}: {result.stderr.strip()}")
    roots = sorted({line.strip() for line in result.stdout.splitlines() if line.strip()})
    if not roots or not all(_HEX.match(root) for root in roots):
        raise GitUnavailableError(f"unexpected git output in {directory}: {result.stdout!r}")
    return roots


def _project_of_alias(conn: sqlite3.Connection, aliases: list[str]) -> int | None:
    if not aliases:
        return None
    marks = ",".join("?" * len(aliases))
    row = conn.execute(
        f"SELECT min(project_id) FROM project_aliases WHERE alias IN ({marks})", aliases
    ).fetchone()
    return None if row[0] is None else int(row[0])


def _ref(conn: sqlite3.Connection, project_id: int, derived: str) -> ProjectRef:
    row = conn.execute("SELECT identity FROM projects WHERE id = ?", (project_id,)).fetchone()
    return ProjectRef(project_id, str(row[0]), derived)


def _last_known(conn: sqlite3.Connection, directory: Path) -> ProjectRef | None:
    spellings = [str(p) for p in (directory, *directory.parents)]
    marks = ",".join("?" * len(spellings))
    row = conn.execute(
        f"SELECT project_id, identity FROM project_dirs WHERE path IN ({marks}) "
        "ORDER BY length(path) DESC LIMIT 1",
        spellings,
    ).fetchone()
    return None if row is None else _ref(conn, int(row[0]), str(row[1]))


def _has_git_alias(conn: sqlite3.Connection, project_id: int) -> bool:
    row = conn.execute(
        "SELECT 1 FROM project_aliases WHERE project_id = ? AND alias LIKE 'git:%' LIMIT 1",
        (project_id,),
    ).fetchone()
    return row is not None


def _choose(conn: sqlite3.Connection, aliases: list[str]) -> int | None:
    """The project `aliases` belong to: by git root first, else by the directory's own alias.

    The own alias (last) links a fresh `git init` to the plain directory's project, but never
    hands one repository's project to another repository cloned later into the same path.
    """
    git_aliases, own = aliases[:-1], aliases[-1]
    project_id = _project_of_alias(conn, git_aliases)
    if project_id is None:
        project_id = _project_of_alias(conn, [own])
        if project_id is not None and git_aliases and _has_git_alias(conn, project_id):
            project_id = None
    return project_id


def _link(
    conn: sqlite3.Connection, aliases: list[str], directory: Path | None, derived: str
) -> int:
    """Find or create the project for `aliases` (first = preferred identity) and record them."""
    now = time.time()
    project_id = _choose(conn, aliases)
    if project_id is None:
        # A project row may outlive its aliases (a salvaged database): reuse it then.
        conn.execute(
            "INSERT INTO projects(identity, created_at) VALUES (?, ?) "
            "ON CONFLICT(identity) DO NOTHING",
            (aliases[0], now),
        )
        row = conn.execute("SELECT id FROM projects WHERE identity = ?", (aliases[0],))
        project_id = int(row.fetchone()[0])
        log.info("project %s", aliases[0])
    conn.executemany(
        "INSERT INTO project_aliases(alias, project_id, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT(alias) DO NOTHING",
        [(alias, project_id, now) for alias in aliases[:-1]],
    )
    conn.execute(
        "INSERT INTO project_aliases(alias, project_id, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT(alias) DO UPDATE SET project_id = excluded.project_id",
        (aliases[-1], project_id, now),
    )
    if directory is not None:
        conn.execute(
            "INSERT INTO project_dirs(path, project_id, identity, seen_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET project_id = excluded.project_id, "
            "identity = excluded.identity, seen_at = excluded.seen_at",
            (str(directory), project_id, derived, now),
        )
    return project_id


def _up_to_date(
    conn: sqlite3.Connection, aliases: list[str], directory: Path | None, derived: str
) -> int | None:
    """The project id when every alias and the directory row are already recorded (no write)."""
    marks = ",".join("?" * len(aliases))
    rows = dict(
        conn.execute(
            f"SELECT alias, project_id FROM project_aliases WHERE alias IN ({marks})", aliases
        ).fetchall()
    )
    project_id = _choose(conn, aliases)
    if len(rows) != len(aliases) or project_id is None or rows[aliases[-1]] != project_id:
        return None
    if directory is None:
        return project_id
    row = conn.execute(
        "SELECT project_id, identity FROM project_dirs WHERE path = ?", (str(directory),)
    ).fetchone()
    if row is None or (int(row[0]), str(row[1])) != (project_id, derived):
        return None
    return project_id


def _record(
    conn: sqlite3.Connection, aliases: list[str], directory: Path | None, derived: str
) -> ProjectRef:
    project_id = _up_to_date(conn, aliases, directory, derived)
    if project_id is None:
        with write_transaction(conn):
            project_id = _link(conn, aliases, directory, derived)
    return _ref(conn, project_id, derived)


def project_for_identity(conn: sqlite3.Connection, identity: str) -> ProjectRef:
    """The project an explicit identity string names, created on first use."""
    return _record(conn, [identity], None, identity)


def resolve_project(
    conn: sqlite3.Connection,
    directory: str | os.PathLike[str],
    *,
    allow_home: bool = False,
    git: str = "git",
    timeout: float = GIT_TIMEOUT_S,
) -> ProjectRef:
    """The project of `directory`, linking newly derived identities to the persisted one."""
    path = canonical_dir(directory)
    marker = _git_marker(path)
    home = Path.home().resolve()
    if not allow_home and home in (path, marker):
        raise ConfigError(
            f"{path} is the home directory (or a repository rooted at it), which is not a "
            "project; pass an explicit project, or allow_home_project=True to opt in"
        )
    roots: list[str] | None = None
    if marker is not None:
        try:
            roots = git_root_commits(path, git=git, timeout=timeout)
        except GitUnavailableError as exc:
            known = _last_known(conn, path)
            if known is not None:
                log.warning("%s; reusing the last known project %s", exc, known.identity)
                return known
            log.warning("%s; no earlier identity known, using the directory's for now", exc)
    own = dir_identity(path)
    aliases = [f"git:{root}" for root in roots or ()] + [own]
    return _record(conn, aliases, path, aliases[0])
