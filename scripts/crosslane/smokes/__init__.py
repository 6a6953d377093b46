"""Smokes by kind (versions.toml `smoke.kind`): each is `run(ctx, arch, component, profiles) -> rows`.

The registry names the module attribute; the smoke's module is imported only when a run uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from crosslane.registry import CONTROLLED_SMOKES, Registry

if TYPE_CHECKING:
    from crosslane.archs import Arch
    from crosslane.config import Config, Profile
    from crosslane.context import Context
    from crosslane.report import Row

Smoke = Callable[["Context", "Arch", str, "Sequence[Profile]"], "list[Row]"]


def controlled(config: Config, names: Sequence[str]) -> tuple[str, ...]:
    """Those of *names* whose smoke compares with the amd64 control, so the control must build them too."""
    from crosslane.archs import CONTROL_ARCH

    return tuple(n for n in names if (spec := config.components[n].smoke) and spec.kind in CONTROLLED_SMOKES
                 and CONTROL_ARCH in config.components[n].arches)


def load(registry: Registry, kind: str) -> Smoke:
    smoke = registry.load(kind)
    assert callable(smoke), f"{registry.entries[kind]} is not callable"
    return smoke
