"""What every step receives: the configuration, the runner, and what this run already probed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.errors import MissingPrerequisite
from crosslane.guest import sysroot
from crosslane.guest.sysroot import Sysroot
from crosslane.host import buildtools, toolchains
from crosslane.log import Log
from crosslane.paths import build_root
from crosslane.runner import Runner


@dataclass
class Context:
    config: Config
    runner: Runner
    sources: dict[str, Path] = field(default_factory=dict)
    # Prebuilt wheels given on the command line (--wheel), by component: the smoke tests these.
    wheels: dict[str, Path] = field(default_factory=dict)
    # The run mode of `invoke all` / `nox -s build-<arch>` (pipeline.run_arch): experimental lanes are on in it.
    orchestrated: bool = False
    # Which [cases.*] models a smoke runs: () the matrix's default, ("all",) every case, else these models.
    cases: tuple[str, ...] = ()
    _compilers: dict[tuple[str, Arch], toolchains.Compiler] = field(default_factory=dict)
    _sysroots: dict[Arch, Sysroot] = field(default_factory=dict)
    _tools: buildtools.BuildTools | None = None

    @property
    def log(self) -> Log:
        return self.runner.log

    @property
    def build_root(self) -> Path:
        return build_root(self.config.root)

    def component_dir(self, arch: Arch, component: str) -> Path:
        return self.build_root / arch.value / component

    def compiler(self, component: str, arch: Arch) -> toolchains.Compiler:
        chain = self.config.toolchain_for(component, arch)
        cached = self._compilers.get((chain.name, arch))
        if cached is None:
            cached = toolchains.detect(self.runner, chain, arch)
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
        self._sysroots[arch] = found
        return found

    def tools(self) -> buildtools.BuildTools:
        if self._tools is None:
            self._tools = buildtools.ensure(self.runner, self.config.tools)
        return self._tools
