"""The options renamed from the TypeScript reference's names keep working, with a warning.

`janitor=` is `budget=` and `vfs=` is `offload=` (and `JanitorConfig` is `BudgetConfig`): code
written against the old names builds the same chef, and is told (once per call, at its own line)
what to write instead.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

import contextchef
from contextchef import AsyncContextChef, BudgetConfig, ContextChef

HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "read the log"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "line of the log\n" * 400},
    {"role": "user", "content": "what failed?"},
]


def payload_bytes(chef: ContextChef) -> str:
    chef.set_system_prompt([{"role": "system", "content": "You read logs."}])
    chef.set_history(HISTORY)
    return json.dumps(dict(chef.compile(target="anthropic")), sort_keys=True)


def test_old_option_names_build_the_same_chef_and_warn_at_the_callers_line() -> None:
    options = {"context_window": 50_000, "trigger_ratio": 0.8}
    with pytest.warns(DeprecationWarning) as caught:
        old = ContextChef(janitor=options, vfs={"threshold": 1000})
    assert [str(w.message).split(" is renamed ")[0] for w in caught] == [
        "ContextChef(janitor=...)",
        "ContextChef(vfs=...)",
    ]
    assert "budget=" in str(caught[0].message) and "offload=" in str(caught[1].message)
    assert {w.filename for w in caught} == {__file__}
    new = ContextChef(budget=options, offload={"threshold": 1000})
    assert payload_bytes(old) == payload_bytes(new)
    assert "context://vfs/" in payload_bytes(new)  # the old vfs= threshold took effect


def test_the_async_chef_takes_the_old_names_too() -> None:
    with pytest.warns(DeprecationWarning, match=r"AsyncContextChef\(vfs=\.\.\.\)"):
        AsyncContextChef(vfs={"threshold": 10})


def test_old_and_new_name_together_or_an_unknown_option_are_type_errors() -> None:
    with pytest.raises(TypeError, match="both janitor= and budget="):
        ContextChef(janitor={"context_window": 10}, budget={"context_window": 10})
    with pytest.raises(TypeError, match="unexpected keyword argument 'janitr'"):
        ContextChef(janitr={"context_window": 10})


@pytest.mark.parametrize("module", ["contextchef", "contextchef.selection"])
def test_the_old_config_class_name_is_the_new_class(module: str) -> None:
    home = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{module}\.JanitorConfig is renamed"):
        old = home.JanitorConfig
    assert old is BudgetConfig
    assert "JanitorConfig" not in home.__all__
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        home.NoSuchName  # noqa: B018


def test_help_names_the_new_options() -> None:
    doc = ContextChef.__init__.__doc__ or ""
    assert "budget: the window budget" in doc and "offload: tool-result offloading" in doc
    assert contextchef.BudgetConfig.of({"context_window": 10}).context_window == 10
