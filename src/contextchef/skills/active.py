"""The skill a chef has switched on: its rendered instructions and the block the model reads.

The block is built once, at activation, into one message object, so every compile reuses it
(the conversion caches key on identity) and emits the same bytes until the skill changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextchef import prompts
from contextchef.errors import SnapshotError
from contextchef.messages import Message
from contextchef.skills.model import Skill
from contextchef.skills.render import render_skill

__all__ = ["ActiveSkill", "activate"]


@dataclass(frozen=True, slots=True)
class ActiveSkill:
    """`skill` as activated: `instructions` with its placeholders filled in, and the block."""

    skill: Skill
    instructions: str
    block: str = field(init=False)
    message: Message = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        block = prompts.skill_block(self.skill.name, self.instructions, self.skill.base_dir)
        object.__setattr__(self, "block", block)
        object.__setattr__(self, "message", {"content": block, "role": "system"})

    def to_dict(self) -> dict[str, Any]:
        return {"instructions": self.instructions, "skill": self.skill.to_dict()}

    @classmethod
    def from_dict(cls, data: object, *, field_name: str = "skill") -> ActiveSkill:
        if not isinstance(data, Mapping):
            raise SnapshotError("must be an object or null", field=field_name)
        foreign = sorted(set(data) - {"instructions", "skill"})
        if foreign:
            raise SnapshotError("unknown field", field=f"{field_name}.{foreign[0]}")
        if not isinstance(data.get("instructions"), str):
            raise SnapshotError("must be a string", field=f"{field_name}.instructions")
        skill = Skill.from_dict(data.get("skill"), field_name=f"{field_name}.skill")
        return cls(skill, data["instructions"])


def activate(
    skill: Skill,
    args: str | Sequence[str] | None = None,
    vars: Mapping[str, str] | None = None,
) -> ActiveSkill:
    """`skill` rendered with `args` and `vars` (see `render_skill`), ready to place."""
    return ActiveSkill(skill, render_skill(skill, args, vars=vars))
