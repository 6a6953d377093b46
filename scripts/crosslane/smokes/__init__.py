"""Smokes by kind (versions.toml `smoke.kind`): each is `run(ctx, arch, component, profiles) -> rows`.

The registry names the module attribute; the smoke's module is imported only when a run uses it. A run that gives
no row gave no verdict: that is a FAIL, never a pass by silence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from crosslane.registry import Registry
from crosslane.report import Check, Row, Verdict

if TYPE_CHECKING:
    from crosslane.archs import Arch
    from crosslane.config import Profile
    from crosslane.context import Context

Smoke = Callable[["Context", "Arch", str, "Sequence[Profile]"], "list[Row]"]


def load(registry: Registry, kind: str) -> Smoke:
    smoke = registry.load(kind)
    if not callable(smoke):
        raise registry.broken(kind, f"is an object of type {type(smoke).__name__}, not a smoke's "
                                    "run(ctx, arch, component, profiles)")
    return smoke


def run(registry: Registry, kind: str, ctx: Context, arch: Arch, component: str,
        profiles: Sequence[Profile]) -> list[Row]:
    """The rows of *component*'s smoke of *kind*: what a plug-in's run raises or returns that is not rows is the
    exit-3 line naming its package; no row at all is one FAIL row."""
    smoke = load(registry, kind)
    with registry.contained(kind, "raised when run"):
        rows: object = smoke(ctx, arch, component, profiles)
    if not isinstance(rows, (list, tuple)) or not all(isinstance(row, Row) for row in rows):
        raise registry.broken(kind, f"returned an object of type {type(rows).__name__}, not a list of "
                                    "crosslane.report.Row")
    if not rows:
        return [Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                    reason=f"smoke kind '{kind}' produced no verdict (its run returned no row)")]
    return list(rows)
