"""Smokes by kind (versions.toml `smoke.kind`): each is `run(ctx, arch, component, profiles) -> rows`.

The registry names the module attribute; the smoke's module is imported only when a run uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from crosslane.registry import Registry

if TYPE_CHECKING:
    from crosslane.archs import Arch
    from crosslane.config import Profile
    from crosslane.context import Context
    from crosslane.report import Row

Smoke = Callable[["Context", "Arch", str, "Sequence[Profile]"], "list[Row]"]


def load(registry: Registry, kind: str) -> Smoke:
    smoke = registry.load(kind)
    assert callable(smoke), f"{registry.entries[kind]} is not callable"
    return smoke
