"""What the model reads about the tools the pruner shapes: namespace tools, the `load_toolkit`
tool and its directory of toolkits, and the tool results for a toolkit load, a namespace call it
got wrong and a call the host blocked.

Everything user-supplied that lands in markup (toolkit names, descriptions, tool names) is
escaped, so a description can never close the directory block or forge an attribute. Nothing
here depends on the clock or on randomness: the same toolkits render to the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from contextchef.prompts.common import quote_for_model

__all__ = [
    "LOAD_TOOLKIT_DESCRIPTION",
    "LOAD_TOOLKIT_PARAMETER",
    "NAMESPACE_ACTION_PARAMETER",
    "NAMESPACE_ARGS_PARAMETER",
    "namespace_action_unknown",
    "namespace_args_not_object",
    "namespace_description",
    "namespace_not_json",
    "tool_blocked",
    "tool_name_missing",
    "toolkit_already_loaded",
    "toolkit_directory",
    "toolkit_loaded",
    "toolkit_unknown",
]

# -- namespaces ------------------------------------------------------------------------------

NAMESPACE_ACTION_PARAMETER = (
    "The action to run: one of the actions listed in this tool's description."
)
NAMESPACE_ARGS_PARAMETER = (
    "The arguments of the chosen action, as a JSON object: they follow the branch of this "
    "schema whose title is the action's name."
)


def namespace_description(description: str, actions: Sequence[tuple[str, str]]) -> str:
    """The description of a namespace tool: the group's own description, then one line per
    action (its name and the first line of the tool's own description)."""
    lines = [
        f"- {name}: {text.strip().splitlines()[0]}" if text.strip() else f"- {name}"
        for name, text in actions
    ]
    head = f"{description.strip()}\n\n" if description.strip() else ""
    return (
        f"{head}Set `action` to one of the actions below and put that action's arguments in "
        "`args`.\nActions:\n" + "\n".join(lines)
    )


def namespace_not_json(namespace: str) -> str:
    return (
        f"Error: the arguments of the {namespace} tool are not valid JSON. Send one JSON object "
        'with "action" and "args".'
    )


def namespace_action_unknown(namespace: str, action: object, actions: Sequence[str]) -> str:
    shown = quote_for_model(action) if isinstance(action, str) else "missing"
    return (
        f"Error: the action of the {namespace} tool is {shown}; it must be one of: "
        f'{", ".join(actions)}. Call again with one of them as "action".'
    )


def namespace_args_not_object(namespace: str, action: str) -> str:
    return (
        f'Error: "args" of the {namespace} tool must be a JSON object holding the arguments of '
        f"the {action} action. Call again with them as an object."
    )


# -- lazy toolkits ---------------------------------------------------------------------------

LOAD_TOOLKIT_DESCRIPTION = (
    "Load one of the toolkits listed in <available_toolkits>. Its tools are added to your tool "
    "list from your next step on."
)
LOAD_TOOLKIT_PARAMETER = "The name of the toolkit to load."
_LOADED = ' loaded="true"'


def toolkit_directory(entries: Sequence[tuple[str, str, Sequence[str], bool]]) -> str:
    """The directory block: one `<toolkit>` line per `(name, description, tools, loaded)`."""
    lines = [
        f'<toolkit name="{escape(name)}" tools="{escape(", ".join(tools))}"'
        f"{_LOADED if loaded else ''}>{escape(description.strip())}</toolkit>"
        for name, description, tools, loaded in entries
    ]
    return (
        "<available_toolkits>\n" + "\n".join(lines) + "\n</available_toolkits>\n"
        "Call load_toolkit with a toolkit's name to add its tools to your tool list; the tools "
        'of a toolkit marked loaded="true" are in it already.'
    )


def toolkit_loaded(name: str, tools: Sequence[str]) -> str:
    return f"Loaded the {name} toolkit: {', '.join(tools)} can be called from your next step on."


def toolkit_already_loaded(name: str) -> str:
    return f"The {name} toolkit is already loaded; its tools are in your tool list."


def toolkit_unknown(name: object, available: Sequence[str]) -> str:
    listing = ", ".join(available) if available else "(none)"
    if not isinstance(name, str) or not name.strip():
        problem = 'the "toolkit" argument is missing or empty'
    else:
        problem = f"{quote_for_model(name)} is not a toolkit"
    return f'Error: {problem}. Toolkits: {listing}. Call again with one of them as "toolkit".'


# -- the runtime blocklist ---------------------------------------------------------------------


def tool_blocked(name: str) -> str:
    """The result the host sends back for a call of a tool it blocked: the call did not run."""
    return (
        f"Error: the {name} tool is blocked right now, so this call was not run. Continue "
        "without it, or ask the user how to proceed."
    )


def tool_name_missing() -> str:
    """The result the host sends back for a call that names no tool: nothing was run."""
    return (
        "Error: this tool call has no tool name, so nothing was run. Call again with the name "
        "of one of your tools."
    )
