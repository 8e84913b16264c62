"""Skills: behaviour bundles in the `SKILL.md` format, loaded, rendered and activated.

- `model`: `Skill`, `LoadedSkills`, `SkillWarning` (plain data);
- `frontmatter`: reading one `SKILL.md` (PyYAML front matter, then the instructions);
- `loading`: skills from directories and from the store's `skills/` namespace, and publishing
  one there;
- `render`: placeholders filled in, and listings;
- `active`: the skill a chef has switched on, and the tools it keeps.
"""

from __future__ import annotations

from contextchef._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
if TYPE_CHECKING:
    from contextchef.skills.active import ActiveSkill, activate
    from contextchef.skills.loading import (
        aload_store_skills,
        apublish_skill,
        load_skill,
        load_skills,
        load_store_skills,
        publish_skill,
        skill_markdown,
        stored_skill,
        stored_skills,
    )
    from contextchef.skills.model import SKILLS_NAMESPACE, LoadedSkills, Skill, SkillWarning
    from contextchef.skills.render import format_skill_listing, render_skill, split_arguments

__all__ = [
    "SKILLS_NAMESPACE",
    "ActiveSkill",
    "LoadedSkills",
    "Skill",
    "SkillWarning",
    "activate",
    "aload_store_skills",
    "apublish_skill",
    "format_skill_listing",
    "load_skill",
    "load_skills",
    "load_store_skills",
    "publish_skill",
    "render_skill",
    "skill_markdown",
    "split_arguments",
    "stored_skill",
    "stored_skills",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "contextchef.skills.active": ("ActiveSkill", "activate"),
        "contextchef.skills.loading": (
            "aload_store_skills",
            "apublish_skill",
            "load_skill",
            "load_skills",
            "load_store_skills",
            "publish_skill",
            "skill_markdown",
            "stored_skill",
            "stored_skills",
        ),
        "contextchef.skills.model": ("SKILLS_NAMESPACE", "LoadedSkills", "Skill", "SkillWarning"),
        "contextchef.skills.render": ("format_skill_listing", "render_skill", "split_arguments"),
    },
)
