"""What a task runs: its option values checked and named in their one-line errors, then the domain call.

The domain functions take typed values (a Component, a folder that exists, a wheel by component) and return
rows; this module turns command-line text into those values and prints what a command shows besides rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from crosslane.archs import Arch
from crosslane.cli.arguments import parse_path
from crosslane.config import Config
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.features.probes import Probes
from crosslane.preflight import doctor
from crosslane.report import Row
from crosslane.smokes import site
from crosslane.sources import worktree


def preflight(ctx: Context, arch: Arch, components: Sequence[str], *, as_json: bool = False) -> list[Row]:
    """`invoke preflight`: every finding (or JSON with one record per check) on stdout; the rows for the exit."""
    findings = doctor.run(Probes(ctx.runner, ctx.config, ctx.compiler), arch, components)
    print(doctor.to_json(findings) if as_json else doctor.render(findings))
    return doctor.rows(findings)


def patch(ctx: Context, name: str, arch: Arch, source_dir: str | None, *, check: bool) -> list[Row]:
    """`invoke patch`: one row per patch of *name* for *arch*, on --source-dir or the build's working copy."""
    component = ctx.config.components.get(name)
    if component is None:
        raise UsageError(f"--component: unknown component '{name}' (known: {', '.join(ctx.config.components)})")
    if not ctx.config.builds(name, arch):
        raise UsageError(f"component '{name}' is not built for {arch} (versions.toml components.{name}.arches)")
    tree = None
    if source_dir is not None:
        tree = parse_path("--source-dir", source_dir).expanduser().resolve()
        if not tree.is_dir():
            raise UsageError(f"--source-dir {source_dir}: not a folder")
    return worktree.patch_series(ctx, component, arch, tree, check=check)


def wheels(config: Config, values: Sequence[str]) -> dict[str, tuple[Path, ...]]:
    """--wheel values → the component each is a build of (by distribution name). Several wheels of one component
    are told apart by their platform tags (site.given_wheel): one per arch."""
    found: dict[str, tuple[Path, ...]] = {}
    for value in values:
        wheel = Path(value).expanduser().resolve()
        if not wheel.is_file():
            raise UsageError(f"--wheel {value}: no such file")
        component = site.component_of(config, wheel)
        if component is None:
            distribution = site.wheel_identity(wheel).distribution
            raise UsageError(f"--wheel {value}: distribution {distribution} is no component of versions.toml "
                             f"(known: {', '.join(config.components)})")
        found[component] = (*found.get(component, ()), wheel)
    for component, given in found.items():
        if len(given) > 1:
            arches = [site.wheel_arch(w) for w in given]
            if None in arches or len(set(arches)) != len(arches):
                raise UsageError(f"--wheel: {len(given)} wheels of {component} need one platform each "
                                 f"({', '.join(w.name for w in given)})", fix="pass one wheel per arch")
    return found
