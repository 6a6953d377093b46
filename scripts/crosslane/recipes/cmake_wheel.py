"""The cmake-wheel recipe: the cmake recipe, then the project's Python package folder made into the target's wheel.

onnxruntime-genai's CMake stages the package (the extension built for the target, its .so files, the pure
Python modules and setup.py) in <build>/wheel. This recipe packs that folder with the host's pip (it only
zips: nothing is compiled, `_PYTHON_HOST_PLATFORM` gives the platform part), then retags the result with the
target's CPython tag (`wheel tags`), so the file name says what its contents are:
onnxruntime_genai-0.15.2-cp314-cp314-linux_riscv64.whl, never the host's cp311 / linux_x86_64. A build that
ends without exactly one wheel is a FAIL of this step; there is no fallback to a host build.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path

from crosslane.archs import Arch, info
from crosslane.config import Component
from crosslane.context import Context
from crosslane.errors import StepFailed
from crosslane.features.probes import Probes
from crosslane.guest import cpython
from crosslane.recipes import Built, cmake
from crosslane.report import Verdict
from crosslane.sources.worktree import Prepared

DIST = "dist"


def python_tag(version: str) -> str:
    return "cp" + version.replace(".", "")


def make_wheel(ctx: Context, staged: Path, dist: Path, arch: Arch, version: str) -> Path:
    if not (staged / "setup.py").is_file():
        raise StepFailed(f"{staged}/setup.py missing: the build staged no Python package",
                         fix="check the component's cmake_args (BUILD_WHEEL/ENABLE_PYTHON)")
    work = dist.with_name(".dist-work")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(dist, ignore_errors=True)
    work.mkdir(parents=True)
    platform = info(arch).wheel_platform
    ctx.runner.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-w", str(work), str(staged)], env={"_PYTHON_HOST_PLATFORM": platform.replace("_", "-", 1)},
                   timeout=600)
    built = sorted(work.glob("*.whl"))
    if len(built) != 1:
        raise StepFailed(f"{work}: expected one wheel, found {len(built)}", fix="see the pip output above")
    tag = python_tag(version)
    ctx.runner.run([sys.executable, "-m", "wheel", "tags", "--remove", "--python-tag", tag, "--abi-tag", tag,
                    "--platform-tag", platform, str(built[0])], timeout=600)
    [wheel] = sorted(work.glob("*.whl"))
    dist.mkdir(parents=True)
    final = dist / wheel.name
    wheel.replace(final)
    shutil.rmtree(work, ignore_errors=True)
    ctx.log.info(f"    wheel: {final.name} ({final.stat().st_size / 1e6:.1f} MB)")
    return final


def wheels(install: Path) -> list[Path]:
    return sorted((install / DIST).glob("*.whl"))


class CMakeWheelRecipe:
    needs_source = True

    def run(self, ctx: Context, component: Component, arch: Arch, probes: Probes, source: Prepared | None, *,
            force: bool) -> Built:
        planned = cmake.plan(ctx, component, arch, probes, source)
        version = cpython.locate(ctx.sysroot(arch).path, arch).version
        dist = planned.install_dir / DIST
        inputs = {**planned.stamp_inputs, "wheel": {"python_tag": python_tag(version),
                                                    "platform": info(arch).wheel_platform}}
        staged = planned.build_dir / "wheel"

        def package() -> None:
            make_wheel(ctx, staged, dist, arch, version)

        planned = dataclasses.replace(planned, stamp_inputs=inputs, finish=package)
        row = cmake.execute(ctx, planned, force=force)
        found = wheels(planned.install_dir)
        if row.verdict is Verdict.PASS and len(found) != 1:
            row = dataclasses.replace(row, verdict=Verdict.FAIL,
                                      reason=f"{dist}: expected one wheel, found {len(found)}; rebuild with --force")
        elif found:
            row = dataclasses.replace(row, reason=f"{row.reason}: {found[0].name}")
        return Built(build=row, before=planned.rows, gated=tuple(found))


RECIPE = CMakeWheelRecipe()
