"""The cmake-wheel recipe: the cmake recipe once per target CPython, each build made into an installable wheel.

A build identifier is cibuildwheel's: cp314-linux_riscv64 (versions.toml `wheel.pythons`, default the sysroot's
system CPython; `--build cp314-*` or CROSSLANE_BUILD selects). Each has its own folder under
<component>/wheels/<identifier>/ (build tree, install folder, stamp). onnxruntime-genai's CMake stages the
package (the extension built for the target, its .so files, the pure Python modules and setup.py) in
<build>/wheel; this recipe
1. copies the libraries of `wheel.bundle` (the chain's libonnxruntime) into the package folder,
2. packs it with the host's pip (it only zips: `_PYTHON_HOST_PLATFORM` gives the platform part) and retags it
   with the target's CPython tag (`wheel tags`): never the host's cp311 / linux_x86_64,
3. drops the Requires-Dist entries `wheel.drop_requires` names (the bundled library replaces them),
4. repairs it with auditwheel against the target sysroot (wheel_repair.py): manylinux_2_X, the X its symbols
   allow, every library outside the policy grafted.
The component's own install folder then holds every selected identifier's wheel in dist/, and its stamp
lists them: what packs, gates and smokes read. A build that ends without exactly one wheel per identifier is
a FAIL of this step; there is no fallback to a host build.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from crosslane import stamps
from crosslane.archs import Arch, info
from crosslane.config import Component
from crosslane.context import Context
from crosslane.errors import StepFailed
from crosslane.features.probes import Probes
from crosslane.gates import manylinux
from crosslane.guest import cpython
from crosslane.recipes import Built, cmake, wheel_repair
from crosslane.report import Check, Row, Verdict
from crosslane.sources.worktree import Prepared

DIST = "dist"
WHEELS = "wheels"
SELECT_ENV = "CROSSLANE_BUILD"  # cibuildwheel's CIBW_BUILD: space-separated identifier patterns


def python_tag(version: str) -> str:
    return "cp" + version.replace(".", "")


def selected(identifier: str, patterns: Sequence[str]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(identifier, p) for p in patterns)


def patterns(ctx: Context) -> tuple[str, ...]:
    return ctx.builds or tuple(os.environ.get(SELECT_ENV, "").split())


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
    return final


def package_folder(staged: Path) -> Path:
    """The import package's folder in the staged tree: the one holding the extension module."""
    found = sorted({p.parent for p in staged.glob("*/*.so") if p.parent.name != "build"})
    if len(found) != 1:
        raise StepFailed(f"{staged}: expected one package folder with the extension, found {len(found)}",
                         fix="check the project's wheel staging (BUILD_WHEEL)")
    return found[0]


def wheels(install: Path) -> list[Path]:
    return sorted((install / DIST).glob("*.whl"))


def lane_wheel(install: Path, version: str) -> Path | None:
    """The wheel of CPython *version* among those the lane's build left in *install*/dist, else None."""
    tag = f"-{python_tag(version)}-"
    found = [w for w in wheels(install) if tag in w.name]
    return found[0] if len(found) == 1 else None


@dataclasses.dataclass(frozen=True)
class OneBuild:
    identifier: str
    row: Row
    planned: cmake.BuildPlan
    wheel: Path | None


class CMakeWheelRecipe:
    needs_source = True

    def one(self, ctx: Context, component: Component, arch: Arch, probes: Probes, source: Prepared | None,
            version: str, identifier: str, *, force: bool) -> OneBuild:
        folder = ctx.component_dir(arch, component.name) / WHEELS / identifier
        planned = cmake.plan(ctx, component, arch, probes, source, folder=folder, python=version)
        spec = component.wheel
        bundle, drop = spec.bundle.get(arch, ()), spec.drop_requires.get(arch, ())
        prefixes = [ctx.component_dir(arch, dep) / "install" for dep in component.depends]
        sysroot = ctx.sysroot(arch).path
        dist = planned.install_dir / DIST
        inputs = {**planned.stamp_inputs, "wheel": {
            "identifier": identifier, "python_tag": python_tag(version), "platform": info(arch).wheel_platform,
            "bundle": list(bundle), "drop_requires": list(drop), "repair": spec.repair}}
        staged = planned.build_dir / "wheel"

        def package() -> None:
            package_dir = package_folder(staged)
            for stale in package_dir.glob("lib*.so*"):  # a bundled copy left by an earlier packaging
                if stale.name in bundle:
                    stale.unlink()
            bundled = wheel_repair.bundle(package_dir, bundle, prefixes)
            try:
                built = make_wheel(ctx, staged, dist, arch, version)
            finally:
                for path in bundled:
                    path.unlink(missing_ok=True)
            wheel_repair.drop_requires(ctx.runner, built, drop)
            if spec.repair:
                repaired = wheel_repair.repair(ctx.runner, built, dist.with_name(".repaired"),
                                               manylinux.ldpaths(sysroot, arch, prefixes))
                built.unlink()
                repaired.replace(dist / repaired.name)
                dist.with_name(".repaired").rmdir()
            [final] = wheels(planned.install_dir)
            ctx.log.info(f"    wheel: {final.name} ({final.stat().st_size / 1e6:.1f} MB)")

        planned = dataclasses.replace(planned, stamp_inputs=inputs, finish=package)
        row = dataclasses.replace(cmake.execute(ctx, planned, force=force), subject=identifier)
        found = wheels(planned.install_dir)
        if row.verdict is Verdict.PASS and len(found) != 1:
            row = dataclasses.replace(row, verdict=Verdict.FAIL,
                                      reason=f"{dist}: expected one wheel, found {len(found)}; rebuild with --force")
        return OneBuild(identifier, row, planned, found[0] if len(found) == 1 else None)

    def run(self, ctx: Context, component: Component, arch: Arch, probes: Probes, source: Prepared | None, *,
            force: bool) -> Built:
        default = cpython.locate(ctx.sysroot(arch).path, arch).version
        versions = component.wheel.pythons or (default,)
        known = component.wheel.identifiers(arch, default)
        wanted = patterns(ctx)
        chosen = [(v, i) for v, i in zip(versions, known, strict=True) if selected(i, wanted)]
        if not chosen:
            return Built(build=Row(component.name, arch.value, Check.BUILD, Verdict.SKIP,
                                   f"no build identifier matches {' '.join(wanted)} (known: {', '.join(known)})"))
        done: list[OneBuild] = []
        for version, identifier in chosen:
            ctx.log.info(f"    {identifier}")
            done.append(self.one(ctx, component, arch, probes, source, version, identifier, force=force))
            if done[-1].row.verdict is Verdict.FAIL:
                break
        before = (*done[0].planned.rows, *(d.row for d in done))
        failed = [d for d in done if d.row.verdict is Verdict.FAIL]
        if failed:
            return Built(build=Row(component.name, arch.value, Check.BUILD, Verdict.FAIL,
                                   f"{failed[0].identifier}: {failed[0].row.reason}"), before=before)
        row = gather(ctx, component, arch, done)
        return Built(build=row, before=before, gated=tuple(wheels(ctx.component_dir(arch, component.name) / "install")),
                     builds=tuple(d.planned.build_dir for d in done))


def gather(ctx: Context, component: Component, arch: Arch, done: Sequence[OneBuild]) -> Row:
    """The component's install/dist: the selected identifiers' wheels, and a stamp that lists each identifier's
    key (its inputs are the first identifier's, for the build report; its facts the sums)."""
    folder = ctx.component_dir(arch, component.name)
    install = folder / "install"
    names = ", ".join(d.wheel.name for d in done if d.wheel is not None)
    key = stamps.key({"identifiers": {d.identifier: d.planned.stamp_key for d in done}})
    if stamps.is_current(folder, key, outputs=install) and all(d.row.reason == "up to date (skipped)" for d in done):
        return Row(component.name, arch.value, Check.BUILD, Verdict.PASS, f"up to date (skipped): {names}")
    stamps.clear(folder)
    stamps.remove(install)
    (install / DIST).mkdir(parents=True)
    seconds, counts, identifiers = 0.0, {"hits": 0, "misses": 0}, {}  # and remote_hits, remote_errors if any
    for one in done:
        assert one.wheel is not None
        # A copy, not a link: a new link changes the file's ctime, which the identifier's stamp lists.
        shutil.copy2(one.wheel, install / DIST / one.wheel.name)
        recorded = (stamps.read(one.planned.folder) or {}).get("facts")
        recorded = recorded if isinstance(recorded, dict) else {}
        seconds += float(recorded.get("seconds", 0.0))
        cache = recorded.get("ccache")
        cache = cache if isinstance(cache, dict) else {}
        for name, value in cache.items():
            if isinstance(value, int):
                counts[name] = counts.get(name, 0) + value
        identifiers[one.identifier] = {"wheel": one.wheel.name, "built": one.row.reason}
    facts = {"seconds": round(seconds, 1), "ccache": counts, "identifiers": identifiers}
    inputs = {**done[0].planned.stamp_inputs, "identifiers": {d.identifier: d.planned.stamp_key for d in done}}
    stamps.write(folder, key, inputs, outputs=install, facts=facts)
    return Row(component.name, arch.value, Check.BUILD, Verdict.PASS, f"built: {names}")


RECIPE = CMakeWheelRecipe()
