"""Rendering a skill for the model: placeholders filled in, and listings of skills. Pure.

Placeholders, replaced in one pass (a substituted value is never scanned again):

- `${VAR}`: from `vars` (plus `SKILL_DIR`, the skill's folder, when it has one); an unknown
  name is left as written;
- with `args` given: `$ARGUMENTS` (the raw argument string), `$ARGUMENTS[n]` and `$n` (the
  n-th argument, from 0; `''` past the last), and `$name` for a name in the skill's
  `arguments` (its position's argument). Other `$words` are left as written.

Arguments split like a shell's words: spaces separate them, `"a b"` and `'a b'` group, a
backslash escapes the next character (inside double quotes only `"`, `\\`, `$` and `` ` ``),
and an unclosed quote runs to the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from contextchef import prompts
from contextchef.errors import ConfigError
from contextchef.skills.model import Skill

__all__ = ["format_skill_listing", "render_skill", "split_arguments"]

_PLACEHOLDER = re.compile(
    r"\$\{(?P<var>[A-Za-z_][A-Za-z0-9_]*)\}"
    r"|\$ARGUMENTS\[(?P<index>[0-9]+)\]"
    r"|(?P<all>\$ARGUMENTS)(?![A-Za-z0-9_\[])"
    r"|\$(?P<position>[0-9]+)"
    r"|\$(?P<named>[A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_\[])"
)
_DOUBLE_QUOTED_ESCAPES = frozenset('"\\$`')


def split_arguments(text: str) -> list[str]:
    """`text` split into arguments by the quoting rules in the module docstring."""
    words: list[str] = []
    current: list[str] = []
    started = False
    quote: str | None = None
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if quote == "'":
            if char == "'":
                quote = None
            else:
                current.append(char)
        elif quote == '"':
            if char == '"':
                quote = None
            elif char == "\\" and index < len(text) and text[index] in _DOUBLE_QUOTED_ESCAPES:
                current.append(text[index])
                index += 1
            else:
                current.append(char)
        elif char.isspace():
            if started:
                words.append("".join(current))
                current, started = [], False
        elif char in "'\"":
            quote, started = char, True
        elif char == "\\" and index < len(text):
            current.append(text[index])
            index += 1
            started = True
        else:
            current.append(char)
            started = True
    if started:
        words.append("".join(current))
    return words


def render_skill(
    skill: Skill,
    args: str | Sequence[str] | None = None,
    *,
    vars: Mapping[str, str] | None = None,
    argument_names: Sequence[str] | None = None,
) -> str:
    """The skill's instructions with its placeholders filled in (see the module docstring).

    `args`: the arguments as one string (split with quotes respected) or as a list; None
    leaves the argument placeholders as written. `argument_names` overrides the skill's
    `arguments`. When `args` are given, not blank, and no argument placeholder used them, they
    are appended on a line of their own so the model still sees them.
    """
    names = tuple(argument_names) if argument_names is not None else skill.arguments
    known = {"SKILL_DIR": skill.base_dir} if skill.base_dir else {}
    if vars is not None:
        if not isinstance(vars, Mapping) or not all(
            isinstance(key, str) and isinstance(value, str) for key, value in vars.items()
        ):
            raise ConfigError("render_skill vars must map names to strings")
        known.update(vars)
    if args is None:
        raw, words = None, []
    elif isinstance(args, str):
        raw, words = args, split_arguments(args)
    elif isinstance(args, Sequence) and all(isinstance(word, str) for word in args):
        words = list(args)
        raw = " ".join(_shell_word(word) for word in words)
    else:
        raise ConfigError("render_skill args must be a string or a list of strings")
    used = False

    def fill(match: re.Match[str]) -> str:
        nonlocal used
        if (var := match["var"]) is not None:
            return known.get(var, match[0])
        if raw is None:
            return match[0]
        position: int | None = None
        if match["index"] is not None:
            position = int(match["index"])
        elif match["position"] is not None:
            position = int(match["position"])
        elif match["all"] is not None:
            used = True
            return raw
        elif match["named"] in names:
            position = names.index(match["named"])
        if position is None:
            return match[0]
        used = True
        return words[position] if position < len(words) else ""

    text = _PLACEHOLDER.sub(fill, skill.instructions)
    if raw is not None and not used and raw.strip():
        text = f"{text}\n\n{prompts.SKILL_ARGUMENTS_LABEL}{raw}" if text else raw
    return text


def _shell_word(word: str) -> str:
    if word and not any(char.isspace() or char in "'\"\\" for char in word):
        return word
    return '"' + "".join(f"\\{c}" if c in _DOUBLE_QUOTED_ESCAPES else c for c in word) + '"'


def format_skill_listing(
    skills: Iterable[Skill],
    *,
    format: str = "plain",
    include_when_to_use: bool = True,
    max_chars: int | None = None,
) -> str:
    """The skills as a listing for a prompt: `format="plain"` (one `- name: description` line
    each) or `"xml"` (a `<skills>` element). With `max_chars`, whole entries are dropped from
    the end until it fits and a closing line says how many were left out."""
    if format not in ("plain", "xml"):
        raise ConfigError(f"format must be 'plain' or 'xml', got {format!r}")
    if max_chars is not None and (not isinstance(max_chars, int) or isinstance(max_chars, bool)):
        raise ConfigError("max_chars must be an int or None")
    entries = [
        (
            skill.name,
            " ".join(skill.description.split()),
            " ".join(skill.when_to_use.split())
            if include_when_to_use and skill.when_to_use
            else None,
        )
        for skill in skills
    ]
    render = prompts.skill_listing_xml if format == "xml" else prompts.skill_listing_plain
    lines = render(entries)
    opening, closing = (["<skills>"], ["</skills>"]) if format == "xml" else ([], [])
    if max_chars is None:
        return "\n".join([*opening, *lines, *closing])
    if max_chars <= 0:
        return ""
    for kept in range(len(lines), -1, -1):
        tail = [prompts.skills_omitted(len(lines) - kept)] if kept < len(lines) else []
        text = "\n".join([*opening, *lines[:kept], *closing, *tail])
        if len(text) <= max_chars:
            return text
    return ""
