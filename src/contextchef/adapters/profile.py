"""`AdapterProfile`: what an adapter's wire format supports, declared once, by the adapter.

The compile pipeline never asks which class an adapter is, nor under which target name it was
registered: it asks the adapter's `profile`. An adapter that wraps another (Anthropic through
Bedrock or Vertex, a logging proxy) forwards the inner adapter's profile and keeps everything
the inner one gets, and a custom adapter gets automatic cache breakpoints, server compaction or
the provider's cache options by declaring them. Each field names the part of the pipeline that
reads it; a field nothing reads does not belong here.

An adapter without a `profile` attribute (one written before profiles existed) is taken to
support none of these: `profile_of` gives it `PLAIN_PROFILE`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from contextchef.errors import ConfigError

__all__ = ["PLAIN_PROFILE", "AdapterProfile", "profile_of"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterProfile:
    """What an adapter's wire format supports; every field defaults to "not supported".

    - `cache_breakpoints`: how many cache breakpoints one request may carry (0: the provider
      takes none, it caches prefixes implicitly or not at all). Above 0, the chef's
      `cache="auto"` marks the end of the stable prefix (`AdapterInput.auto_marks`, positions
      in the assembled messages, see `placement.breakpoints`) for the adapter to turn into its
      own markers, the host's `_cache_breakpoint` marks first, within this many. Read by the
      payload builder.
    - `allowed_tools`: the adapter honours `AdapterInput.allowed_tools` (the names the model
      may call among `tools`). With `pruner={"use_allowed_tools": True}` the payload builder
      then keeps every tool definition (a stable, cacheable prefix) and restricts the calls by
      name, instead of dropping the definitions the pruner leaves out.
    - `server_compaction`: the adapter renders `AdapterInput.server_compaction` (the provider
      compacts the context itself). The `server` strategy asks for it instead of running its
      fallback; read by the overflow runner through the strategy's `server_compaction` hook.
    - `prompt_cache_key`: the payload takes OpenAI's top-level `prompt_cache_key` keyword; the
      chef's `prompt_cache_key=` option is added to it (`cache.planning.with_provider_options`).
    - `cached_content`: the payload is google-genai's `{"config", "contents"}` and takes
      `config.cached_content`; the chef's `cached_content=` option goes there, and the system
      instruction and tools, which the context cache holds, leave the config
      (`cache.planning.with_provider_options`).
    """

    cache_breakpoints: int = 0
    allowed_tools: bool = False
    server_compaction: bool = False
    prompt_cache_key: bool = False
    cached_content: bool = False

    def __post_init__(self) -> None:
        breakpoints = self.cache_breakpoints
        if not isinstance(breakpoints, int) or isinstance(breakpoints, bool) or breakpoints < 0:
            raise ConfigError(
                f"AdapterProfile cache_breakpoints must be an int >= 0, got {breakpoints!r}"
            )
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name != "cache_breakpoints" and not isinstance(value, bool):
                raise ConfigError(f"AdapterProfile {field.name} must be True or False")


PLAIN_PROFILE = AdapterProfile()
"""The profile of an adapter that declares none: its wire format and nothing more."""


def profile_of(adapter: object) -> AdapterProfile:
    """`adapter.profile`, or `PLAIN_PROFILE` for an adapter that declares none.

    Raises `ConfigError` when the attribute is there but is not an `AdapterProfile` (a dict, a
    misspelt class), which would otherwise silently turn every capability off.
    """
    profile = getattr(adapter, "profile", None)
    if profile is None:
        return PLAIN_PROFILE
    if not isinstance(profile, AdapterProfile):
        raise ConfigError(
            f"an adapter's profile must be an AdapterProfile, got {type(profile).__name__}"
        )
    return profile
