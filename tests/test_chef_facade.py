"""The chef is a thin facade over parts that are objects (issue 22, design.md "chef/"): at most
25 public members, no mixins in its MRO, and parts that share no private state with each other
(each is handed its collaborators explicitly and owns what it holds)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from contextchef import AsyncContextChef, ContextChef
from contextchef.chef import AsyncSkills, Prompt, Skills, Tools
from contextchef.chef.facade import ChefFacade

CHEF = Path(__file__).resolve().parents[1] / "src" / "contextchef" / "chef"


def public(kind: type) -> list[str]:
    return [name for name in dir(kind) if not name.startswith("_")]


@pytest.mark.parametrize("chef", [ContextChef, AsyncContextChef])
def test_the_facade_has_at_most_25_public_members(chef: type) -> None:
    assert len(public(chef)) <= 25, public(chef)


@pytest.mark.parametrize("chef", [ContextChef, AsyncContextChef])
def test_the_mro_holds_no_mixins(chef: type) -> None:
    assert chef.__mro__ == (chef, ChefFacade, object)
    assert ChefFacade.__bases__ == (object,)


def test_both_chefs_have_the_same_members() -> None:
    assert public(ContextChef) == public(AsyncContextChef)


def test_the_parts_are_objects_of_their_own() -> None:
    chef, achef = ContextChef(memory={}), AsyncContextChef()
    assert isinstance(chef.tools, Tools) and isinstance(chef.prompt, Prompt)
    assert isinstance(chef.skills, Skills) and isinstance(achef.skills, AsyncSkills)
    assert chef.store is chef.store and chef.memory.turn == 0
    assert chef.tools.register([]) is chef.tools  # a part's setters chain on the part


def private_reads(path: Path) -> list[str]:
    """`x._name` reads in a chef module where `x` is not `self` nor `cls`: a part reaching
    into another object's private state."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", sorted(CHEF.glob("*.py")), ids=lambda p: p.name)
def test_no_part_reads_another_objects_private_attributes(path: Path) -> None:
    assert private_reads(path) == []
