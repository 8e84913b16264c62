"""Finding skills: `SKILL.md` files on disk, or in the store's `skills/` namespace.

On disk a skills directory holds one folder per skill (`<dir>/<name>/SKILL.md`, looked at one
level deep, in sorted order), or is itself a skill's folder. In the store a skill lives at
`context://skills/<name>/SKILL.md` with its other files beside it, so one SQLite or PostgreSQL
store serves the same skills to every agent; `publish_skill` puts a folder (or a `Skill`) there.
Loading many never raises on one bad file: `load_skills` returns the skills, the errors and
the warnings.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from contextchef._effects import Flow, drive_async, drive_sync
from contextchef.errors import InvalidPathError, SkillError
from contextchef.skills.frontmatter import parse_skill
from contextchef.skills.model import SKILLS_NAMESPACE, LoadedSkills, Skill, SkillWarning
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.core import StoreCore
from contextchef.store.paths import format_uri, validate_entry_path
from contextchef.store.store import StoreBase, core_of

__all__ = [
    "SKILL_FILE",
    "aload_store_skills",
    "apublish_skill",
    "load_skill",
    "load_skills",
    "load_store_skills",
    "publish_skill",
    "skill_markdown",
    "stored_skill",
    "stored_skills",
]

SKILL_FILE = "SKILL.md"
StoreLike = StoreBase[Any] | StoreCore | StorageBackend | AsyncStorageBackend
PathLike = str | os.PathLike[str]


_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?[^)]*\)")


def relative_links(instructions: str) -> list[str]:
    """The relative link targets in markdown links of `instructions` (`references/x.md`,
    `./x`), without their `#fragment`; absolute paths, URLs and anchors are left out."""
    found = []
    for target in _LINK.findall(instructions):
        if ":" in target or target.startswith(("#", "/")):
            continue
        target = target.split("#", 1)[0]
        if target and target not in found:
            found.append(target)
    return found


def _missing_links(skill: Skill, source: str, exists: Callable[[str], bool]) -> list[SkillWarning]:
    return [
        SkillWarning(source, f"links to {target}, which is not among the skill's files")
        for target in relative_links(skill.instructions)
        if not exists(posixpath.normpath(target))
    ]


def _read(path: Path) -> tuple[Skill, list[SkillWarning]]:
    source = str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(f"is not UTF-8 text ({exc.reason})", path=source) from None
    except OSError as exc:
        raise SkillError(f"cannot be read: {exc.strerror or exc}", path=source) from None
    folder = path.parent.resolve()
    skill, warnings = parse_skill(text, source=source, base_dir=str(folder), directory=folder.name)
    warnings += _missing_links(skill, source, lambda target: (folder / target).exists())
    return skill, warnings


def _skill_file(path: PathLike) -> Path:
    found = Path(path)
    return found / SKILL_FILE if found.is_dir() else found


def load_skill(path: PathLike) -> Skill:
    """The skill in a `SKILL.md` file (or in the folder holding one); its `base_dir` is the
    folder. A malformed file raises `SkillError` naming the file and line."""
    skill, _ = _read(_skill_file(path))
    return skill


class _Merge:
    """Skills by name in first-seen order, later ones replacing earlier ones (or not)."""

    def __init__(self, *, last_wins: bool) -> None:
        self.last_wins = last_wins
        self.found: dict[str, tuple[Skill, str, list[SkillWarning]]] = {}
        self.errors: list[SkillError] = []
        self.notes: list[SkillWarning] = []

    def add(self, skill: Skill, source: str, warnings: list[SkillWarning]) -> None:
        seen = self.found.get(skill.name)
        if seen is None:
            self.found[skill.name] = (skill, source, warnings)
        elif self.last_wins:
            self.notes.append(
                SkillWarning(source, f"the skill {skill.name!r} overrides the one in {seen[1]}")
            )
            self.found[skill.name] = (skill, source, warnings)
        else:
            self.notes.append(
                SkillWarning(source, f"the skill {skill.name!r} is ignored: {seen[1]} has it")
            )

    def result(self) -> LoadedSkills:
        warnings = [w for _, _, own in self.found.values() for w in own]
        return LoadedSkills(
            tuple(skill for skill, _, _ in self.found.values()),
            tuple(self.errors),
            (*warnings, *self.notes),
        )


def load_skills(
    dirs: PathLike | Iterable[PathLike], *, precedence: str = "last_wins"
) -> LoadedSkills:
    """Every skill in `dirs`, in order; never raises on a bad file.

    With `precedence="last_wins"` (the default) a skill in a later directory replaces one of the
    same name from an earlier directory, keeping its position, and a warning says so;
    `"first_wins"` keeps the first. A directory that does not exist is a warning.
    """
    if precedence not in ("last_wins", "first_wins"):
        raise ValueError(f"precedence must be 'last_wins' or 'first_wins', got {precedence!r}")
    listed = [dirs] if isinstance(dirs, str | os.PathLike) else list(dirs)
    merge = _Merge(last_wins=precedence == "last_wins")
    seen: set[Path] = set()
    for entry in listed:
        folder = Path(entry)
        if not folder.is_dir():
            merge.notes.append(SkillWarning(str(folder), "no such directory (skipped)"))
            continue
        real = folder.resolve()
        if real in seen:
            continue
        seen.add(real)
        files = [folder / SKILL_FILE]
        if not files[0].is_file():
            files = sorted(sub / SKILL_FILE for sub in folder.iterdir() if sub.is_dir())
            files = [path for path in files if path.is_file()]
        for path in files:
            try:
                skill, warnings = _read(path)
            except SkillError as exc:
                merge.errors.append(exc)
                continue
            merge.add(skill, str(path), warnings)
    return merge.result()


# -- the store ---------------------------------------------------------------------------


def _stored(name: str, text: str) -> tuple[Skill, list[SkillWarning]]:
    path = f"{name}/{SKILL_FILE}"
    return parse_skill(
        text,
        source=format_uri(SKILLS_NAMESPACE, path),
        base_dir=format_uri(SKILLS_NAMESPACE, f"{name}/"),
        directory=name,
    )


def stored_skill(store: StoreCore, name: str) -> Flow[Skill | None]:
    """The skill stored at `context://skills/<name>/SKILL.md`, or None when there is none."""
    try:
        path = validate_entry_path(f"{name}/{SKILL_FILE}")
    except InvalidPathError:
        return None
    entry = yield from store.get(SKILLS_NAMESPACE, path)
    return None if entry is None else _stored(name, entry.content)[0]


def _in_store(files: set[str], prefix: str) -> Callable[[str], bool]:
    return lambda target: prefix + target in files


def stored_skills(store: StoreCore) -> Flow[LoadedSkills]:
    """Every skill in the store's `skills/` namespace, in folder order (see `load_skills`)."""
    merge = _Merge(last_wins=True)
    listed = yield from store.list(SKILLS_NAMESPACE, "")
    files = {item.path for item in listed}
    for path in sorted(item.path for item in listed):
        folder, _, rest = path.partition("/")
        if rest != SKILL_FILE:
            continue
        entry = yield from store.get(SKILLS_NAMESPACE, path)
        if entry is None:  # deleted since it was listed
            continue
        try:
            skill, warnings = _stored(folder, entry.content)
        except SkillError as exc:
            merge.errors.append(exc)
            continue
        source = format_uri(SKILLS_NAMESPACE, path)
        warnings += _missing_links(skill, source, _in_store(files, f"{folder}/"))
        merge.add(skill, source, warnings)
    return merge.result()


def load_store_skills(store: StoreLike) -> LoadedSkills:
    """Every skill in `store`'s `skills/` namespace (a `Store`, a backend, or a chef's store)."""
    return drive_sync(stored_skills(core_of(store)))


async def aload_store_skills(store: StoreLike) -> LoadedSkills:
    """`load_store_skills` for async code (an `AsyncStore` or an async-native backend)."""
    return await drive_async(stored_skills(core_of(store)))


def skill_markdown(skill: Skill) -> str:
    """A `SKILL.md` text that loads back as `skill` (its `base_dir` aside)."""
    front: dict[str, Any] = {"name": skill.name, "description": skill.description}
    if skill.when_to_use is not None:
        front["when_to_use"] = skill.when_to_use
    if skill.allowed_tools is not None:
        front["allowed-tools"] = list(skill.allowed_tools)
    if skill.arguments:
        front["arguments"] = list(skill.arguments)
    for key, value in skill.metadata.items():
        if key not in front:
            front[key] = value
    text = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{text}---\n{skill.instructions}\n"


def _publish(store: StoreCore, source: PathLike | Skill) -> Flow[str]:
    if isinstance(source, Skill):
        files = {SKILL_FILE: skill_markdown(source)}
        name = source.name
    else:
        skill_file = _skill_file(source)
        name = _read(skill_file)[0].name
        folder = skill_file.parent
        files = {}
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            relative = path.relative_to(folder).as_posix()
            if any(part.startswith(".") for part in relative.split("/")):
                continue
            try:
                files[relative] = path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                raise SkillError(
                    "is not UTF-8 text; the store holds a skill's text files only", path=str(path)
                ) from None
    for relative, text in files.items():
        yield from store.put(SKILLS_NAMESPACE, f"{name}/{relative}", text, None)
    for item in (yield from store.list(SKILLS_NAMESPACE, f"{name}/")):
        if item.path[len(name) + 1 :] not in files:
            yield from store.delete(SKILLS_NAMESPACE, item.path)
    return format_uri(SKILLS_NAMESPACE, f"{name}/{SKILL_FILE}")


def publish_skill(store: StoreLike, source: PathLike | Skill) -> str:
    """Put a skill into the store's `skills/` namespace for every agent on that store: a folder
    holding a `SKILL.md` (with its other text files) or a `Skill`. Files of an earlier version
    that the new one lacks are removed. Returns the URI of the stored `SKILL.md`."""
    return drive_sync(_publish(core_of(store), source))


async def apublish_skill(store: StoreLike, source: PathLike | Skill) -> str:
    """`publish_skill` for async code."""
    return await drive_async(_publish(core_of(store), source))
