"""The chef's skills and announcements: the registry, activation, and the host's notices.

A mixin of `_ChefBase`: it changes only the chef's `CompileState` (the active skill and the
announcements ride along with the other layers into every compile and every snapshot).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Self

from contextchef._effects import Flow
from contextchef.compiler.pipeline import CompileRuntime, CompileState
from contextchef.errors import ConfigError, UnknownSkillError
from contextchef.placement.announcements import Announcement, make_announcement
from contextchef.skills.active import ActiveSkill, activate
from contextchef.skills.loading import stored_skill, stored_skills
from contextchef.skills.model import LoadedSkills, Skill
from contextchef.store.core import StoreCore

__all__ = ["SKILL_PLACEMENTS", "SkillsAndAnnouncements", "check_skill_placement", "skill_registry"]

SKILL_PLACEMENTS = ("after_system", "tail")


def check_skill_placement(placement: object) -> str:
    if placement not in SKILL_PLACEMENTS:
        raise ConfigError(f"skill_placement must be 'after_system' or 'tail', got {placement!r}")
    return placement


def skill_registry(skills: Iterable[Skill] | LoadedSkills | None) -> dict[str, Skill]:
    """Skills by name (a later one of the same name replaces an earlier one)."""
    if skills is None:
        return {}
    if isinstance(skills, LoadedSkills):
        skills = skills.skills
    if isinstance(skills, Skill | str | Mapping) or not isinstance(skills, Iterable):
        raise ConfigError("skills must be a list of Skill objects (see load_skills)")
    registry: dict[str, Skill] = {}
    for skill in skills:
        if not isinstance(skill, Skill):
            raise ConfigError(f"skills must be Skill objects, got {type(skill).__name__}")
        registry[skill.name] = skill
    return registry


class SkillsAndAnnouncements:
    """Skills and announcements of a chef (see the module docstring)."""

    _state: CompileState
    _core: StoreCore
    _runtime: CompileRuntime
    _skills: dict[str, Skill]

    # -- skills ----------------------------------------------------------------------------

    def register_skills(self, skills: Iterable[Skill] | LoadedSkills) -> Self:
        """Replace the skills `activate_skill(name)` finds by name (a list of `Skill`, or what
        `load_skills` returned). The active skill stays active."""
        self._skills = skill_registry(skills)
        return self

    @property
    def skills(self) -> list[Skill]:
        """The registered skills, in registration order."""
        return list(self._skills.values())

    @property
    def active_skill(self) -> Skill | None:
        """The skill `activate_skill` switched on, or None."""
        return self._state.skill.skill if self._state.skill is not None else None

    @property
    def skill_placement(self) -> str:
        return self._runtime.skill_placement

    def _activate_skill_flow(
        self,
        skill: str | Skill | None,
        args: str | Sequence[str] | None,
        vars: Mapping[str, str] | None,
    ) -> Flow[None]:
        """Switch `skill` on (a name: registered first, then `context://skills/<name>/`),
        rendered with `args` and `vars`; None switches the active skill off."""
        active: ActiveSkill | None = None
        if isinstance(skill, str):
            found = self._skills.get(skill)
            if found is None:
                found = yield from stored_skill(self._core, skill)
            if found is None:
                stored = yield from stored_skills(self._core)
                names = sorted({*self._skills, *(s.name for s in stored.skills)})
                raise UnknownSkillError(skill, names)
            active = activate(found, args, vars)
        elif isinstance(skill, Skill):
            active = activate(skill, args, vars)
        elif skill is not None:
            raise ConfigError(
                f"activate_skill takes a skill name, a Skill or None, got {type(skill).__name__}"
            )
        elif args is not None or vars is not None:
            raise ConfigError("activate_skill(None) switches the skill off; it takes no args")
        self._state = replace(self._state, skill=active)

    # -- announcements ---------------------------------------------------------------------

    def announce(self, id: str, text: str, channel: str = "auto") -> Self:
        """Show `text` to the model on every compile until `retract_announcement(id)`.

        `channel="auto"` (the default) and `"tail"` put it at the end of the prompt, where it
        never changes the cached prefix; `"system"` in a system message after the system prompt
        and memory. Announcing an `id` again replaces its text and channel in place.
        """
        made = make_announcement(id, text, channel)
        current = self._state.announcements
        if any(a.id == made.id for a in current):
            updated = tuple(made if a.id == made.id else a for a in current)
        else:
            updated = (*current, made)
        self._state = replace(self._state, announcements=updated)
        return self

    def retract_announcement(self, id: str) -> bool:
        """Stop showing announcement `id`; False when there was none."""
        current = self._state.announcements
        kept = tuple(a for a in current if a.id != id)
        self._state = replace(self._state, announcements=kept)
        return len(kept) != len(current)

    @property
    def announcements(self) -> list[Announcement]:
        """The standing announcements, in the order they were made."""
        return list(self._state.announcements)
