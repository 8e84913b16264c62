"""Rendering skills: placeholders, quote-aware arguments, listings."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextchef import ConfigError, Skill
from contextchef.skills import format_skill_listing, render_skill, split_arguments


def skill(instructions: str, **fields: object) -> Skill:
    return Skill("fix", "Fixes one failing test.", instructions, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a b  c", ["a", "b", "c"]),
        ('"two words" one', ["two words", "one"]),
        ("'single quoted' x", ["single quoted", "x"]),
        ('"it\'s" \'say "hi"\'', ["it's", 'say "hi"']),
        (r'"a \"quoted\" word" back\ slash', ['a "quoted" word', "back slash"]),
        ('pre"fix mid"post', ["prefix midpost"]),
        ('"" empty', ["", "empty"]),
        ('"unclosed rest of it', ["unclosed rest of it"]),
        ("   ", []),
    ],
)
def test_arguments_split_like_shell_words(text: str, words: list[str]) -> None:
    assert split_arguments(text) == words


def test_positional_named_and_whole_argument_placeholders() -> None:
    rendered = render_skill(
        skill(
            "Fix $0 with $ARGUMENTS[1]; file=$file mode=$mode; all: $ARGUMENTS; third: '$2'.",
            arguments=("file", "mode"),
        ),
        'tests/test_x.py "fast mode"',
    )
    assert rendered == (
        "Fix tests/test_x.py with fast mode; file=tests/test_x.py mode=fast mode; "
        "all: tests/test_x.py \"fast mode\"; third: ''."
    )


def test_a_value_is_never_substituted_again_and_unknown_names_stay() -> None:
    rendered = render_skill(
        skill("A=$0 B=$1 home=$HOME ${USER} ${TEAM} $ARGUMENTS[x] $file"),
        ["$1", "${TEAM}"],
        vars={"TEAM": "core"},
    )
    assert rendered == "A=$1 B=${TEAM} home=$HOME ${USER} core $ARGUMENTS[x] $file"


def test_without_args_only_variables_are_filled_and_skill_dir_is_known() -> None:
    s = skill("Run ${SKILL_DIR}/check.sh on $0 ($ARGUMENTS)", base_dir="/skills/fix")
    assert render_skill(s) == "Run /skills/fix/check.sh on $0 ($ARGUMENTS)"
    assert render_skill(s, vars={"SKILL_DIR": "x"}).startswith("Run x/check.sh")


def test_arguments_without_a_placeholder_are_appended() -> None:
    assert render_skill(skill("Fix the test."), "test_a") == "Fix the test.\n\nARGUMENTS: test_a"
    assert render_skill(skill("Fix the test."), "  ") == "Fix the test."
    assert render_skill(skill("Fix $0."), "test_a") == "Fix test_a."


def test_bad_arguments_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        render_skill(skill("x"), 3)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        render_skill(skill("x"), vars={"A": 1})  # type: ignore[dict-item]


SKILLS = [
    Skill("plan", "Plans a change.\nStep by step.", "p", when_to_use="Before editing."),
    Skill("review", 'Reviews <diffs> & "names".', "r"),
    Skill("ship", "Ships a release.", "s"),
]


def test_plain_and_xml_listings_are_byte_stable() -> None:
    assert format_skill_listing(SKILLS) == (
        "- plan: Plans a change. Step by step. (use when: Before editing.)\n"
        '- review: Reviews <diffs> & "names".\n'
        "- ship: Ships a release."
    )
    assert format_skill_listing(SKILLS, format="xml", include_when_to_use=False) == (
        "<skills>\n"
        '<skill name="plan"><description>Plans a change. Step by step.</description></skill>\n'
        '<skill name="review"><description>Reviews &lt;diffs&gt; &amp; "names".'
        "</description></skill>\n"
        '<skill name="ship"><description>Ships a release.</description></skill>\n'
        "</skills>"
    )
    assert format_skill_listing([], format="xml") == "<skills>\n</skills>"


def test_a_listing_over_its_limit_drops_whole_entries_and_says_so() -> None:
    full = format_skill_listing(SKILLS)
    assert format_skill_listing(SKILLS, max_chars=len(full)) == full
    cut = format_skill_listing(SKILLS, max_chars=len(full) - 1)
    assert cut.splitlines() == [full.splitlines()[0], "... and 2 more skills not listed here."]
    for limit in range(1, len(full)):
        assert len(format_skill_listing(SKILLS, max_chars=limit)) <= limit
    assert format_skill_listing(SKILLS, max_chars=0) == ""
    with pytest.raises(ConfigError):
        format_skill_listing(SKILLS, format="json")


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)))
def test_shell_quoted_words_split_back_into_the_same_words(words: list[str]) -> None:
    assert split_arguments(shlex.join(words)) == words
    rendered = render_skill(skill(" | ".join(f"${i}" for i in range(len(words)))), words)
    assert rendered == " | ".join(words)
