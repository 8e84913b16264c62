"""`chef.skills`: the skills a chef finds by name, and the one it has switched on.

The registry is this part's own state; the active skill rides in the chef's `StateCell` with
the other layers, so every compile and every snapshot sees it. Activation may read a stored
skill, so it is a flow: `Skills.activate` drives it with plain calls, `AsyncSkills.activate`
awaits it; everything else is shared (`SkillsBase`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Self

from contextchef._effects import Flow, drive_async, drive_sync
from contextchef.chef.cell import StateCell
from contextchef.errors import ConfigError, UnknownSkillError
from contextchef.skills.active import ActiveSkill, activate
from contextchef.skills.loading import stored_skill, stored_skills
from contextchef.skills.model import LoadedSkills, Skill
from contextchef.store.core import StoreCore

__all__ = [
    "SKILL_PLACEMENTS",
    "AsyncSkills",
    "Skills",
    "SkillsBase",
    "check_skill_placement",
    "skill_registry",
]

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


class SkillsBase:
    """What both chefs' skills share: the registry, the active skill, the activation flow.

    Args:
        cell: the chef's compile state (where the active skill lives).
        store: where skills not registered are looked up (`context://skills/<name>/`).
        skills: the `skills=` option.
        placement: the `skill_placement=` option, checked.
    """

    def __init__(
        self,
        cell: StateCell,
        store: StoreCore,
        skills: Iterable[Skill] | LoadedSkills | None,
        placement: str,
    ) -> None:
        self._cell = cell
        self._store = store
        self._registry = skill_registry(skills)
        self._placement = placement

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {list(self._registry)} active={self.active!r}>"

    def register(self, skills: Iterable[Skill] | LoadedSkills) -> Self:
        """Replace the skills `activate(name)` finds by name (a list of `Skill`, or what
        `load_skills` returned). The active skill stays active."""
        self._registry = skill_registry(skills)
        return self

    @property
    def registered(self) -> list[Skill]:
        """The registered skills, in registration order."""
        return list(self._registry.values())

    @property
    def active(self) -> Skill | None:
        """The skill `activate` switched on, or None."""
        skill = self._cell.state.skill
        return skill.skill if skill is not None else None

    @property
    def placement(self) -> str:
        """Where the active skill's instructions go (`skill_placement=`)."""
        return self._placement

    def _activate_flow(
        self,
        skill: str | Skill | None,
        args: str | Sequence[str] | None,
        vars: Mapping[str, str] | None,
    ) -> Flow[None]:
        """Switch `skill` on (a name: registered first, then `context://skills/<name>/`),
        rendered with `args` and `vars`; None switches the active skill off."""
        active: ActiveSkill | None = None
        if isinstance(skill, str):
            found = self._registry.get(skill)
            if found is None:
                found = yield from stored_skill(self._store, skill)
            if found is None:
                stored = yield from stored_skills(self._store)
                names = sorted({*self._registry, *(s.name for s in stored.skills)})
                raise UnknownSkillError(skill, names)
            active = activate(found, args, vars)
        elif isinstance(skill, Skill):
            active = activate(skill, args, vars)
        elif skill is not None:
            raise ConfigError(
                f"activate takes a skill name, a Skill or None, got {type(skill).__name__}"
            )
        elif args is not None or vars is not None:
            raise ConfigError("activate(None) switches the skill off; it takes no args")
        self._cell.state = replace(self._cell.state, skill=active)


class Skills(SkillsBase):
    """`ContextChef.skills`: activation with plain calls."""

    def activate(
        self,
        skill: str | Skill | None,
        *,
        args: str | Sequence[str] | None = None,
        vars: Mapping[str, str] | None = None,
    ) -> Self:
        """Switch a skill on for every compile from now on; None switches it off.

        `skill` is a `Skill`, or a name: a registered skill (`skills=`, `register`), else one
        stored at `context://skills/<name>/SKILL.md`; an unknown name raises
        `UnknownSkillError`. Its instructions are rendered once, now, with `args` and `vars`
        (see `render_skill`), and placed by `skill_placement`. A skill with `allowed_tools`
        keeps only those of your tools (and any tool a call in the window still refers to).
        """
        drive_sync(self._activate_flow(skill, args, vars))
        return self


class AsyncSkills(SkillsBase):
    """`AsyncContextChef.skills`: a stored skill is read with an await."""

    async def activate(
        self,
        skill: str | Skill | None,
        *,
        args: str | Sequence[str] | None = None,
        vars: Mapping[str, str] | None = None,
    ) -> Self:
        """See `Skills.activate`."""
        await drive_async(self._activate_flow(skill, args, vars))
        return self
