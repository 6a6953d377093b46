"""What preflight and the build learn about the host: each fact probed at most once per process.

Costly probes (compiling the RVV probe, running a program under qemu per CPU profile) and version queries are
also cached on disk (probecache.py), keyed on the identity of every binary involved.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from crosslane.archs import Arch, info
from crosslane.config import Config, Profile
from crosslane.errors import MissingPrerequisite
from crosslane.guest import qemu
from crosslane.host import buildtools, probecache, toolchains, toolroot
from crosslane.host.probecache import identity, read_cached, write_cached
from crosslane.process.runner import Runner

PROBE_TIMEOUT = 30.0
VERSION = re.compile(r"(?<![\w.])\d+(?:\.\d+)+")
CPU_PROBE_TEXT = "crosslane-cpu-probe"
CPU_PROBE_SOURCE = f'#include <stdio.h>\nint main(void) {{ puts("{CPU_PROBE_TEXT}"); return 0; }}\n'


@dataclass(frozen=True)
class Tool:
    """A host program: where it is and the version it reports (path None: not found)."""

    name: str
    path: str | None
    version: str | None
    problem: str = ""
    fix: str = ""


@dataclass(frozen=True)
class CpuProbe:
    """Whether a program ran under one qemu CPU profile, and what it printed."""

    ok: bool
    detail: str


TARGET_TRIPLE = re.compile(r"[a-z0-9_.]+(-[a-z0-9_.]+){1,4}")  # rustc's target names: riscv64gc-unknown-linux-gnu


@dataclass(frozen=True)
class RustupListing:
    """The outcome of `rustup target list --installed`, as evidence for the positive-evidence rule."""

    state: Literal["absent", "failed", "empty", "listed"]
    targets: frozenset[str] = frozenset()
    detail: str = ""


@dataclass(frozen=True)
class RootStd:
    """What a tool root's files say of a target's Rust std: no root yet (no evidence), or the std is there or not."""

    state: Literal["no-root", "present", "missing"]
    detail: str = ""


@dataclass
class Probes:
    """Takes what it probes with: the runner, the configuration, and how a component's compiler is found (the
    context's cache of detected compilers, so a compiler is detected once per run)."""

    runner: Runner
    config: Config
    find_compiler: Callable[[str, Arch], toolchains.Compiler]
    _tools: dict[str, Tool] = field(default_factory=dict)
    _compilers: dict[tuple[str, Arch], toolchains.Compiler | MissingPrerequisite] = field(default_factory=dict)
    _rvv: dict[str, bool] = field(default_factory=dict)
    _links: dict[str, toolchains.SysrootLink] = field(default_factory=dict)
    _cpu: dict[tuple[Arch, str], CpuProbe] = field(default_factory=dict)
    _cpu_programs: dict[Arch, Path | str] = field(default_factory=dict)
    _rustup: RustupListing | None = None
    # Where a dry run builds its probe programs: outside the cache, gone with the Probes object.
    _scratch: tempfile.TemporaryDirectory[str] | None = None

    # -- host programs ---------------------------------------------------------------------------------

    def pinned(self, name: str, path: Path, fix: str) -> Tool:
        if name not in self._tools:
            self._tools[name] = self._versioned(name, str(path), ("--version",), fix)
        return self._tools[name]

    def _versioned(self, name: str, path: str, args: tuple[str, ...], fix: str) -> Tool:
        output = probecache.version_output(self.runner, [path, *args])
        if isinstance(output, probecache.Failed):
            return Tool(name, path, None, f"{path} {' '.join(args)} failed ({output.reason})", fix)
        return Tool(name, path, version_from(output))

    def buildtools(self) -> buildtools.BuildTools | None:
        return buildtools.locate(self.config.tools)

    # -- compilers --------------------------------------------------------------------------------------

    def compiler(self, component: str, arch: Arch) -> toolchains.Compiler | MissingPrerequisite:
        chain = self.config.toolchain_for(component, arch)
        key = (chain.name, arch)
        if key not in self._compilers:
            try:
                self._compilers[key] = self.find_compiler(component, arch)
            except MissingPrerequisite as exc:
                self._compilers[key] = exc
        return self._compilers[key]

    def arch_compiler(self, arch: Arch) -> toolchains.Compiler | MissingPrerequisite:
        chain = self.config.toolchains[self.config.arches[arch].toolchain]
        key = (chain.name, arch)
        if key not in self._compilers:
            try:
                places = toolchains.places_for(self.runner, self.config.root) if chain.toolroot else None
                self._compilers[key] = toolchains.detect(self.runner, chain, arch, self.config.toolroots, places)
            except MissingPrerequisite as exc:
                self._compilers[key] = exc
        return self._compilers[key]

    def rvv(self, compiler: toolchains.Compiler) -> bool:
        """Can *compiler* build RVV intrinsics? Compiled once per compiler binary, then cached on disk."""
        key: dict[str, object] = {"cc": identity(compiler.cc[0]), "argv": [*compiler.cc, *compiler.target_flags],
                                  "version": compiler.version, "probe": toolchains.RVV_PROBE,
                                  "flags": list(info(compiler.arch).vector_compile_flags)}
        memo = json.dumps(key, sort_keys=True, default=str)
        if memo not in self._rvv:
            cached = read_cached("rvv", key)
            if isinstance(cached, bool):
                self._rvv[memo] = cached
            else:
                self._rvv[memo] = toolchains.can_compile_rvv(self.runner, compiler)
                if not self.runner.dry_run:  # a dry run writes nothing, the probe cache included
                    write_cached("rvv", key, self._rvv[memo])
        return self._rvv[memo]

    def sysroot_link(self, compiler: toolchains.Compiler, sysroot: Path) -> toolchains.SysrootLink:
        """Does *compiler* link C++ against *sysroot*? Linked once per compiler binary and sysroot, then cached on
        disk."""
        key: dict[str, object] = {"cxx": identity(compiler.cxx[0]), "argv": [*compiler.cxx, *compiler.target_flags],
                                  "version": compiler.version, "sysroot": str(sysroot),
                                  "probe": toolchains.CXX_LINK_PROBE}
        memo = json.dumps(key, sort_keys=True, default=str)
        if memo not in self._links:
            cached = read_cached("sysroot-link", key)
            found = link_from_cache(cached)
            if found is None:
                found = toolchains.link_against(self.runner, compiler, sysroot)
                if not self.runner.dry_run and found.detail != "timed out":
                    write_cached("sysroot-link", key, dataclasses.asdict(found))
            self._links[memo] = found
        return self._links[memo]

    # -- qemu --------------------------------------------------------------------------------------------

    def qemu(self, arch: Arch) -> Tool:
        name = info(arch).qemu_binary
        if name not in self._tools:
            fix = f"invoke setup --arch {arch} (installs qemu-user-static)"
            try:
                path = qemu.for_arch(self.runner, self.config, arch)
            except MissingPrerequisite as exc:
                self._tools[name] = Tool(name, None, None, exc.message, exc.fix or fix)
            else:
                try:
                    self._tools[name] = Tool(name, path, version_from(qemu.version(self.runner, path)))
                except (MissingPrerequisite, IndexError):
                    self._tools[name] = Tool(name, path, None, f"{path} --version failed", fix)
        return self._tools[name]

    def cpu_profile(self, arch: Arch, profile: Profile, sysroot: Path) -> CpuProbe:
        """Run a tiny static target program under qemu with the profile's -cpu; ok only if it ran and printed."""
        memo_key = (arch, profile.cpu)
        if memo_key in self._cpu:
            return self._cpu[memo_key]
        qemu_tool = self.qemu(arch)
        compiler = self.arch_compiler(arch)
        if qemu_tool.path is None or isinstance(compiler, MissingPrerequisite):
            missing = qemu_tool.problem if qemu_tool.path is None else str(compiler)
            return CpuProbe(False, f"cannot probe: {missing}")
        key: dict[str, object] = {"qemu": identity(qemu_tool.path), "cpu": profile.cpu, "cc": identity(compiler.cc[0]),
                                  "compiler": compiler.identity, "sysroot": str(sysroot), "source": CPU_PROBE_SOURCE}
        cached = read_cached("qemu-cpu", key)
        if isinstance(cached, dict) and isinstance(cached.get("ok"), bool):
            self._cpu[memo_key] = CpuProbe(bool(cached["ok"]), str(cached.get("detail", "")))
            return self._cpu[memo_key]
        program = self._cpu_program(arch, compiler, sysroot)
        if isinstance(program, str):
            return CpuProbe(False, program)
        result = self.runner.run([qemu_tool.path, "-cpu", profile.cpu, str(program)], probe=True, quiet=True,
                                     check=False, timeout=PROBE_TIMEOUT)
        ok = result.ok and CPU_PROBE_TEXT in result.output
        detail = "accepted" if ok else (result.tail(2).strip() or f"exit {result.returncode}")
        probe = CpuProbe(ok, detail)
        if not result.timed_out and not self.runner.dry_run:
            write_cached("qemu-cpu", key, {"ok": ok, "detail": detail})
        self._cpu[memo_key] = probe
        return probe

    def _cpu_program(self, arch: Arch, compiler: toolchains.Compiler, sysroot: Path) -> Path | str:
        """The probe program for *arch*, static against the sysroot (str: why it could not be built).

        Kept in the cache, keyed on the compiler binary and the sysroot, so it is compiled once.
        """
        if arch in self._cpu_programs:
            return self._cpu_programs[arch]
        key: dict[str, object] = {"cc": identity(compiler.cc[0]), "compiler": compiler.identity,
                                  "sysroot": str(sysroot), "source": CPU_PROBE_SOURCE}
        program = probecache.cache_file(f"cpu-program-{arch}", key).with_suffix("")
        if self.runner.dry_run and not program.is_file():
            if self._scratch is None:
                self._scratch = tempfile.TemporaryDirectory(prefix="crosslane-dry-probes-")
            program = Path(self._scratch.name) / program.name
        outcome: Path | str = program
        if not program.is_file():
            program.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix="crosslane-cpu-", dir=program.parent) as tmp:
                source, built = Path(tmp) / "probe.c", Path(tmp) / "probe"
                source.write_text(CPU_PROBE_SOURCE)
                result = self.runner.run(
                    [*compiler.cc, *compiler.target_flags, *compiler.linker_flags, f"--sysroot={sysroot}",
                     "-static", "-O1", str(source), "-o", str(built)],
                    probe=True, quiet=True, check=False, timeout=120)
                if result.ok and built.is_file():
                    built.replace(program)
                else:
                    outcome = (f"could not build the static probe program with {compiler.cc[0]}: "
                               f"{result.tail(2).strip() or f'exit {result.returncode}'}")
        self._cpu_programs[arch] = outcome
        return outcome

    # -- a tool root's Rust --------------------------------------------------------------------------------

    def root_std(self, root_name: str, triple: str) -> RootStd:
        """The target std in the tool root, read from its files (no process): the rlibs of
        /usr/lib/rustlib/<triple>/lib, which libstd-rust-dev:<arch> installs."""

        found = toolroot.find(self.config.toolroots[root_name])
        if found is None:
            return RootStd("no-root", f"the tool root {root_name} is not made yet (the build makes it)")
        libdir = found.path / "usr/lib/rustlib" / triple / "lib"
        std = sorted(libdir.glob("libstd-*.rlib")) if libdir.is_dir() else []
        if std:
            return RootStd("present", f"{std[0].relative_to(found.path)} in {found.path.name}")
        return RootStd("missing", f"no {triple} std in {found.path.name} (/{libdir.relative_to(found.path)} "
                                  f"{'holds no libstd-*.rlib' if libdir.is_dir() else 'does not exist'})")

    # -- rustup ------------------------------------------------------------------------------------------

    def rustup(self) -> RustupListing:
        if self._rustup is None:
            self._rustup = self._list_rust_targets()
        return self._rustup

    def _list_rust_targets(self) -> RustupListing:
        try:
            path = self.runner.which("rustup", fix="install rustup")
        except MissingPrerequisite:
            return RustupListing("absent", detail="rustup not found on PATH")
        result = self.runner.run([path, "target", "list", "--installed"], probe=True, quiet=True, check=False,
                                     timeout=PROBE_TIMEOUT)
        if not result.ok:
            what = "timed out" if result.timed_out else f"exited {result.returncode}"
            return RustupListing("failed", detail=f"rustup target list --installed {what}")
        lines = [line.strip().removesuffix(" (installed)") for line in result.output.splitlines() if line.strip()]
        if not lines:
            return RustupListing("empty", detail="rustup target list --installed printed nothing")
        # A listing is evidence only when every line is a target triple: a line of anything else (an error on
        # stderr with exit 0, a warning) makes the whole output no listing, so nothing is dropped on it
        garbled = [line for line in lines if not TARGET_TRIPLE.fullmatch(line)]
        if garbled:
            return RustupListing("failed", detail=f"rustup target list --installed printed {garbled[0][:120]!r}, "
                                                  "not a target")
        targets = frozenset(lines)
        return RustupListing("listed", targets, detail=f"installed: {', '.join(sorted(targets))}")


def link_from_cache(cached: object) -> toolchains.SysrootLink | None:
    """A cached link probe, or None when the entry is not one (a miss: probed again)."""
    if not isinstance(cached, dict) or not isinstance(cached.get("linked"), bool) \
            or not isinstance(cached.get("detail"), str):
        return None
    versions = [cached.get(name) for name in ("headers", "own")]
    if not all(v is None or isinstance(v, str) for v in versions):
        return None
    return toolchains.SysrootLink(cached["linked"], cached["detail"], cached.get("headers"), cached.get("own"))


def version_from(output: str) -> str | None:
    """The first dotted number of a `--version` output ("ninja 1.13.0.git.kitware" → "1.13.0")."""
    found = VERSION.search(output)
    return found.group(0) if found else None
