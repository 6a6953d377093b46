"""The cmake recipe: cross configure, build and install with the generated toolchain file (build.py)."""

from __future__ import annotations

from .. import build
from ..archs import Arch
from ..config import Component
from ..context import Context
from ..probes import Probes
from ..report import Row


def run(ctx: Context, component: Component, arch: Arch, probes: Probes, force: bool) -> list[Row]:
    plan = build.plan(ctx, component, arch, probes)
    row = build.execute(ctx, plan, force=force)
    return [*plan.rows, row]
