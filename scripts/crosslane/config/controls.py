"""Shared controls: which component's amd64 control build (and control test build) a component's smokes and upstream
tests compare with. Its own, unless another component of the same project builds exactly the same on amd64: then the
control is that one's, built once.

A variant (`extends`) that changes only another arch's build, e.g. an ExecuTorch runner built with another riscv64
compiler, would otherwise build on amd64 what its base already builds there, and its control test build again. "The
same" is decided on what the amd64 build's stamp inputs come from (recipes/cmake.plan; suites/ctest.test_plan for the
test build): versions.toml's entries with every other arch's dropped, save the patch series, which the stamp lists
whole. The rest of a stamp (sysroot, compiler
identity, build tools) is the arch's, the same for both; only the name and the folders differ, by construction.
Pure: the configuration's model only, so a plan (`--dry-run`) shows the decision.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from crosslane.archs import CONTROL_ARCH, Arch
from crosslane.config import Component, Config, PatchSpec, SuiteSpec

V = TypeVar("V")


@dataclass(frozen=True, kw_only=True)
class ControlInputs:
    """What versions.toml gives a component's amd64 build and its control test build."""

    build: Component  # the component as the amd64 build reads it: no name, no other arch's entries
    toolchain: str  # the toolchain its amd64 build uses (its own entry or the arch's default)
    lane: tuple[bool, bool] | None  # its [lanes] entry on amd64 (enabled, experimental), if any
    tests: SuiteSpec | None  # its suite as the control runs it; None when it runs none on the control


def _control_only(per_arch: Mapping[Arch, V]) -> dict[Arch, V]:
    return {arch: value for arch, value in per_arch.items() if arch is CONTROL_ARCH}


def _suite(spec: SuiteSpec | None) -> SuiteSpec | None:
    if spec is None or not spec.control:
        return None
    # The control runs the suite on its default profile, whatever `profiles` names for the target.
    return dataclasses.replace(spec, profiles=(), arch_packages=_control_only(spec.arch_packages),
                               exempt=_control_only(spec.exempt))


def _on_control(series: Sequence[PatchSpec]) -> tuple[PatchSpec, ...]:
    """A series as the amd64 stamp records it: every patch with its pin, and whether amd64 applies it (a patch for
    another arch is still listed there, as NOT-FOR-ARCH: sources/patches.stamp_inputs)."""
    return tuple(dataclasses.replace(p, arches=(CONTROL_ARCH,) if CONTROL_ARCH in p.arches else ()) for p in series)


def inputs(config: Config, name: str) -> ControlInputs:
    """*name*'s control inputs. Where it runs (arches, job) and its smoke are left out: they change no byte built."""
    component = config.components[name]
    # A FetchContent dependency's series is in the stamp only when amd64 applies one of it (recipes/cmake.py).
    patches = {dep: _on_control(found) for dep, found in component.fetchcontent_patches.items()
               if any(CONTROL_ARCH in p.arches for p in found)}
    wheel = dataclasses.replace(component.wheel, bundle=_control_only(component.wheel.bundle),
                                drop_requires=_control_only(component.wheel.drop_requires),
                                symbol_versions=_control_only(component.wheel.symbol_versions))
    build = dataclasses.replace(
        component, name="", arches=(), job=True, smoke=None, tests=None, toolchain={},
        # The variants of one project read one cache entry (sources.pinned.cache_name): the pins are compared.
        source_of="", arch_cmake_args=_control_only(component.arch_cmake_args),
        cpu_extensions=_control_only(component.cpu_extensions),
        sysroot_packages=_control_only(component.sysroot_packages), providers=_control_only(component.providers),
        patches=_on_control(component.patches), fetchcontent_patches=patches,
        wheel=wheel)
    lane = config.lanes.get((name, CONTROL_ARCH))
    return ControlInputs(build=build, toolchain=config.toolchain_for(name, CONTROL_ARCH).name,
                         lane=(lane.enabled, lane.experimental) if lane else None, tests=_suite(component.tests))


def _project(component: Component) -> str:
    return component.source_of or component.name


def shared_with(config: Config, name: str) -> str:
    """The component whose amd64 control *name* uses: the first one versions.toml declares of its project that the
    control builds with the same inputs (its suite too, when *name* runs one on the control), else *name* itself."""
    mine = inputs(config, name)
    project = _project(config.components[name])
    for other, component in config.components.items():
        if other == name:
            return name
        if _project(component) != project or not config.builds(other, CONTROL_ARCH):
            continue
        theirs = inputs(config, other)
        same_suite = mine.tests is None or mine.tests == theirs.tests
        if same_suite and dataclasses.replace(theirs, tests=None) == dataclasses.replace(mine, tests=None):
            return other
    return name


def shared(config: Config, names: Sequence[str]) -> dict[str, str]:
    """Those of *names* whose control is another component's → that component."""
    return {name: other for name in names if (other := shared_with(config, name)) != name}


def controls_of(config: Config, names: Sequence[str]) -> tuple[str, ...]:
    """The control builds *names* need: each one's shared control, once."""
    return tuple(dict.fromkeys(shared_with(config, n) for n in names))
