"""Build recipes by name (versions.toml `recipe`): how a component becomes an install folder.

A recipe returns its report rows, the build row last. Recipes that compile something have their
install folder read by the artifact gates afterwards; a recipe that only records what the sysroot
already ships has nothing to gate. A new lane (a wheel built by a project's own build script, an
ExecuTorch runner) is a new recipe here, not a special case in the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from crosslane.archs import Arch
from crosslane.config import Component
from crosslane.context import Context
from crosslane.host.probes import Probes
from crosslane.recipes import cmake, provided
from crosslane.report import Row


@dataclass(frozen=True)
class Recipe:
    run: Callable[[Context, Component, Arch, Probes, bool], list[Row]]
    # Whether the install folder holds built artifacts for the gates (ELF arch, EXT_SUFFIX, DT_NEEDED).
    gated: bool


RECIPES: Mapping[str, Recipe] = MappingProxyType({
    "cmake": Recipe(cmake.run, gated=True),
    "provided": Recipe(provided.run, gated=False),
})
