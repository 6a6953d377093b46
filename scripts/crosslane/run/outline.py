"""The dry run's plan: each build of a run as it would happen (component, arch, toolchain, source, patches, CMake
arguments, whether it would build), and what the machine lacks before any build could start, as 'would install'.

Pure reading: versions.toml's model, the stamps already written and the cache's folders. It writes, fetches and
installs nothing, and needs neither the network nor a sysroot, so `--dry-run` prints it first on any machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import assert_never

from crosslane.archs import Arch
from crosslane.config import ArchiveSource, Component, DebianSource, GitSource, SysrootPackage, TreeSource
from crosslane.context import Context
from crosslane.files import stamps
from crosslane.guest import sysroot
from crosslane.host import buildtools, hostsetup, toolroot
from crosslane.policy.lanes import LaneState
from crosslane.run.plan import RunPlan
from crosslane.sources import patches


@dataclass(frozen=True, kw_only=True)
class BuildOutline:
    """One build of the plan, as far as the configuration and the stamps already written say."""

    component: str
    arch: Arch
    recipe: str
    compiles: bool  # the recipe's declaration (registry.Entry.compiles)
    toolchain: str
    source: str
    patches: tuple[str, ...]
    cmake_args: tuple[str, ...]  # as versions.toml writes them, {placeholders} unexpanded (the sysroot fills them)
    fetchcontent: tuple[str, ...]
    status: str

    def describe(self) -> list[str]:
        args = f"{len(self.cmake_args)} from versions.toml" + (f" ({' '.join(self.cmake_args[:3])}"
                                                               + (" …)" if len(self.cmake_args) > 3 else ")")
                                                               if self.cmake_args else "")
        lines = [f"build {self.component} ({self.arch}): {self.status}",
                 f"    recipe {self.recipe}, toolchain {self.toolchain}",
                 f"    source: {self.source}",
                 f"    patches: {', '.join(self.patches) or 'none'}"]
        if self.compiles:
            lines.append(f"    cmake args: {args}; FetchContent: {', '.join(self.fetchcontent) or 'none'}")
        return lines


def source_text(ctx: Context, component: Component) -> str:
    local = ctx.sources.get(component.name)
    if local is not None:
        return f"local checkout {local} (--source, unverified)"
    first = component.sources[0]
    match first:
        case TreeSource():
            return f"this repository's {first.path}"
        case GitSource():
            return f"git {first.url} at {first.commit[:12]}" + (f" ({first.tag})" if first.tag else "")
        case ArchiveSource():
            return f"archive {first.url} (sha256 {first.sha256[:12]}…)"
        case DebianSource():
            return f"Debian source package {first.package} {first.version}"
        case SysrootPackage():
            return f"the sysroot's Debian package {first.package}"
        case _:
            assert_never(first)


def build_status(ctx: Context, component: Component, arch: Arch, state: LaneState) -> str:
    """What the build step would do, as the stamp already written says: the step itself compares every input."""
    if not state.enabled:
        return f"lane off by {state.setting} (a placeholder, nothing built)"
    if not ctx.config.compiles(component.name):
        return "would record the sysroot's package"
    folder = ctx.component_dir(arch, component.name)
    stamp = stamps.read(folder) or {}
    recorded, inputs = stamp.get("key"), stamp.get("inputs")
    if not isinstance(recorded, str) or not isinstance(inputs, Mapping):
        return "would build (never built)"
    if not stamps.is_current(folder, recorded, outputs=folder / "install"):
        return "would build (its install folder changed since the last build)"
    changed = changed_inputs(ctx, component, arch, inputs)
    if changed:
        return f"would build ({', '.join(changed)} changed since the last build)"
    return "up to date unless its source, compiler or sysroot changed (the build step compares every input)"


def changed_inputs(ctx: Context, component: Component, arch: Arch, inputs: Mapping[str, object]) -> list[str]:
    """The stamp's inputs the configuration alone decides that are not what it says now."""
    now: dict[str, object] = {
        "cmake": ctx.config.tools.cmake, "ninja": ctx.config.tools.ninja,
        "patches": patches.stamp_inputs(ctx.config.root, component, arch),
        "depends": {dep: (stamps.read(ctx.component_dir(arch, dep)) or {}).get("key")
                    for dep in component.dependencies(arch)}}
    return [name for name, value in now.items() if inputs.get(name, [] if name == "patches" else None) != value]


def outline(ctx: Context, job: RunPlan, arch: Arch, names: Sequence[str]) -> list[BuildOutline]:
    found = []
    for name in names:
        component = ctx.config.components[name]
        found.append(BuildOutline(
            component=name, arch=arch, recipe=component.recipe, compiles=ctx.config.compiles(name),
            toolchain=ctx.config.toolchain_for(name, arch).name,
            source=source_text(ctx, component),
            patches=tuple(spec.path.name for spec in component.patches if arch in spec.arches),
            cmake_args=tuple(component.cmake_args_for(arch)), fetchcontent=tuple(component.fetchcontent),
            status=build_status(ctx, component, arch, job.lane(name, arch))))
    return found


def would_install(ctx: Context, job: RunPlan, steps: Sequence[tuple[Arch, Sequence[str]]]) -> list[str]:
    """What setup and the sysroot step would still make before *steps* could build: one line each."""
    config = ctx.config
    lines = []
    missing = hostsetup.missing_packages(ctx.runner, hostsetup.packages_needed(config, job.arches,
                                                                               job.setup_components))
    if missing:
        lines.append(f"would install host packages: {' '.join(missing)}")
    if buildtools.locate(config.tools) is None:
        lines.append(f"would install cmake {config.tools.cmake} and ninja {config.tools.ninja} into "
                     f"{buildtools.tools_dir(config.tools)}")
    roots: list[str | None] = []
    for arch, names in steps:
        if sysroot.find(config.sysroot, arch) is None:
            lines.append(f"would make the {arch} sysroot (Debian {config.sysroot.suite}, "
                         f"{len(config.sysroot.packages)} packages) at {sysroot.sysroot_path(config.sysroot, arch)}")
        emulator = config.arches[arch].emulator
        on = [n for n in names if job.lane(n, arch).enabled]
        roots += [*([emulator] if emulator else []), *(config.components[n].toolroot for n in on),
                  *(config.toolchain_for(n, arch).toolroot for n in on)]
    for name in dict.fromkeys(r for r in roots if r):
        if toolroot.find(config.toolroots[name]) is None:
            lines.append(f"would make the tool root {name} at {toolroot.root_path(config.toolroots[name])}")
    return lines


def show(ctx: Context, job: RunPlan, steps: Sequence[tuple[Arch, Sequence[str]]]) -> list[str]:
    """The outline of *steps* and what would be installed first, logged as the dry run's plan; the 'would
    install' lines returned (none: the machine is ready to build)."""
    lines = [line for arch, names in steps for one in outline(ctx, job, arch, names) for line in one.describe()]
    missing = would_install(ctx, job, steps)
    ctx.log.info("\n".join(f"plan: {line}" for line in [*lines, *missing]))
    return missing
