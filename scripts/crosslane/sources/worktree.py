"""The tree a build compiles: the fetched source, or a per-arch patched copy of it.

The fetched tree (cache) and a --source checkout are never modified. When patches apply to the arch,
the build works in <build>/<arch>/<component>/src, a copy refreshed whenever the source pin or the
series changes, and the patch engine brings it to "every patch APPLIED" (a no-op the second time).
An arch that no patch is for builds the pristine tree itself: byte-identical to upstream.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import Arch
from crosslane.config import Component
from crosslane.context import Context
from crosslane.files import atomic
from crosslane.report import Check, Row, Verdict
from crosslane.sources import patches, pinned

MARKER = "src.crosslane.json"


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """A component's source tree ready to build: its folder, identity, rows and patch inputs."""

    path: Path
    source_id: str
    rows: tuple[Row, ...]
    patch_inputs: tuple[dict[str, str], ...]


def fetch(ctx: Context, component: Component, arch: Arch) -> pinned.Fetched:
    return pinned.fetch(ctx.runner, component, ctx.config.sysroot, ctx.sources.get(component.name), arch=arch.value)


def source_row(component: Component, arch: Arch, fetched: pinned.Fetched) -> Row:
    return Row(component=component.name, arch=arch, check=Check.SOURCE, verdict=Verdict.PASS, reason=fetched.served_by)


def copy_path(folder: Path, component: Component) -> Path:
    return folder / "src" / component.source_dirname if component.source_dirname else folder / "src"


def working_copy(ctx: Context, component: Component, arch: Arch, fetched: pinned.Fetched) -> Path:
    """The per-arch copy of *fetched* that patches are applied to, (re)made when its inputs change."""
    folder = ctx.component_dir(arch, component.name)
    work = copy_path(folder, component)
    wanted = copy_inputs(component, fetched)
    marker = folder / MARKER
    try:
        current = json.loads(marker.read_text())
    except (OSError, ValueError):
        current = None
    # Only a copy whose whole series was applied is reused; one interrupted mid-series is made anew.
    if current == {**wanted, "patched": True} and work.is_dir():
        return work
    if ctx.runner.dry_run:
        ctx.log.info(f"    would copy {fetched.path} to {work}")
        return work
    marker.unlink(missing_ok=True)
    # The whole src/ is replaced, so a copy made under another source_dirname does not stay beside the new one.
    with atomic.replace_dir(folder / "src") as staging:
        shutil.copytree(fetched.path, staging / work.relative_to(folder / "src"), symlinks=True,
                        ignore=shutil.ignore_patterns(".git"), dirs_exist_ok=True)
    atomic.write_text(marker, json.dumps({**wanted, "patched": False}, indent=1) + "\n")
    return work


def copy_inputs(component: Component, fetched: pinned.Fetched) -> dict[str, object]:
    return {"source": fetched.identity, "patches": [[str(p.path.name), p.sha256] for p in component.patches]}


def mark_patched(ctx: Context, component: Component, arch: Arch, fetched: pinned.Fetched) -> None:
    marker = ctx.component_dir(arch, component.name) / MARKER
    text = json.dumps({**copy_inputs(component, fetched), "patched": True}, indent=1) + "\n"
    with contextlib.suppress(OSError):
        if marker.read_text() == text:  # a no-op writes nothing
            return
    atomic.write_text(marker, text)


def prepare(ctx: Context, component: Component, arch: Arch) -> Prepared:
    """Fetch, copy and patch as needed; what build.plan compiles and records in its stamp."""
    fetched = fetch(ctx, component, arch)
    patches.verify_pins(ctx.config.root, component)
    inputs = tuple(patches.stamp_inputs(ctx.config.root, component, arch))
    in_repo = component.sources[0].kind == "tree" and not fetched.local
    rows = [] if in_repo else [source_row(component, arch, fetched)]
    if not component.writable_source and not any(arch in spec.arches for spec in component.patches):
        steps = patches.plan(ctx.runner, ctx.config.root, component, arch, fetched.path) if component.patches else []
        return Prepared(path=fetched.path, source_id=fetched.identity,
                        rows=tuple(rows + patches.rows(component, arch, steps)), patch_inputs=inputs)
    work = working_copy(ctx, component, arch, fetched)
    if not work.is_dir():  # dry run, nothing copied yet
        return Prepared(path=work, source_id=fetched.identity, rows=tuple(rows), patch_inputs=inputs)
    steps = patches.apply(ctx.runner, ctx.config.root, component, arch, work)
    if not ctx.runner.dry_run:
        mark_patched(ctx, component, arch, fetched)
    return Prepared(path=work, source_id=fetched.identity, rows=tuple(rows + patches.rows(component, arch, steps)),
                    patch_inputs=inputs)


def patch_series(ctx: Context, component: Component, arch: Arch, tree: Path | None, *, check: bool) -> list[Row]:
    """One row per patch of *component* for *arch*, on *tree* or (None) the build's working copy."""
    name = component.name
    if not component.patches:
        return [Row(component=name, arch=arch, check=Check.PATCH, verdict=Verdict.SKIP,
                    reason="no patches in versions.toml")]
    rows: list[Row] = []
    if tree is None:
        fetched = fetch(ctx, component, arch)
        rows = [source_row(component, arch, fetched)]
        work = copy_path(ctx.component_dir(arch, name), component)
        if check or not any(arch in spec.arches for spec in component.patches):
            tree = work if work.is_dir() else fetched.path
        else:
            tree = working_copy(ctx, component, arch, fetched)
    steps = patches.apply(ctx.runner, ctx.config.root, component, arch, tree, check=check)
    return rows + patches.rows(component, arch, steps, check=check)
