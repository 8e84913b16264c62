"""Every way of misconfiguring the store is a `ConfigError`, raised at construction."""

from __future__ import annotations

import pytest

from contextchef.errors import ConfigError
from contextchef.store import FileSystemBackend, InMemoryBackend, Store


def test_bad_configuration_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        Store(InMemoryBackend(), clock="now")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Store(InMemoryBackend(), eviction=[("vfs", {})])  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Store.of(Store(InMemoryBackend()), clock=lambda: 1.0)
    with pytest.raises(ConfigError):
        FileSystemBackend(42)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Store(InMemoryBackend()).namespace("notes").restore([("a", "b")])  # type: ignore[arg-type]
