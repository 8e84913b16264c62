"""Adaptation axis: provider wire formats, in and out.

`adapter_registry` holds the built-in targets; register your own adapter under a new name and
`compile(target=name)` uses it. A chef may also be given a registry of its own. Each adapter
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
    "BUILTIN_ADAPTERS",
    "AdapterInput",
    "AdapterProfile",
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
    "is_builtin",
    "normalize_tool",
    "normalize_tools",
    "sorted_keys",
]


BUILTIN_ADAPTERS: tuple[type, ...] = (
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    AnthropicAdapter,
    GeminiAdapter,
)
"""The adapter classes contextchef ships (their conversions run no user code)."""


def is_builtin(adapter: object) -> bool:
    """Whether `adapter` is one of contextchef's own, whose conversion runs no user code (so the
    garbage collector may stay paused across it, see `contextchef._collector`). This is about
    whose code runs, not about what the wire format supports: that is the adapter's `profile`."""
    return isinstance(adapter, BUILTIN_ADAPTERS)


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
