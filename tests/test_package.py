"""The public surface: a sorted, complete `__all__`, and the typed marker."""

from __future__ import annotations

from pathlib import Path

import contextchef


def test_all_is_sorted_and_importable() -> None:
    assert list(contextchef.__all__) == sorted(contextchef.__all__)
    for name in contextchef.__all__:
        assert hasattr(contextchef, name), name


def test_package_is_typed() -> None:
    assert (Path(contextchef.__file__).parent / "py.typed").is_file()
