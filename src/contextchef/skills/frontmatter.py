"""Reading a `SKILL.md`: YAML front matter (parsed by PyYAML) between `---` lines, then the body.

Every YAML form works (plain, quoted and block scalars, flow and block lists, comments); keys
may be written in snake_case, kebab-case (`allowed-tools`, `when-to-use`) or camelCase. Dates
stay text (a skill's metadata is JSON data, so a snapshot can carry it). A problem raises a
`SkillError` that names the file and the line and shows a front matter that would load.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from contextchef._jsonvalue import NotJson, strict_json
from contextchef.errors import SkillError
from contextchef.skills.model import Skill, SkillWarning
from contextchef.tokens import estimate

__all__ = ["parse_skill", "split_tool_list"]

_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, with dates left as the text they were written as."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

_ALIASES = {
    "name": "name",
    "description": "description",
    "when_to_use": "when_to_use",
    "when-to-use": "when_to_use",
    "whenToUse": "when_to_use",
    "allowed_tools": "allowed_tools",
    "allowed-tools": "allowed_tools",
    "allowedTools": "allowed_tools",
    "arguments": "arguments",
}
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._:-]{0,62}[A-Za-z0-9])?$")
_SPEC_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_ARGUMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SHORT_DESCRIPTION = 20
LONG_DESCRIPTION = 1024
LONG_INSTRUCTIONS = 4000
"""Estimated tokens past which instructions get a warning (move detail into referenced files)."""


def example(name: str | None) -> str:
    """A front matter that loads, for error messages: with the skill's own name when usable."""
    shown = name if isinstance(name, str) and _NAME.match(name) else "my-skill"
    return (
        "A SKILL.md starts with YAML front matter between '---' lines, then the instructions:\n"
        "---\n"
        f"name: {shown}\n"
        "description: Reviews a diff for bugs and unclear names. Use when asked to review code.\n"
        "allowed-tools: [read_file, grep]   # optional\n"
        "---\n"
        "Read the whole diff first, then ..."
    )


def parse_skill(
    text: str, *, source: str, base_dir: str | None, directory: str | None = None
) -> tuple[Skill, list[SkillWarning]]:
    """The skill a SKILL.md's text describes, and its warnings; `source` names the file in
    errors, `directory` is the name of the folder holding it (checked against the name)."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[0].rstrip() != "---":
        raise SkillError(
            "the file must start with a '---' line that opens the YAML front matter.\n"
            + example(None),
            path=source,
            line=1,
        )
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        raise SkillError(
            "the front matter opened on line 1 is never closed by a '---' line.\n" + example(None),
            path=source,
            line=1,
        )
    front = "\n".join(lines[1:end])
    data, key_lines = _front_matter(front, source)
    fields = _known_fields(data, key_lines, source)
    name = _name(fields, key_lines, source)
    warnings: list[SkillWarning] = []
    skill = Skill(
        name=name,
        description=_description(fields, key_lines, source, name),
        instructions="\n".join(lines[end + 1 :]).strip(),
        when_to_use=_optional_text(fields, "when_to_use", key_lines, source, name),
        allowed_tools=_allowed_tools(fields, key_lines, source, name, warnings),
        base_dir=base_dir,
        metadata=_metadata(data, key_lines, source, name),
        arguments=_arguments(fields, key_lines, source, name),
    )
    warnings.extend(_advice(skill, source, directory))
    return skill, warnings


def _front_matter(front: str, source: str) -> tuple[dict[str, Any], dict[str, int]]:
    """The front matter as data, and the line each top-level key is on (1-based, in the file)."""
    try:
        for event in yaml.parse(front, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):  # shared nodes can multiply without bound
                raise SkillError(
                    "YAML aliases (*name) are not supported in a SKILL.md front matter; "
                    "write the value out",
                    path=source,
                    line=event.start_mark.line + 2 if event.start_mark else None,
                )
        node = yaml.compose(front, Loader=_Loader)
        data = yaml.load(front, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 2 if mark is not None else None
        problem = exc.problem or exc.context or "cannot be parsed"
        hint = ""
        if "mapping values are not allowed" in problem:
            hint = (
                " A value that holds ': ' must be quoted, e.g. "
                'description: "Use when: the user asks for a review".'
            )
        raise SkillError(
            f"the front matter is not valid YAML: {problem}.{hint}\n" + example(None),
            path=source,
            line=line,
        ) from exc
    except yaml.YAMLError as exc:
        raise SkillError(
            f"the front matter is not valid YAML: {exc}\n" + example(None), path=source, line=2
        ) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode | type(None)):
        raise SkillError(
            f"the front matter must be 'key: value' lines, not a {type(data).__name__}.\n"
            + example(None),
            path=source,
            line=2,
        )
    key_lines: dict[str, int] = {}
    for key_node, _ in node.value if node is not None else ():
        key, line = key_node.value, key_node.start_mark.line + 2
        if not isinstance(key_node, yaml.ScalarNode) or not isinstance(key, str):
            raise SkillError("front matter keys must be plain text", path=source, line=line)
        if key in key_lines:
            raise SkillError(
                f"the key {key!r} appears twice (lines {key_lines[key]} and {line}); keep one",
                path=source,
                line=line,
            )
        key_lines[key] = line
    for key in data:
        if not isinstance(key, str):
            raise SkillError(f"front matter keys must be text, got {key!r}", path=source, line=2)
    return data, key_lines


def _known_fields(
    data: Mapping[str, Any], key_lines: dict[str, int], source: str
) -> dict[str, tuple[str, Any]]:
    """The known keys under their canonical names: (the key as written, its value)."""
    fields: dict[str, tuple[str, Any]] = {}
    for key, value in data.items():
        canonical = _ALIASES.get(key)
        if canonical is None:
            continue
        if canonical in fields:
            first = fields[canonical][0]
            raise SkillError(
                f"{first!r} and {key!r} are the same key; keep one",
                path=source,
                line=key_lines.get(key),
            )
        fields[canonical] = (key, value)
    return fields


def _name(fields: dict[str, tuple[str, Any]], key_lines: dict[str, int], source: str) -> str:
    if "name" not in fields:
        raise SkillError(
            "the front matter has no 'name'; every skill needs one.\n" + example(None),
            path=source,
            line=2,
        )
    value = fields["name"][1]
    line = key_lines.get(fields["name"][0])
    if not isinstance(value, str) or not value.strip():
        raise SkillError(
            f"'name' must be text, got {value!r}.\n" + example(None), path=source, line=line
        )
    name = value.strip()
    if not _NAME.match(name):
        raise SkillError(
            f"the name {name!r} is not usable: up to 64 letters, digits, '-', '_', '.' or ':', "
            "starting and ending with a letter or digit.\n" + example(None),
            path=source,
            line=line,
        )
    return name


def _description(
    fields: dict[str, tuple[str, Any]], key_lines: dict[str, int], source: str, name: str
) -> str:
    if "description" not in fields:
        raise SkillError(
            "the front matter has no 'description'; every skill needs one (what it does and "
            "when to use it).\n" + example(name),
            path=source,
            line=2,
        )
    value = fields["description"][1]
    if not isinstance(value, str) or not value.strip():
        raise SkillError(
            f"'description' must be non-empty text, got {value!r}.\n" + example(name),
            path=source,
            line=key_lines.get(fields["description"][0]),
        )
    return value.strip()


def _optional_text(
    fields: dict[str, tuple[str, Any]],
    canonical: str,
    key_lines: dict[str, int],
    source: str,
    name: str,
) -> str | None:
    if canonical not in fields or fields[canonical][1] is None:
        return None
    key, value = fields[canonical]
    if not isinstance(value, str):
        raise SkillError(
            f"{key!r} must be text, got {value!r}.\n" + example(name),
            path=source,
            line=key_lines.get(key),
        )
    return value.strip() or None


def split_tool_list(text: str) -> list[str]:
    """A tool list written as one string: entries separated by commas or spaces, except inside
    parentheses (`Bash(git add:*)` stays one entry)."""
    entries: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                entries.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        entries.append("".join(current))
    return entries


def _allowed_tools(
    fields: dict[str, tuple[str, Any]],
    key_lines: dict[str, int],
    source: str,
    name: str,
    warnings: list[SkillWarning],
) -> tuple[str, ...] | None:
    if "allowed_tools" not in fields or fields["allowed_tools"][1] is None:
        return None
    key, value = fields["allowed_tools"]
    line = key_lines.get(key)
    raw = split_tool_list(value) if isinstance(value, str) else value
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise SkillError(
            f"{key!r} must be a list of tool names, e.g. [read_file, grep] or "
            f'"read_file grep", got {value!r}.\n' + example(name),
            path=source,
            line=line,
        )
    tools: list[str] = []
    for entry in (item.strip() for item in raw):
        if not entry:
            warnings.append(SkillWarning(source, f"{key!r} has an empty entry (dropped)"))
        elif entry in tools:
            warnings.append(SkillWarning(source, f"{key!r} names {entry!r} twice"))
        else:
            tools.append(entry)
    return tuple(tools)


def _arguments(
    fields: dict[str, tuple[str, Any]], key_lines: dict[str, int], source: str, name: str
) -> tuple[str, ...]:
    if "arguments" not in fields or fields["arguments"][1] is None:
        return ()
    key, value = fields["arguments"]
    raw = split_tool_list(value) if isinstance(value, str) else value
    if (
        not isinstance(raw, list)
        or not all(isinstance(item, str) for item in raw)
        or not all(_ARGUMENT.match(item) for item in raw)
    ):
        raise SkillError(
            f"{key!r} must list argument names (letters, digits and '_'), e.g. "
            f"[file, mode], got {value!r}.\n" + example(name),
            path=source,
            line=key_lines.get(key),
        )
    return tuple(raw)


def _metadata(
    data: Mapping[str, Any], key_lines: dict[str, int], source: str, name: str
) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for key, value in data.items():
        if key in _ALIASES:
            continue
        try:
            metadata[key] = strict_json(value)
        except NotJson as exc:
            raise SkillError(
                f"the value of {key!r} is not plain data: {exc.describe('it')}",
                path=source,
                line=key_lines.get(key),
            ) from None
    return metadata


def _advice(skill: Skill, source: str, directory: str | None) -> list[SkillWarning]:
    advice: list[SkillWarning] = []
    if not _SPEC_NAME.match(skill.name):
        advice.append(
            SkillWarning(
                source,
                f"the name {skill.name!r} is not in the Agent Skills form (lowercase letters, "
                "digits and single hyphens); other tools may refuse it",
            )
        )
    if directory is not None and directory != skill.name:
        advice.append(
            SkillWarning(source, f"the name {skill.name!r} differs from its folder {directory!r}")
        )
    if len(skill.description) < SHORT_DESCRIPTION:
        advice.append(
            SkillWarning(
                source, "the description is very short; say what the skill does and when to use it"
            )
        )
    elif len(skill.description) > LONG_DESCRIPTION:
        advice.append(
            SkillWarning(
                source, f"the description is over {LONG_DESCRIPTION} characters; shorten it"
            )
        )
    if not skill.instructions:
        advice.append(SkillWarning(source, "the skill has no instructions after the front matter"))
    elif estimate(skill.instructions) > LONG_INSTRUCTIONS:
        advice.append(
            SkillWarning(
                source,
                f"the instructions are over about {LONG_INSTRUCTIONS} tokens; move detail into "
                "files the skill refers to",
            )
        )
    return advice
