"""Build recipes by name (versions.toml `recipe`): how a component becomes an install folder.

A recipe is an object with `run(ctx, component, arch, probes, source, *, force) -> Built`; the pipeline has
prepared `source` (fetched, copied, patched: an explicit step) when the recipe says it `needs_source`.
`Built` carries the build step's verdict, the rows of what preparing it reported (source, patches), and the
paths the artifact gates must read (none for a recipe that only records what the sysroot ships). A new lane (a
wheel built by a project's own build script, an ExecuTorch runner) is a new module here and one entry
in registry.RECIPES, not a special case in the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from crosslane.registry import Registry

if TYPE_CHECKING:
    from crosslane.archs import Arch
    from crosslane.config import Component
    from crosslane.context import Context
    from crosslane.features.probes import Probes
    from crosslane.report import Row
    from crosslane.sources.worktree import Prepared


@dataclass(frozen=True, kw_only=True)
class Built:
    """What a recipe's run reports: the build row, what preparing said, what the gates read."""

    build: Row  # the build step's verdict
    before: tuple[Row, ...] = ()  # what preparing reported: which source served, each patch's state
    gated: tuple[Path, ...] = ()  # what the artifact gates read (ELF arch, EXT_SUFFIX, DT_NEEDED, wheel)
    builds: tuple[Path, ...] = ()  # the build trees the provenance gate reads (default: the component's build/)

    @property
    def rows(self) -> list[Row]:
        return [*self.before, self.build]


class Recipe(Protocol):
    # Whether the pipeline prepares the component's source (fetch, working copy, patches) before run().
    needs_source: bool

    def run(self, ctx: Context, component: Component, arch: Arch, probes: Probes, source: Prepared | None, *,
            force: bool) -> Built: ...


def load(registry: Registry, name: str) -> Recipe:
    recipe = registry.load(name)
    if not (hasattr(recipe, "run") and hasattr(recipe, "needs_source") and callable(recipe.run)):
        raise registry.broken(name, f"is an object of type {type(recipe).__name__}, not a recipe "
                                    "(needs_source, run(…) -> Built)")
    return recipe


def run(registry: Registry, recipe: Recipe, ctx: Context, component: Component, arch: Arch, probes: Probes,
        source: Prepared | None, *, force: bool) -> Built:
    """*recipe*'s build of *component*: what a plug-in's run raises or returns that is not a Built is the exit-3
    line naming its package."""
    with registry.contained(component.recipe, "raised when run"):
        built: object = recipe.run(ctx, component, arch, probes, source, force=force)
    if not isinstance(built, Built):
        raise registry.broken(component.recipe, f"returned an object of type {type(built).__name__}, not a "
                                                "crosslane.recipes.Built")
    return built

