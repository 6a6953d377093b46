"""versions.toml (schema v1) parsed into the model (model.py) and validated on load: one-line errors."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from crosslane.archs import Arch
from crosslane.config import cases, document, keys, shorthand, tomlcompat  # submodules: no cycle through the package
from crosslane.config.component_model import Component, GitSource
from crosslane.config.components import read_component
from crosslane.config.declare import read_into
from crosslane.config.fields import (
    package_names,
    path_name,
    read_arch,
)
from crosslane.config.model import (
    ArchConfig,
    BareMetalBuild,
    BareMetalTarget,
    Config,
    Lane,
    ModelSpec,
    Profile,
    Registries,
    SysrootSpec,
    Toolchain,
    ToolRootSpec,
    Tools,
)
from crosslane.config.reader import Table
from crosslane.errors import ConfigError
from crosslane.files import bounded
from crosslane.registry import REFERABLE, suggestion

SCHEMA_VERSION = keys.SCHEMA_VERSION
MAX_CONFIG_BYTES = 1 << 20
DEFAULT_FILE = "versions.toml"
def _arch_config(arch: Arch, table: Table) -> ArchConfig:
    result = read_into(ArchConfig, table, arch, {"arch": arch})
    if table.has("components"):
        table.fail("components", "an arch's job is every component whose arches list it (components.<name>.arches); "
                                 "delete this list and name the arch there")
    table.finish()
    return result


def _toolroot(name: str, table: Table, sysroot: SysrootSpec) -> ToolRootSpec:
    """[toolroots.<name>]: a Debian suite's packages as a root of host tools (mmdebstrap, chroot)."""
    path_name(table, None, name, "tool root")
    spec = read_into(ToolRootSpec, table, sysroot, {"name": name})
    table.finish()
    return spec


MARCH_RE = re.compile(r"rv(32|64)[a-z][a-z0-9_]*")
BAREMETAL_ABIS = {"32": ("ilp32", "ilp32f", "ilp32d"), "64": ("lp64", "lp64f", "lp64d")}


def _baremetal(name: str, table: Table, toolroots: Mapping[str, ToolRootSpec]) -> BareMetalTarget:
    """[baremetal.<target>]: a RISC-V machine without an OS, its profiles and its builds (one -march each)."""
    path_name(table, None, name, "bare-metal target")
    toolroot = table.string("toolroot", required=True)
    if toolroot not in toolroots:
        table.fail("toolroot", f"unknown tool root '{toolroot}'{suggestion(toolroot, list(toolroots))}; "
                               "add a [toolroots.<name>] table")
    qemu = table.string("qemu", required=True)
    xlen = qemu[-2:]
    abi = table.string("abi", required=True)
    if abi not in BAREMETAL_ABIS[xlen]:
        table.fail("abi", f"'{abi}' is not an rv{xlen} ABI ({', '.join(BAREMETAL_ABIS[xlen])})")
    timeout = table.number("timeout")
    profiles_table = table.table("profiles", required=True)
    profiles = tuple(Profile(key, profiles_table.string(key)) for key in list(profiles_table.keys()))
    for profile in profiles:
        path_name(profiles_table, profile.name, profile.name, "profile")
        if not profile.cpu.startswith(f"rv{xlen}"):
            profiles_table.fail(profile.name, f"'{profile.cpu}' is not an rv{xlen} CPU for {qemu}")
    profiles_table.finish()
    builds = []
    builds_table = table.table("builds", required=True)
    for build_name, build in builds_table.subtables():
        path_name(builds_table, build_name, build_name, "build")
        march = build.string("march", required=True)
        if not MARCH_RE.fullmatch(march) or march[2:4] != xlen:
            build.fail("march", f"'{march}' is not an rv{xlen} -march such as rv{xlen}imafdc")
        runs_on, traps = build.strings("profiles"), build.strings("traps")
        for key, names in (("profiles", runs_on), ("traps", traps)):
            for index, wanted in enumerate(names):
                if wanted not in {p.name for p in profiles}:
                    Table({}, table.file, f"{build.path}.{key}").fail(
                        index, f"unknown profile '{wanted}' (known: {', '.join(p.name for p in profiles)})")
        exempt_table = build.table("exempt")
        exempt = {model: exempt_table.string(model) for model in list(exempt_table.keys())}
        for model, reason in exempt.items():
            if not reason.strip():
                exempt_table.fail(model, "an exemption states why the case cannot run here, measured")
        exempt_table.finish()
        builds.append(BareMetalBuild(build_name, march, runs_on, traps, MappingProxyType(exempt)))
        build.finish()
    if not builds:
        table.fail("builds", "no build; add one, e.g. scalar = { march = \"rv64imafdc\", profiles = [...] }")
    target = BareMetalTarget(name=name, toolroot=toolroot, qemu=qemu, abi=abi,
                             source=table.string("source", required=True), cases=table.string("cases", required=True),
                             timeout=timeout, profiles=profiles, builds=tuple(builds),
                             cmake_args=table.strings("cmake_args"))
    table.finish()
    return target


def _toolchain(name: str, table: Table) -> Toolchain:
    path_name(table, None, name, "toolchain")
    result = read_into(Toolchain, table, None, {"name": name})
    table.finish()
    return result


def _check_references(cfg_table: Table, toolchains: Mapping[str, Toolchain], arches: Mapping[Arch, ArchConfig],
                      components: Mapping[str, Component]) -> None:
    for arch, arch_cfg in arches.items():
        where = Table({}, cfg_table.file, f"arches.{arch}")
        if arch_cfg.toolchain not in toolchains:
            where.fail("toolchain", f"unknown toolchain '{arch_cfg.toolchain}' (known: {', '.join(toolchains)})")
    for name, component in components.items():
        deps = Table({}, cfg_table.file, f"components.{name}.depends")
        for index, dep in enumerate(component.depends):
            if dep not in components:
                deps.fail(index, f"unknown dependency '{dep}'{suggestion(dep, list(components))}")
        for arch, chosen in component.providers.items():
            where = Table({}, cfg_table.file, f"components.{name}.providers.{arch}")
            for dep, provider in chosen.items():
                if provider not in components:
                    where.fail(dep, f"unknown component '{provider}'{suggestion(provider, list(components))}")
                if arch not in components[provider].arches:
                    where.fail(dep, f"'{provider}' is not built for {arch} (components.{provider}.arches)")
        for arch, toolchain in component.toolchain.items():
            if toolchain not in toolchains:
                Table({}, cfg_table.file, f"components.{name}.toolchain").fail(
                    arch.value, f"unknown toolchain '{toolchain}' (known: {', '.join(toolchains)})")
    _check_cycles(cfg_table.file, components)


def _check_cycles(file: str, components: Mapping[str, Component]) -> None:
    """A depth-first walk with its own stack: a chain of a thousand dependencies is valid."""
    done: set[str] = set()
    for start in components:
        if start in done:
            continue
        trail = [start]
        pending = [iter(components[start].dependencies(None))]
        while pending:
            dep = next(pending[-1], None)
            if dep is None:
                done.add(trail.pop())
                pending.pop()
            elif dep in trail:
                cycle = [*trail[trail.index(dep):], dep]
                raise ConfigError(f"{file}: components.{cycle[0]}.depends: dependency cycle "
                                  f"{' -> '.join(cycle)}; remove one of these dependencies")
            elif dep not in done:
                trail.append(dep)
                pending.append(iter(components[dep].dependencies(None)))


def _lanes(table: Table, components: Mapping[str, Component]) -> Mapping[tuple[str, Arch], Lane]:
    lanes: dict[tuple[str, Arch], Lane] = {}
    for component, per_arch in table.subtables():
        if component not in components:
            table.fail(component, f"unknown component '{component}' (known: {', '.join(components)})")
        for arch_name, lane in per_arch.subtables():
            arch = read_arch(per_arch, arch_name, arch_name)
            lanes[(component, arch)] = read_into(Lane, lane, None, {"component": component, "arch": arch})
            lane.finish()
    return MappingProxyType(lanes)


def _shared_sources(file: str, components: dict[str, Component]) -> dict[str, Component]:
    """Fill in the sources of components that take another's (source_of)."""
    for name, component in list(components.items()):
        if not component.source_of:
            continue
        other = components.get(component.source_of)
        if other is None or other.source_of:
            Table({}, file, f"components.{name}").fail(
                "source_of", f"'{component.source_of}' is not a component with a source of its own")
        assert other is not None
        components[name] = dataclasses.replace(component, sources=other.sources)
    return components


def _pinned_requirements(table: Table, pins: Mapping[str, str]) -> tuple[str, ...]:
    """A host venv's requirements, each name==version (bare names from [pins]), so what it computes is
    reproducible."""
    return shorthand.pinned_requirements(table.strings("requirements"), pins,
                                         Table({}, table.file, f"{table.path}.requirements"))


def _hostenvs(table: Table, components: Mapping[str, Component]) -> dict[str, tuple[str, ...]]:
    found = {}
    for name, env in table.subtables():
        path_name(table, name, name, "host venv")
        found[name] = env.strings("requirements")  # pinned by shorthand.resolve_hostenvs
        env.finish()
    for name, component in components.items():
        for index, wanted in enumerate(component.hostenvs):
            if wanted not in found:
                Table({}, table.file, f"components.{name}.hostenvs").fail(
                    index, f"unknown host venv '{wanted}' (known: {', '.join(found) or 'none'}); "
                           f"add [hostenvs.{wanted}]")
    return found


def _model(name: str, table: Table, pins: Mapping[str, str]) -> ModelSpec:
    path_name(table, None, name, "model")
    spec = read_into(ModelSpec, table, pins, {"name": name},
                     {"requirements": lambda t, _key, pins, _read: _pinned_requirements(t, pins)})
    table.finish()
    return spec


def _check_scalars(data: dict[str, object], file: str) -> None:
    """What tomllib reads but no key of versions.toml can hold: integers beyond TOML's 64 bits (the spec makes
    them an error) and NUL characters (no name, path, argument or URL can carry one)."""
    pending: list[tuple[str, object]] = [("", data)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                inner = f"{where}.{key}" if where else key
                if "\0" in key:
                    raise ConfigError(f"{file}: {inner!r}: a key with a NUL character; remove it")
                pending.append((inner, item))
        elif isinstance(value, list):
            pending += [(f"{where}[{index}]", item) for index, item in enumerate(value)]
        elif isinstance(value, str) and "\0" in value:
            raise ConfigError(f"{file}: {where}: a string with a NUL character; remove it")
        elif isinstance(value, int) and not bounded.fits_int64(value):
            raise ConfigError(f"{file}: {where}: an integer of {value.bit_length()} bits, beyond TOML's 64-bit "
                              "range; write a smaller number")


def read_toml(text: str, file: str) -> dict[str, object]:
    """The file's text as TOML data, with nothing in it no key can hold (_check_scalars)."""
    if text.startswith("\ufeff"):
        raise ConfigError(f"{file}: line 1: starts with a byte-order mark, which TOML parsers refuse; save the file "
                          "as UTF-8 without one")
    try:
        data = tomlcompat.loads(text)
    except tomlcompat.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: invalid TOML: {exc}; fix the syntax") from exc
    except RecursionError:
        raise ConfigError(f"{file}: arrays or tables nested too deeply to read; fix the syntax") from None
    _check_scalars(data, file)
    return data


def parse(text: str, path: Path, root: Path | None = None, registries: Registries | None = None) -> Config:
    registries = registries or Registries.discover()
    return from_data(read_toml(text, path.name), path, (root or path.parent).resolve(), registries)


def from_data(data: dict[str, object], path: Path, root: Path, registries: Registries) -> Config:
    """The TOML data of *path* as the model, each section read in turn (the order decides which of two mistakes
    is named)."""
    file = path.name
    written = data.get("components")
    registries = registries.named(written if isinstance(written, dict) else {})
    pins = shorthand.read_pins(data, file)
    data = shorthand.resolve_hostenvs(shorthand.resolve_components(data, file, registries.smokes), file, pins)
    top = Table(data, file, section=document.declaration(registries.smokes, registries.recipes, registries.suites))
    top.table("args")  # read by shorthand.resolve_components
    top.table("pins")
    top.integer("schema")  # its declaration admits SCHEMA_VERSION only
    tools, host_packages, sysroot = _tools(top), _host_packages(top), _sysroot(top)
    toolchains, toolroots, read_arches = _machines(top, sysroot)
    components = _components(top, root, registries, pins, toolroots)
    sysroot = _with_components_packages(sysroot, components)
    arches = _jobs(read_arches, components)
    hostenvs = MappingProxyType(_hostenvs(top.table("hostenvs"), components))
    _check_references(top, toolchains, arches, components)
    _check_arches(file, components, arches)
    models = MappingProxyType({name: _model(name, t, pins) for name, t in top.table("models").subtables()})
    profile_names = {p.name for a in arches.values() for p in a.profiles}
    matrices = MappingProxyType({name: cases.read(name, t, profile_names)
                                 for name, t in top.table("cases").subtables()})
    _check_smokes(file, components, profile_names, matrices, models)
    baremetal = _baremetals(top, toolroots, components, matrices)
    lanes = _lanes(top.table("lanes"), components)
    exemptions, floors = _parity(top), _floors(top)
    top.finish()
    return Config(path=path, root=root, tools=tools, host_packages=host_packages, sysroot=sysroot,
                  toolchains=toolchains, arches=arches, components=components, lanes=lanes,
                  parity_exemptions=exemptions, floors=floors,
                  models=models, cases=matrices, hostenvs=hostenvs, toolroots=toolroots, baremetal=baremetal,
                  registries=registries)


def _tools(top: Table) -> Tools:
    tools_table = top.table("tools", required=True)
    tools = read_into(Tools, tools_table, None, {})
    tools_table.finish()
    return tools


def _host_packages(top: Table) -> tuple[str, ...]:
    host = top.table("host")
    packages = package_names(host, "packages")
    host.finish()
    return packages


def _sysroot(top: Table) -> SysrootSpec:
    sys_table = top.table("sysroot", required=True)
    sysroot = read_into(SysrootSpec, sys_table, None, {})
    sys_table.finish()
    return sysroot


def _machines(top: Table, sysroot: SysrootSpec) -> tuple[Mapping[str, Toolchain], Mapping[str, ToolRootSpec],
                                                         dict[Arch, ArchConfig]]:
    """[toolchains], [toolroots] and [arches] (their jobs still empty), each tool root they name checked."""
    file = top.file
    toolchains = MappingProxyType({name: _toolchain(name, t) for name, t in top.table("toolchains").subtables()})
    toolroots = MappingProxyType({name: _toolroot(name, t, sysroot) for name, t in top.table("toolroots").subtables()})
    arches_table = top.table("arches", required=True)
    read_arches = {read_arch(arches_table, name, name): _arch_config(Arch(name), t)
                   for name, t in arches_table.subtables()}
    for chain in toolchains.values():
        if chain.toolroot is not None and chain.toolroot not in toolroots:
            Table({}, file, f"toolchains.{chain.name}").fail(
                "toolroot", f"unknown tool root '{chain.toolroot}'{suggestion(chain.toolroot, list(toolroots))}; "
                            "add a [toolroots.<name>] table holding its cross compilers")
    for arch, arch_cfg in read_arches.items():
        if arch_cfg.emulator is not None and arch_cfg.emulator not in toolroots:
            Table({}, file, f"arches.{arch}").fail(
                "emulator", f"unknown tool root '{arch_cfg.emulator}'{suggestion(arch_cfg.emulator, list(toolroots))}; "
                            "add a [toolroots.<name>] table holding qemu-user")
    return toolchains, toolroots, read_arches


def _components(top: Table, root: Path, registries: Registries, pins: Mapping[str, str],
                toolroots: Mapping[str, ToolRootSpec]) -> Mapping[str, Component]:
    file = top.file
    components = MappingProxyType(_shared_sources(file, {name: read_component(name, t, root, registries, pins)
                                                         for name, t in top.table("components").subtables()}))
    for name, component in components.items():
        if component.toolroot and component.toolroot not in toolroots:
            Table({}, file, f"components.{name}").fail(
                "toolroot", f"unknown tool root '{component.toolroot}'{suggestion(component.toolroot, list(toolroots))}"
                            "; add a [toolroots.<name>] table")
        if component.toolroot and not component.rust:
            Table({}, file, f"components.{name}").fail("toolroot", "a tool root for Rust needs rust = true")
    return components


def _with_components_packages(sysroot: SysrootSpec, components: Mapping[str, Component]) -> SysrootSpec:
    # Every CPython a wheel is built for is in the sysroot (its headers, libpython and interpreter for FindPython):
    # stated once, in the component's wheel.pythons.
    wanted = [pkg for c in components.values() for v in c.wheel.pythons for pkg in (f"python{v}", f"libpython{v}-dev")]
    # A component's own build dependencies join its arches' sysroots (only while versions.toml declares it).
    needing = {*sysroot.arch_packages, *(arch for c in components.values() for arch in c.sysroot_packages)}
    arch_packages = {arch: tuple(dict.fromkeys((*sysroot.arch_packages.get(arch, ()),
                                                *(p for c in components.values()
                                                  for p in c.sysroot_packages.get(arch, ())))))
                     for arch in needing}
    return dataclasses.replace(sysroot, packages=tuple(dict.fromkeys((*sysroot.packages, *wanted))),
                               arch_packages=MappingProxyType(arch_packages))


def _jobs(read_arches: Mapping[Arch, ArchConfig], components: Mapping[str, Component]) -> Mapping[Arch, ArchConfig]:
    # An arch's job: the components that list it (but not those built only when named), in the order versions.toml
    # declares them.
    return MappingProxyType({arch: dataclasses.replace(arch_cfg, components=tuple(
        name for name, component in components.items() if arch in component.arches and component.job))
        for arch, arch_cfg in read_arches.items()})


def _check_arches(file: str, components: Mapping[str, Component], arches: Mapping[Arch, ArchConfig]) -> None:
    for name, component in components.items():
        for index, arch in enumerate(component.arches):
            if arch not in arches:
                Table({}, file, f"components.{name}.arches").fail(
                    index, f"arch '{arch}' has no [arches.{arch}] table; add one")


def _check_refs(file: str, name: str, component: Component, tables: Mapping[str, Mapping[str, object]]) -> None:
    """Each entry a smoke's options name (registry.Option.refers) is in its top-level table."""
    for ref in component.smoke.refs if component.smoke else ():
        known = tables[ref.table]
        if ref.name not in known:
            Table({}, file, f"components.{name}.smoke").fail(
                ref.key, f"unknown {REFERABLE[ref.table]} '{ref.name}' (known: {', '.join(known) or 'none'}); "
                         f"add a [{ref.table}.<name>] table")


def _check_smokes(file: str, components: Mapping[str, Component], profile_names: set[str],
                  matrices: Mapping[str, cases.CaseMatrix], models: Mapping[str, ModelSpec]) -> None:
    for name, component in components.items():
        unknown = [p for p in (component.smoke.profiles if component.smoke else ()) if p not in profile_names]
        if unknown:
            Table({}, file, f"components.{name}.smoke").fail(
                "profiles", f"unknown CPU profile(s) {', '.join(unknown)} (known: {', '.join(sorted(profile_names))})")
    for name, component in components.items():
        _check_refs(file, name, component, {"models": models, "cases": matrices})


def _baremetals(top: Table, toolroots: Mapping[str, ToolRootSpec], components: Mapping[str, Component],
                matrices: Mapping[str, cases.CaseMatrix]) -> Mapping[str, BareMetalTarget]:
    file = top.file
    baremetal_table = top.table("baremetal")
    baremetal = MappingProxyType({name: _baremetal(name, t, toolroots) for name, t in baremetal_table.subtables()})
    for name, target in baremetal.items():
        where = Table({}, file, f"baremetal.{name}")
        if target.source not in components or not isinstance(components[target.source].sources[0], GitSource):
            where.fail("source", f"'{target.source}' is not a component with a pinned git source")
        if target.cases not in matrices:
            where.fail("cases", f"unknown case matrix '{target.cases}' (known: {', '.join(matrices) or 'none'})")
        case_models = matrices[target.cases].models
        for build in target.builds:
            for model in build.exempt:
                if model not in case_models:
                    Table({}, file, f"baremetal.{name}.builds.{build.name}.exempt").fail(
                        model, f"'{model}' is no model of [cases.{target.cases}] (known: {', '.join(case_models)}); "
                               "delete the exemption")
    return baremetal


def _parity(top: Table) -> Mapping[str, str]:
    parity = top.table("parity")
    exemptions_table = parity.table("exemptions")
    exemptions = {key: exemptions_table.string(key) for key in list(exemptions_table.keys())}
    for key in exemptions:
        arch_name, sep, dist = key.partition(":")
        if not sep or not dist:
            exemptions_table.fail(key, "expected \"arch:distribution\" = \"reason\"")
        read_arch(exemptions_table, key, arch_name)
    parity.finish()
    return MappingProxyType(exemptions)


def _floors(top: Table) -> Mapping[Arch, int]:
    floors_table = top.table("floors")
    floors = {read_arch(floors_table, key, key): floors_table.integer(key) for key in list(floors_table.keys())}
    floors_table.finish()
    return MappingProxyType(floors)


def load(path: Path | None = None, registries: Registries | None = None) -> Config:
    path = path or find_config()
    data = bounded.read_bytes(path, limit=MAX_CONFIG_BYTES, error=ConfigError,
                              fix="run from the repository root or pass the path of a versions.toml with --config")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{path.name}: line {line}: not UTF-8 (byte {data[exc.start]:#04x}); save the file as "
                          "UTF-8") from None
    return parse(text, path, registries=registries)


def find_config(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / DEFAULT_FILE
        if candidate.is_file():
            return candidate
    raise ConfigError(f"{DEFAULT_FILE}: not found in {here} or its parents; run from the crosslane checkout")
