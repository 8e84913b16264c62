"""The chef: `ContextChef` and `AsyncContextChef`, thin facades over their parts.

`chef.tools` (`Tools`), `chef.skills` (`Skills` / `AsyncSkills`), `chef.prompt` (`Prompt`),
`chef.memory` and `chef.store`; the facade keeps the everyday verbs (set the layers, compile,
handle tool calls, snapshot and restore, events and slots).
"""

from contextchef.chef.chefs import AsyncContextChef, ContextChef
from contextchef.chef.prompt import Prompt
from contextchef.chef.skills import AsyncSkills, Skills
from contextchef.chef.tools import Tools
from contextchef.snapshot import Snapshot

__all__ = [
    "AsyncContextChef",
    "AsyncSkills",
    "ContextChef",
    "Prompt",
    "Skills",
    "Snapshot",
    "Tools",
]
