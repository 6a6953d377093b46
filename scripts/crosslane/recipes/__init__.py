"""Build recipes by name (versions.toml `recipe`): how a component becomes an install folder.

A recipe is a kind of the one contract (contract.py): `run(request) -> Outcome[Built]`; the pipeline has prepared
`request.source` (fetched, copied, patched: an explicit step) when the recipe's entry says it `needs_source`. The
outcome's rows are the build step's verdict after what preparing reported (source, patches); its `Built` names that
verdict and the paths the artifact gates must read (none for a recipe that only records what the sysroot ships). A
new lane (a wheel built by a project's own build script, an ExecuTorch runner) is a new module here and one entry in
registry.RECIPES, not a special case in the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crosslane.contract import Outcome

if TYPE_CHECKING:
    from crosslane.report import Row


@dataclass(frozen=True, kw_only=True)
class Built:
    """A recipe's payload: the build step's verdict (the last of the outcome's rows) and what the gates read."""

    build: Row  # the build step's verdict
    gated: tuple[Path, ...] = ()  # what the artifact gates read (ELF arch, EXT_SUFFIX, DT_NEEDED, wheel)
    builds: tuple[Path, ...] = ()  # the build trees the provenance gate reads (default: the component's build/)


def built(build: Row, *, before: Sequence[Row] = (), gated: Sequence[Path] = (),
          builds: Sequence[Path] = ()) -> Outcome[Built]:
    """A recipe's outcome: what preparing reported (*before*: which source served, each patch's state), then *build*."""
    return Outcome(rows=(*before, build), payload=Built(build=build, gated=tuple(gated), builds=tuple(builds)))
