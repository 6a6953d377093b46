"""The papers step of a build (shipping/): what the recipe knows about its build, handed to the shipping layer.

A cmake build's install folder gets LICENSES/, its SBOM and the provenance of its ELF files; a cmake-wheel build's
wheel gets its licences and SBOM inside, and its provenance beside it in dist/. Both happen before the stamp is
written: a build whose papers cannot be made (a bundled library no package installed, a part without a licence
text) fails, and leaves no stamp.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from crosslane.archs import Arch
from crosslane.config import Component, GitSource
from crosslane.context import Context
from crosslane.errors import StepFailed
from crosslane.files import stamps
from crosslane.guest import sysroot as sysroot_mod
from crosslane.host import toolroot
from crosslane.process.runner import Runner
from crosslane.recipes import cmake_cache
from crosslane.shipping import folder, inventory, provenance
from crosslane.shipping import wheel as wheel_papers
from crosslane.shipping.inventory import Inventory
from crosslane.sources import pinned


def builder(runner: Runner, repository: Path) -> provenance.Builder:
    """crosslane's commit from its checkout ("+dirty" with uncommitted changes; "unknown" outside git)."""
    head = runner.run(["git", "-C", repository, "rev-parse", "HEAD"], probe=True, quiet=True, check=False, timeout=60)
    if not head.ok:
        return provenance.Builder("unknown")
    status = runner.run(["git", "-C", repository, "status", "--porcelain", "--untracked-files=no"], probe=True,
                        quiet=True, check=False, timeout=60)
    return provenance.Builder(head.output.strip() + ("+dirty" if status.output.strip() else ""))


def base_inventory(ctx: Context, component: Component, arch: Arch, source: Path, fetchcontent: Mapping[str, str],
                   *, kind: str, version: str) -> Inventory:
    first = component.sources[0] if component.sources else None
    staged = pinned.submodule_pins(component.source_of or component.name, first) \
        if isinstance(first, GitSource) and first.submodules else {}
    sources = inventory.component_sources(component, arch, source, {k: Path(v) for k, v in fetchcontent.items()},
                                          ctx.config.root, staged)
    crates: tuple[inventory.Crate, ...] = ()
    if component.toolroot and component.crates:
        root = toolroot.root_path(ctx.config.toolroots[component.toolroot])
        crates = inventory.crates(component, root / toolroot.CARGO_REGISTRY.lstrip("/"))
    return Inventory(name=component.distribution if kind == "wheel" and component.distribution else component.name,
                     version=version, arch=arch, suite=ctx.config.sysroot.suite, sources=sources, crates=crates,
                     properties={"kind": kind, "arch": arch.value})


def manifests(ctx: Context, component: Component, arch: Arch) -> dict[str, Path]:
    """The manifests of what the build ran against: the arch's sysroot and the tool roots it entered."""
    found = {"sysroot": ctx.sysroot(arch).path / sysroot_mod.MANIFEST}
    names = [component.toolroot] if component.toolroot else []
    emulator = ctx.config.arches[arch].emulator
    if emulator:
        names.append(emulator)
    for name in names:
        found[f"toolroot:{name}"] = toolroot.root_path(ctx.config.toolroots[name]) / toolroot.MANIFEST
    return {k: v for k, v in found.items() if v.is_file()}


def statement_for(ctx: Context, component: Component, arch: Arch, subjects: Sequence[tuple[str, str]],
                  inv: Inventory, request: Mapping[str, str]) -> dict[str, object]:
    return provenance.statement(
        subjects, inv, builder=builder(ctx.runner, ctx.config.root),
        config_digest=hashlib.sha256(ctx.config.path.read_bytes()).hexdigest(),
        request={"component": component.name, "arch": arch.value, **request}, manifests=manifests(ctx, component, arch),
        toolchain=ctx.compiler(component.name, arch).identity)


def for_folder(ctx: Context, component: Component, arch: Arch, source: Path, fetchcontent: Mapping[str, str],
               install: Path, epoch: int) -> None:
    """The papers of a cmake build's install folder."""
    version = next((s.tag for s in component.sources if isinstance(s, GitSource) and s.tag), None) or "0"
    inv = base_inventory(ctx, component, arch, source, fetchcontent, kind="folder", version=version)
    folder.finish(install, inv, epoch=epoch,
                  statement=lambda found, files: statement_for(ctx, component, arch, files, found, {}))


def dependency_sources(ctx: Context, name: str, arch: Arch) -> tuple[inventory.Source, ...]:
    """The pinned sources of a dependency crosslane built, as its build tree was configured from them."""
    dep = ctx.config.components[name]
    tree = cmake_cache.source_tree(ctx.component_dir(arch, name) / "build", dep.source_subdir)
    if tree is None:
        raise StepFailed(f"{name} ({arch}): its build tree names no source folder, so the papers of a library it "
                         "built cannot name its sources", fix=f"invoke build --arch {arch} --component {name} --force")
    first = dep.sources[0] if dep.sources else None
    staged = pinned.submodule_pins(dep.source_of or dep.name, first) \
        if isinstance(first, GitSource) and first.submodules else {}
    return inventory.component_sources(dep, arch, tree, {}, ctx.config.root, staged)


def for_wheel(ctx: Context, component: Component, arch: Arch, wheel: Path, *, source: Path,
              fetchcontent: Mapping[str, str], search: Sequence[Path], bundled: Mapping[str, Path], epoch: int,
              identifier: str, built_with: Sequence[str] = ()) -> Path:
    """The wheel's papers inside it, then its provenance beside it; the provenance file's path. *built_with*: the
    dependencies crosslane built whose libraries the wheel bundles (their sources are compiled in too)."""
    version = wheel.name.split("-")[1]
    inv = base_inventory(ctx, component, arch, source, fetchcontent, kind="wheel", version=version)
    extra = tuple(s for name in built_with for s in dependency_sources(ctx, name, arch))
    inv = dataclasses.replace(inv, sources=(*inv.sources, *extra))
    inv = wheel_papers.finish(wheel, inv, sysroot=ctx.sysroot(arch), search=search, bundled=bundled, epoch=epoch)
    subjects = [(wheel.name, stamps.file_sha256(wheel))]
    return provenance.write(wheel, statement_for(ctx, component, arch, subjects, inv, {"build": identifier}))
