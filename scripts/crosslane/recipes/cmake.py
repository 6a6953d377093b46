"""The cmake recipe: cross configure, build and install one component for one arch, skipped when current.

plan() turns the component, the arch's toolchain, sysroot and prepared source into a BuildPlan; execute()
runs it unless the stamp (keyed by every input) says the install folder is current.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from crosslane import stamps
from crosslane.archs import Arch, info
from crosslane.config import Component
from crosslane.context import Context
from crosslane.errors import ConfigError, StepFailed
from crosslane.host.probes import Probes
from crosslane.log import Progress
from crosslane.recipes import Built, cmake_toolchain, crosswire
from crosslane.report import Row, Stage, Verdict
from crosslane.sources import worktree
from crosslane.target import cpython, qemu


@dataclass(frozen=True)
class BuildPlan:
    component: Component
    arch: Arch
    source: Path
    build_dir: Path
    install_dir: Path
    toolchain_file: Path
    toolchain_text: str
    configure: tuple[str, ...]
    build: tuple[str, ...]
    install: tuple[str, ...]
    stamp_inputs: dict[str, object]
    rows: tuple[Row, ...] = ()  # what preparing the source reported: which source served, each patch's state
    # Environment changes for every step (crosswire.py): added variables, removed variables.
    env: Mapping[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()

    @property
    def stamp_key(self) -> str:
        return stamps.key(self.stamp_inputs)

    @property
    def folder(self) -> Path:
        return self.build_dir.parent


def template_values(ctx: Context, arch: Arch) -> dict[str, str]:
    root = ctx.sysroot(arch).path
    values = {"sysroot": str(root), "triplet": info(arch).triplet, "arch": arch.value,
              "cmake_processor": info(arch).cmake_processor}
    python = cpython.locate(root, arch)
    values.update(python_include=str(python.include), ext_suffix=python.ext_suffix, python_version=python.version)
    return values


def expand(component: Component, arch: Arch, values: dict[str, str]) -> tuple[str, ...]:
    expanded = []
    for arg in component.cmake_args_for(arch):
        try:
            expanded.append(arg.format(**values))
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(f"versions.toml: components.{component.name}.cmake_args: '{arg}' uses an unknown "
                              f"placeholder {exc}; known: {', '.join('{' + k + '}' for k in sorted(values))}") \
                from None
    return tuple(expanded)


def plan(ctx: Context, component: Component, arch: Arch, probes: Probes | None = None) -> BuildPlan:
    compiler = ctx.compiler(component.name, arch)
    root = ctx.sysroot(arch)
    tools = ctx.tools()
    prepared = worktree.prepare(ctx, component, arch)
    source, source_id = prepared.path, prepared.source_id
    folder = ctx.component_dir(arch, component.name)
    build_dir, install_dir = folder / "build", folder / "install"
    profile = ctx.config.arches[arch].profile(ctx.config.arches[arch].default_profile)
    emulator = qemu.target_command(ctx.runner, ctx.build_root, root, profile)
    toolchain_file = ctx.build_root / arch.value / "toolchains" / f"{compiler.toolchain}.cmake"
    toolchain_text = cmake_toolchain.render(compiler, root.path, emulator, ctx.runner.find("ccache"))
    wiring = crosswire.wire(probes or Probes(ctx), component, arch, compiler, root.path)
    args = expand(component, arch, template_values(ctx, arch) | dict(wiring.placeholders)) + wiring.cmake_args
    deps = [ctx.component_dir(arch, dep) / "install" for dep in component.depends]
    configure = [str(tools.cmake), "-S", str(source / component.source_subdir), "-B", str(build_dir), "-G", "Ninja",
                 f"-DCMAKE_MAKE_PROGRAM={tools.ninja}", f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file}",
                 f"-DCMAKE_INSTALL_PREFIX={install_dir}", "-DCMAKE_BUILD_TYPE=Release"]
    if deps:
        joined = ";".join(str(d) for d in deps)
        configure += [f"-DCMAKE_PREFIX_PATH={joined}", f"-DCMAKE_FIND_ROOT_PATH={joined}"]
    configure += args
    inputs: dict[str, object] = {
        "component": component.name, "arch": arch.value, "source": source_id, "compiler": compiler.identity,
        "sysroot": root.key, "cmake": ctx.config.tools.cmake, "ninja": ctx.config.tools.ninja,
        "toolchain_file": toolchain_text, "configure": configure,
        "depends": {dep: (stamps.read(ctx.component_dir(arch, dep)) or {}).get("key") for dep in component.depends},
    }
    if prepared.patch_inputs:
        inputs["patches"] = list(prepared.patch_inputs)
    if wiring.env or wiring.unset:
        inputs["env"] = {"set": dict(wiring.env), "unset": list(wiring.unset)}
    return BuildPlan(component, arch, source, build_dir, install_dir, toolchain_file, toolchain_text,
                     tuple(configure), (str(tools.cmake), "--build", str(build_dir), "--parallel"),
                     (str(tools.cmake), "--install", str(build_dir)), inputs, prepared.rows, wiring.env,
                     wiring.unset)


def configured_source(build_dir: Path) -> Path | None:
    try:
        text = (build_dir / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
            return Path(line.partition("=")[2])
    return None


def execute(ctx: Context, build: BuildPlan, *, force: bool = False) -> Row:
    name, arch = build.component.name, build.arch.value
    if not force and stamps.is_current(build.folder, build.stamp_key) and build.install_dir.is_dir():
        return Row(name, arch, "build", Verdict.PASS, "up to date (skipped)", stage=Stage.BUILD)
    if ctx.runner.dry_run:
        for argv in (build.configure, build.build, build.install):
            ctx.runner.run(argv, env=build.env, unset=build.unset)
        return Row(name, arch, "build", Verdict.SKIP, "dry run", stage=Stage.BUILD)
    stamps.clear(build.folder)
    shutil.rmtree(build.install_dir, ignore_errors=True)
    if configured_source(build.build_dir) not in (None, build.source / build.component.source_subdir):
        shutil.rmtree(build.build_dir)  # CMake refuses a build tree made from another source folder
    cmake_toolchain.write(build.toolchain_file, build.toolchain_text)
    progress = Progress(ctx.log, f"build {name} ({arch})")

    def on_line(line: str) -> None:
        if line.startswith("[") and "/" in line.split("]")[0]:
            progress.advance(0, line.split("]")[0] + "]")

    step = "configure"
    try:
        ctx.runner.run(build.configure, timeout=1800, env=build.env, unset=build.unset)
        step = "compile"
        ctx.runner.run(build.build, timeout=7200, on_line=on_line, env=build.env, unset=build.unset)
        step = "install"
        ctx.runner.run(build.install, timeout=600, env=build.env, unset=build.unset)
    except StepFailed as exc:
        progress.close()
        ctx.log.error(exc.message)
        if exc.detail:
            ctx.log.info(exc.detail)
        return Row(name, arch, "build", Verdict.FAIL, f"{step} failed; see the output tail above", stage=Stage.BUILD)
    progress.close()
    stamps.write(build.folder, build.stamp_key, build.stamp_inputs)
    return Row(name, arch, "build", Verdict.PASS, "built", stage=Stage.BUILD)


class CMakeRecipe:
    def run(self, ctx: Context, component: Component, arch: Arch, probes: Probes, *, force: bool) -> Built:
        planned = plan(ctx, component, arch, probes)
        return Built(build=execute(ctx, planned, force=force), before=planned.rows, gated=(planned.install_dir,))


RECIPE = CMakeRecipe()
