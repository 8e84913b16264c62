"""`Skill`: a behaviour bundle (instructions plus what they need), as read from a `SKILL.md`.

A skill is plain data: its fields hold strings, tuples of strings and JSON-like metadata, so it
is compared by value, rendered the same bytes in every process and carried by a snapshot as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from contextchef._jsonvalue import copy_json
from contextchef.errors import SkillError, SnapshotError

__all__ = ["SKILLS_NAMESPACE", "LoadedSkills", "Skill", "SkillWarning"]

SKILLS_NAMESPACE = "skills"
"""The store namespace of shared skills: `context://skills/<name>/SKILL.md` and its files."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill.

    `name` and `description` say what it is (the listing shows them); `instructions` is the
    body the model follows while the skill is active; `when_to_use` refines the listing;
    `allowed_tools` names the host tools the skill needs (`None`: no restriction; entries may
    use `*` wildcards); `arguments` names the positional arguments `$name` placeholders refer
    to; `base_dir` is where its files live (a directory, or `context://skills/<name>/`);
    `metadata` holds the other front-matter keys verbatim.
    """

    name: str
    description: str
    instructions: str
    when_to_use: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    base_dir: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    arguments: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("name", "description", "instructions"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Skill.{name} must be a str")
        if self.allowed_tools is not None:
            object.__setattr__(self, "allowed_tools", tuple(self.allowed_tools))
        object.__setattr__(self, "arguments", tuple(self.arguments))

    def to_dict(self) -> dict[str, Any]:
        """The skill as JSON data (what a snapshot holds)."""
        return {
            "allowed_tools": list(self.allowed_tools) if self.allowed_tools is not None else None,
            "arguments": list(self.arguments),
            "base_dir": self.base_dir,
            "description": self.description,
            "instructions": self.instructions,
            "metadata": copy_json(dict(self.metadata)),
            "name": self.name,
            "when_to_use": self.when_to_use,
        }

    @classmethod
    def from_dict(cls, data: object, *, field_name: str = "skill") -> Skill:
        """`to_dict`'s output back; a `SnapshotError` naming the field for anything else."""
        if not isinstance(data, Mapping):
            raise SnapshotError("must be an object", field=field_name)
        known = {
            "allowed_tools",
            "arguments",
            "base_dir",
            "description",
            "instructions",
            "metadata",
            "name",
            "when_to_use",
        }
        foreign = sorted(set(data) - known)
        if foreign:
            raise SnapshotError("unknown field", field=f"{field_name}.{foreign[0]}")
        for key in ("name", "description", "instructions"):
            if not isinstance(data.get(key), str):
                raise SnapshotError("must be a string", field=f"{field_name}.{key}")
        for key in ("when_to_use", "base_dir"):
            if data.get(key) is not None and not isinstance(data[key], str):
                raise SnapshotError("must be a string or null", field=f"{field_name}.{key}")
        allowed = data.get("allowed_tools")
        if allowed is not None and not _strings(allowed):
            raise SnapshotError("must be a list of strings", field=f"{field_name}.allowed_tools")
        arguments = data.get("arguments", [])
        if not _strings(arguments):
            raise SnapshotError("must be a list of strings", field=f"{field_name}.arguments")
        metadata = data.get("metadata", {})
        if not isinstance(metadata, Mapping):
            raise SnapshotError("must be an object", field=f"{field_name}.metadata")
        return cls(
            name=data["name"],
            description=data["description"],
            instructions=data["instructions"],
            when_to_use=data.get("when_to_use"),
            allowed_tools=tuple(allowed) if allowed is not None else None,
            base_dir=data.get("base_dir"),
            metadata=copy_json(dict(metadata)),
            arguments=tuple(arguments),
        )


def _strings(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)


class SkillWarning(NamedTuple):
    """Something about a skill worth fixing that did not stop it loading."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class LoadedSkills(NamedTuple):
    """What `load_skills` found: the skills (in first-seen order, later sources winning), the
    files that failed (`SkillError`s, never raised) and the warnings."""

    skills: tuple[Skill, ...]
    errors: tuple[SkillError, ...]
    warnings: tuple[SkillWarning, ...]

    def by_name(self) -> dict[str, Skill]:
        return {skill.name: skill for skill in self.skills}
