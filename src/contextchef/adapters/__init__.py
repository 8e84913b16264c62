"""Adaptation axis: provider wire formats, in and out.

`adapter_registry` holds the built-in targets; register your own adapter under a new name and
`compile(target=name)` uses it. A chef may also be given a registry of its own.
"""

from contextchef.adapters.anthropic import AnthropicAdapter
from contextchef.adapters.base import (
    AdapterInput,
    AdapterRegistry,
    ConversionCache,
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
    "AdapterRegistry",
    "AnthropicAdapter",
    "ConversionCache",
    "GeminiAdapter",
    "ImportedHistory",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
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


def builtin_registry() -> AdapterRegistry:
    """A fresh registry holding the built-in targets."""
    registry = AdapterRegistry()
    registry.register("openai", OpenAIChatAdapter())
    registry.register("openai-responses", OpenAIResponsesAdapter())
    registry.register("anthropic", AnthropicAdapter())
    registry.register("gemini", GeminiAdapter())
    return registry


adapter_registry = builtin_registry()


def get_adapter(name: str) -> TargetAdapter:
    """The adapter registered in `adapter_registry` under `name`."""
    return adapter_registry.get(name)
