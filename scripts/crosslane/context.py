"""What every step receives: the configuration, the runner, the run's choices, and what it already found.

Frozen: a command builds it once from its options (cli/commands.py); a step that needs other choices makes a
new one (`dataclasses.replace`). The caches are memos of facts found on the machine (a compiler, a
sysroot, an emulator, the build tools), filled on first use; they never change what a choice means."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crosslane.archs import Arch
from crosslane.config import Config, Profile
from crosslane.errors import MissingPrerequisite
from crosslane.files.paths import build_root
from crosslane.guest import cpython, qemu, sysroot
from crosslane.guest.sysroot import Sysroot
from crosslane.host import buildtools, toolchains
from crosslane.log import Log
from crosslane.process import costs
from crosslane.process.runner import Runner


@dataclass(frozen=True)
class Context:
    """What a command runs with: the config, the runner and the command line's local sources and wheels."""

    config: Config
    runner: Runner
    # Local checkouts given on the command line (--source NAME=PATH), by component.
    sources: Mapping[str, Path] = field(default_factory=dict)
    # Prebuilt wheels given on the command line (--wheel), by component: the smoke tests these (one per arch when
    # several: smokes/site.given_wheel picks).
    wheels: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)
    # Which [cases.*] models a smoke runs: () the matrix's default, ("all",) every case, else these models.
    cases: tuple[str, ...] = ()
    # Which build identifiers a cmake-wheel build makes (--build, cibuildwheel's patterns): () every one.
    builds: tuple[str, ...] = ()
    _compilers: dict[tuple[str, Arch], toolchains.Compiler] = field(default_factory=dict)
    _sysroots: dict[Arch, Sysroot] = field(default_factory=dict)
    _emulators: dict[Arch, str] = field(default_factory=dict)
    _pythons: dict[tuple[Arch, str | None], cpython.TargetPython] = field(default_factory=dict)
    # The run's stages and what each cost (costs.py), for the summary and the build report.
    ledger: costs.Ledger = field(default_factory=costs.Ledger)

    @property
    def log(self) -> Log:
        return self.runner.log

    @property
    def build_root(self) -> Path:
        return build_root(self.config.root)

    def component_dir(self, arch: Arch, component: str) -> Path:
        return self.build_root / arch.value / component

    def build_lock(self, arch: Arch) -> Path:
        """The lock file of an arch's build tree (locks.hold): builds, packs and unpacks of it take turns."""
        return self.build_root / arch.value / ".lock"

    def compiler(self, component: str, arch: Arch) -> toolchains.Compiler:
        chain = self.config.toolchain_for(component, arch)
        cached = self._compilers.get((chain.name, arch))
        if cached is None:
            places = toolchains.places_for(self.runner, self.config.root) if chain.toolroot else None
            cached = toolchains.detect(self.runner, chain, arch, self.config.toolroots, places)
            self._compilers[(chain.name, arch)] = cached
        return cached

    def sysroot(self, arch: Arch) -> Sysroot:
        found = self._sysroots.get(arch) or sysroot.find(self.config.sysroot, arch)
        if found is None:
            raise MissingPrerequisite(f"no {arch} sysroot for the current versions.toml",
                                      fix=f"invoke sysroot --arch {arch}")
        self._sysroots[arch] = found
        return found

    def ensure_sysroot(self, arch: Arch) -> Sysroot:
        found = sysroot.ensure(self.runner, self.config.sysroot, arch)
        qemu.ensure_emulator(self.runner, self.config, arch)  # the guest is its root and the qemu that runs it
        self._sysroots[arch] = found
        self._pythons.clear()  # what was found in a sysroot made again is found again
        return found

    def target_python(self, arch: Arch, version: str | None = None) -> cpython.TargetPython:
        """cpython.locate in the arch's sysroot (its system CPython, or *version*), found once per run."""
        if (arch, version) not in self._pythons:
            self._pythons[(arch, version)] = cpython.locate(self.sysroot(arch).path, arch, version)
        return self._pythons[(arch, version)]

    def qemu(self, arch: Arch) -> str:
        """The qemu-user *arch*'s programs run under (guest/qemu.for_arch), found once per run."""
        if arch not in self._emulators:
            self._emulators[arch] = qemu.for_arch(self.runner, self.config, arch)
        return self._emulators[arch]

    def profiles_of(self, name: str, arch: Arch, profiles: Sequence[Profile]) -> tuple[Profile, ...]:
        """*profiles* as component *name* runs on them: its cpu_extensions for *arch* on, spelled for the qemu that
        runs *arch*'s programs (the profiles as they are when it states none)."""
        extensions = self.config.components[name].cpu_extensions.get(arch, ())
        if not extensions:
            return tuple(profiles)
        release = qemu.version(self.runner, self.qemu(arch))
        return tuple(qemu.with_extensions(profile, extensions, release) for profile in profiles)

    def default_profile_of(self, name: str, arch: Arch) -> Profile:
        """The arch's default profile as component *name* runs on it (profiles_of)."""
        arch_cfg = self.config.arches[arch]
        return self.profiles_of(name, arch, [arch_cfg.profile(arch_cfg.default_profile)])[0]

    @functools.cached_property
    def _build_tools(self) -> buildtools.BuildTools:
        return buildtools.ensure(self.runner, self.config.tools)

    def tools(self) -> buildtools.BuildTools:
        return self._build_tools
