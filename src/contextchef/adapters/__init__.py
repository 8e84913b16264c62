"""Adaptation axis: provider wire formats, in and out.

`adapter_registry` holds the built-in targets and is read-only: every chef without a registry
of its own reads it, so nothing one chef (or library) registers can change another's targets.
Give a chef your own targets with `ContextChef(adapters=adapter_registry.with_adapters({"mine":
adapter}))`; then `compile(target="mine")` uses yours, on that chef only. Each adapter
declares what its wire format supports in its `profile` (an `AdapterProfile`): the chef asks the
profile, never the class or the target name, so an adapter wrapping a built-in one (Anthropic
through Bedrock, a proxy) keeps what the built-in gets by forwarding its profile.
"""

from contextchef.adapters.anthropic import AnthropicAdapter
from contextchef.adapters.base import (
    AdapterInput,
    AdapterProfile,
    AdapterRegistry,
    ConversionCache,
    ReadOnlyAdapterRegistry,
    TargetAdapter,
    ToolDefinition,
    normalize_tool,
    normalize_tools,
    sorted_keys,
)
from contextchef.adapters.from_anthropic import from_anthropic
from contextchef.adapters.from_gemini import from_gemini
from contextchef.adapters.from_openai import from_openai
from contextchef.adapters.from_openai_responses import from_openai_responses
from contextchef.adapters.gemini import GeminiAdapter
from contextchef.adapters.importing import ImportedHistory
from contextchef.adapters.openai_chat import OpenAIChatAdapter
from contextchef.adapters.openai_responses import OpenAIResponsesAdapter

__all__ = [
    "AdapterInput",
    "AdapterProfile",
    "AdapterRegistry",
    "AnthropicAdapter",
    "ConversionCache",
    "GeminiAdapter",
    "ImportedHistory",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "ReadOnlyAdapterRegistry",
    "TargetAdapter",
    "ToolDefinition",
    "adapter_registry",
    "builtin_registry",
    "from_anthropic",
    "from_gemini",
    "from_openai",
    "from_openai_responses",
    "get_adapter",
    "normalize_tool",
    "normalize_tools",
    "sorted_keys",
]


def _builtin_adapters() -> dict[str, TargetAdapter]:
    return {
        "openai": OpenAIChatAdapter(),
        "openai-responses": OpenAIResponsesAdapter(),
        "anthropic": AnthropicAdapter(),
        "gemini": GeminiAdapter(),
    }


def builtin_registry() -> AdapterRegistry:
    """A fresh registry of your own holding the built-in targets (new adapter objects)."""
    return AdapterRegistry(_builtin_adapters())


adapter_registry: ReadOnlyAdapterRegistry = ReadOnlyAdapterRegistry(_builtin_adapters())
"""The built-in targets, read by every chef without `adapters=`; read-only (see the module)."""


def get_adapter(name: str) -> TargetAdapter:
    """The adapter registered in `adapter_registry` under `name`."""
    return adapter_registry.get(name)
