"""SKILL.md files: every YAML form loads the same skill, and each broken file fails with a message
that names the file and the line and shows a front matter that would load."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextchef import Skill, SkillError, load_skill, load_skills

BODY = "Read the whole diff first.\nThen list the bugs."

VALID_FORMS = {
    "plain": """---
name: review
description: Reviews a diff for bugs and unclear names.
when_to_use: The user asks for a code review.
allowed_tools: [read_file, grep]
---
""",
    "kebab-case and block list": """---
name: review
description: Reviews a diff for bugs and unclear names.
when-to-use: The user asks for a code review.
allowed-tools:
  - read_file
  - grep
---
""",
    "quoted with a colon": """---
name: "review"
description: 'Reviews a diff for bugs and unclear names.'
when_to_use: "The user asks for a code review."
allowed-tools: "read_file, grep"
---
""",
    "literal and folded block scalars": """---
name: review
description: >
  Reviews a diff for bugs
  and unclear names.
when_to_use: |-
  The user asks for a code review.
allowed-tools: read_file grep
---
""",
    "comments, camelCase and CRLF": "---\r\n# a review skill\r\nname: review  # the name\r\n"
    "description: >-\r\n  Reviews a diff for bugs and unclear names.\r\n"
    "whenToUse: The user asks for a code review.\r\nallowedTools: [read_file,   grep, '']\r\n"
    "---\r\n",
    "flow mapping": """---
{name: review, description: Reviews a diff for bugs and unclear names.,
 when_to_use: The user asks for a code review., allowed-tools: [read_file, grep]}
---
""",
}


def write(tmp_path: Path, text: str, folder: str = "review") -> Path:
    path = tmp_path / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize("form", sorted(VALID_FORMS))
def test_every_yaml_form_loads_the_same_skill(tmp_path: Path, form: str) -> None:
    newline = "\r\n" if "CRLF" in form else "\n"
    path = write(tmp_path, VALID_FORMS[form] + BODY.replace("\n", newline) + newline)
    skill = load_skill(path)
    assert skill == Skill(
        name="review",
        description="Reviews a diff for bugs and unclear names.",
        instructions=BODY,
        when_to_use="The user asks for a code review.",
        allowed_tools=("read_file", "grep"),
        base_dir=str(path.parent.resolve()),
    )
    assert load_skill(path.parent) == skill  # the folder works too


def test_unknown_keys_are_kept_verbatim_and_dates_stay_text(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "---\nname: review\ndescription: Reviews a diff for bugs and unclear names.\n"
        "license: MIT\nversion: 2\ncreated: 2025-01-31\nmetadata:\n  author: ana\n"
        "arguments: file mode\n---\nReview $file in $mode mode.\n",
    )
    skill = load_skill(path)
    assert skill.metadata == {
        "license": "MIT",
        "version": 2,
        "created": "2025-01-31",
        "metadata": {"author": "ana"},
    }
    assert skill.arguments == ("file", "mode")


BROKEN = [
    ("no opening line", "name: x\n---\n", 1, "must start with a '---' line"),
    ("never closed", "---\nname: review\ndescription: d\n", 1, "never closed"),
    (
        "unquoted colon",
        "---\nname: review\ndescription: Use when: asked\n---\n",
        3,
        "A value that holds ': ' must be quoted",
    ),
    (
        "bad indentation",
        "---\nname: review\ndescription: Reviews code.\nallowed-tools:\n  - a\n - b\n---\n",
        6,
        "not valid YAML",
    ),
    ("no name", "---\ndescription: Reviews a diff for bugs.\n---\n", 2, "has no 'name'"),
    ("no description", "---\nname: review\n---\nBody\n", 2, "has no 'description'"),
    (
        "empty description",
        "---\nname: review\ndescription: ''\n---\n",
        3,
        "'description' must be non-empty text",
    ),
    ("a list as name", "---\nname: [a, b]\ndescription: d\n---\n", 2, "'name' must be text"),
    (
        "a name with a slash",
        "---\nname: ../etc\ndescription: Reviews a diff.\n---\n",
        2,
        "is not usable",
    ),
    (
        "a tool list of mappings",
        "---\nname: review\ndescription: Reviews a diff.\nallowed-tools:\n  - {a: 1}\n---\n",
        4,
        "'allowed-tools' must be a list of tool names",
    ),
    (
        "a key given twice",
        "---\nname: review\ndescription: d\nname: other\n---\n",
        4,
        "the key 'name' appears twice (lines 2 and 4)",
    ),
    (
        "two spellings of one key",
        "---\nname: review\ndescription: d\nallowed_tools: [a]\nallowed-tools: [b]\n---\n",
        5,
        "'allowed_tools' and 'allowed-tools' are the same key",
    ),
    (
        "an alias",
        "---\nname: review\ndescription: Reviews a diff.\na: &x [1, 2]\nb: *x\n---\n",
        5,
        "YAML aliases (*name) are not supported",
    ),
    ("a list, not a mapping", "---\n- name\n- description\n---\n", 2, "must be 'key: value'"),
    (
        "binary data",
        "---\nname: review\ndescription: Reviews a diff.\nblob: !!binary aGk=\n---\n",
        4,
        "the value of 'blob' is not plain data",
    ),
]


@pytest.mark.parametrize(("case", "text", "line", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_file_names_file_and_line(
    tmp_path: Path, case: str, text: str, line: int, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SkillError) as caught:
        load_skill(path)
    error = caught.value
    assert (error.path, error.line) == (str(path), line), case
    assert str(error).startswith(f"{path}, line {line}: "), str(error)
    assert message in str(error)


def test_the_message_shows_a_front_matter_that_loads(tmp_path: Path) -> None:
    path = write(tmp_path, "---\nname: review\n---\nBody\n")
    with pytest.raises(SkillError) as caught:
        load_skill(path)
    shown = str(caught.value).split("then the instructions:\n", 1)[1]
    example = write(tmp_path, shown.split("Read the whole diff")[0] + "Body\n", "example")
    assert load_skill(example).name == "review"  # the example uses the skill's own name


def test_unreadable_and_non_utf8_files_are_skill_errors(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match="cannot be read"):
        load_skill(tmp_path / "missing" / "SKILL.md")
    path = tmp_path / "latin" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(b"---\nname: caf\xe9\n---\n")
    with pytest.raises(SkillError, match="not UTF-8"):
        load_skill(path)


def skill_text(name: str, description: str, body: str = "Do it.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def test_load_skills_later_directories_win_and_bad_files_never_raise(tmp_path: Path) -> None:
    user, project = tmp_path / "user", tmp_path / "project"
    write(user, skill_text("review", "The user's own review skill, thorough."), "review")
    write(user, skill_text("plan", "Plans the change before any edit is made."), "plan")
    write(project, skill_text("review", "The project's review skill, with its rules."), "review")
    write(project, "---\nname: broken\n---\n", "broken")
    (project / "notes").mkdir()  # a folder without SKILL.md is skipped
    found = load_skills([user, project, tmp_path / "absent"])
    assert [s.name for s in found.skills] == ["plan", "review"]  # first-seen order
    assert found.by_name()["review"].description.startswith("The project's")
    assert [(e.path, e.line) for e in found.errors] == [(str(project / "broken/SKILL.md"), 2)]
    texts = [str(w) for w in found.warnings]
    assert f"{project / 'review/SKILL.md'}: the skill 'review' overrides the one in " in texts[0]
    assert any(str(tmp_path / "absent") in text and "no such directory" in text for text in texts)
    first = load_skills([user, project], precedence="first_wins")
    assert first.by_name()["review"].description.startswith("The user's")


def test_warnings_name_what_to_fix(tmp_path: Path) -> None:
    write(tmp_path, skill_text("Review_Tool", "Short.", ""), "review")
    (warnings,) = [load_skills(tmp_path).warnings]
    messages = " | ".join(w.message for w in warnings)
    assert "not in the Agent Skills form" in messages
    assert "differs from its folder 'review'" in messages
    assert "description is very short" in messages
    assert "no instructions" in messages


def test_links_to_missing_files_are_warnings(tmp_path: Path) -> None:
    body = (
        "See [the style guide](references/style.md#names), [setup](./setup.md), "
        "[the site](https://example.com/x) and [above](#top)."
    )
    path = write(tmp_path, skill_text("review", "Reviews a diff for bugs and unclear names.", body))
    (path.parent / "references").mkdir()
    (path.parent / "references" / "style.md").write_text("Names.")
    found = load_skills(tmp_path)
    assert [w.message for w in found.warnings] == [
        "links to ./setup.md, which is not among the skill's files"
    ]
