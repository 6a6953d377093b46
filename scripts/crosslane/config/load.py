"""versions.toml (schema v1) parsed into the model (model.py) and validated on load: one-line errors."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from crosslane.archs import KNOWN_ARCHS, Arch
from crosslane.config import tomlcompat
from crosslane.config.model import (
    ArchConfig,
    Component,
    Config,
    Lane,
    ModelSpec,
    PatchSpec,
    Profile,
    Registries,
    SmokeSpec,
    SourceSpec,
    SysrootSpec,
    Toolchain,
    Tools,
)
from crosslane.config.reader import Table
from crosslane.errors import ConfigError
from crosslane.host import OPTIONS
from crosslane.models import CONVERTERS, PRECISIONS
from crosslane.registry import suggestion

SCHEMA_VERSION = 1
MAX_CONFIG_BYTES = 1 << 20
DEFAULT_FILE = "versions.toml"
# sysroot-package: the component is a Debian package already in the target sysroot; nothing is built.
SOURCE_KINDS = ("tree", "git", "archive", "debian", "sysroot-package")
# Kinds that name fixed content by a pin, so another of them can mirror it.
PINNED_KINDS = ("git", "archive", "debian")
TOOLCHAIN_FAMILIES = ("gcc", "clang", "zig")
NAME_RE = re.compile(r"[A-Za-z0-9_]+")
# Names that become paths (components, profiles, toolchains, models): a conservative set, so no name can
# climb out of build/ or the cache ("../../x"), hide (".x") or need quoting.
PATH_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")


def _path_name(table: Table, key: str | None, name: str, what: str) -> None:
    if not PATH_NAME_RE.fullmatch(name) or ".." in name:
        table.fail(key, f"{what} name {name!r} must be 1–64 letters, digits, '.', '_', '+' or '-', starting with a "
                        "letter or digit (it becomes a folder name)")
# The values a per-component feature option (components.<name>.options, host.OPTIONS) may take.
OPTION_VALUES = ("auto", "on", "off")



def _arch(table: Table, key: str | int, value: str) -> Arch:
    if value not in KNOWN_ARCHS:
        table.fail(key, f"unknown arch '{value}' (known: {', '.join(KNOWN_ARCHS)})")
    return Arch(value)


def _arch_list(table: Table, key: str) -> tuple[Arch, ...]:
    values = table.strings(key)
    sub = Table({}, table.file, table.where(key))
    return tuple(_arch(sub, index, value) for index, value in enumerate(values))


def _per_arch_strings(table: Table, key: str) -> Mapping[Arch, tuple[str, ...]]:
    sub = table.table(key)
    result = {_arch(sub, name, name): sub.strings(name) for name in list(sub.keys())}
    sub.finish()
    return MappingProxyType(result)


def _repo_path(table: Table, key: str, value: str, root: Path, inside: str = "") -> Path:
    pure = PurePosixPath(value)
    resolved = (root / inside / value).resolve()
    base = (root / inside).resolve()
    if pure.is_absolute() or not resolved.is_relative_to(base):
        table.fail(key, f"path '{value}' escapes {inside.rstrip('/') or 'the repository'}; use a path inside {base}")
    return resolved


def _source(table: Table, root: Path) -> SourceSpec:
    kind = table.string("kind", required=True)
    if kind not in SOURCE_KINDS:
        table.fail("kind", f"unknown source kind '{kind}'{suggestion(kind, SOURCE_KINDS)}")
    spec: SourceSpec
    match kind:
        case "tree":
            path = _repo_path(table, "path", table.string("path", required=True), root)
            if not path.is_dir():
                table.fail("path", f"'{path.relative_to(root.resolve())}' is not a folder; create it or fix the path")
            spec = SourceSpec(kind, path=path)
        case "git":
            commit = table.string("commit", required=True)
            if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
                table.fail("commit", f"'{commit}' is not a full 40-hex commit; pin the full hash")
            spec = SourceSpec(kind, url=table.string("url", required=True),
                              tag=table.optional_string("tag"), commit=commit,
                              absent_ok=table.strings("absent_ok"))
        case "archive":
            url = table.string("url", required=True)
            if not table.has("sha256"):
                table.fail(None, f"archive '{url}' has no sha256; add sha256 = \"…\" (no checksum, no fetch)")
            spec = SourceSpec(kind, url=url, sha256=_sha256(table, "sha256"))
        case "sysroot-package":
            spec = SourceSpec(kind, package=table.string("package", required=True))
        case _:
            spec = SourceSpec(kind, package=table.string("package", required=True),
                              version=table.string("version", required=True),
                              url=table.optional_string("mirror"), suite=table.optional_string("suite"))
    table.finish()
    return spec


def _sha256(table: Table, key: str) -> str:
    value = table.string(key, required=True)
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        table.fail(key, f"'{value}' is not a sha256 (64 lowercase hex digits)")
    return value


def _source_with_mirrors(table: Table, root: Path) -> tuple[SourceSpec, ...]:
    sources = [_source(table.table("source"), root)]
    for mirror_table in table.tables("mirrors"):
        mirror = _source(mirror_table, root)
        if mirror.kind not in PINNED_KINDS:
            mirror_table.fail("kind", f"a mirror must be pinned content ({', '.join(PINNED_KINDS)}), not "
                              f"'{mirror.kind}'")
        sources.append(mirror)
    return tuple(sources)


def _fetchcontent(table: Table, root: Path) -> Mapping[str, tuple[SourceSpec, ...]]:
    deps = {}
    for name, dep in table.table("fetchcontent").subtables():
        if not NAME_RE.fullmatch(name):
            table.fail(f"fetchcontent.{name}", "a FetchContent name is letters, digits and _ (as CMake declares it)")
        if not dep.has("source"):
            dep.fail(None, "missing required key 'source'; add the pinned source CMake would have downloaded")
        sources = _source_with_mirrors(dep, root)
        if sources[0].kind not in PINNED_KINDS:
            dep.fail("source", f"a FetchContent dependency must be pinned ({', '.join(PINNED_KINDS)}), not "
                     f"'{sources[0].kind}'")
        dep.finish()
        deps[name] = sources
    return MappingProxyType(deps)


def _links(table: Table) -> Mapping[str, str]:
    sub = table.table("links")
    links = {key: sub.string(key) for key in list(sub.keys())}
    for key, value in links.items():
        if not NAME_RE.fullmatch(key) or PurePosixPath(value).is_absolute() or ".." in PurePosixPath(value).parts:
            sub.fail(key, f"'{key}' = '{value}': a link is a plain name pointing to a relative path in the sysroot")
    sub.finish()
    return MappingProxyType(links)


def _component(name: str, table: Table, root: Path, registries: Registries) -> Component:
    _path_name(table, None, name, "component")
    if not table.has("source"):
        table.fail(None, "missing required key 'source'; add source = { kind = \"tree\", path = \"components/"
                   f"{name}\" }} or a pinned git/archive/debian source")
    sources = _source_with_mirrors(table, root)
    provided = sources[0].kind == "sysroot-package"
    recipe = table.string("recipe", "provided" if provided else "cmake")
    if recipe not in registries.recipes:
        table.fail("recipe", registries.recipes.unknown(recipe))
    if (recipe == "provided") != provided:
        table.fail("recipe", f"recipe '{recipe}' and source kind '{sources[0].kind}' do not go together: "
                   "the 'provided' recipe is exactly for sysroot-package sources")
    toolchain_table = table.table("toolchain")
    toolchain = {_arch(toolchain_table, key, key): toolchain_table.string(key) for key in list(toolchain_table.keys())}
    toolchain_table.finish()
    smoke = None
    if table.has("smoke"):
        smoke_table = table.table("smoke")
        kind = smoke_table.string("kind", required=True)
        if kind not in registries.smokes:
            smoke_table.fail("kind", registries.smokes.unknown(kind))
        timeout = smoke_table.number("timeout", 120.0)
        if timeout <= 0:
            smoke_table.fail("timeout", f"{timeout:g} is not a positive number of seconds")
        smoke = SmokeSpec(kind=kind, timeout=timeout, model=smoke_table.optional_string("model"))
        smoke_table.finish()
    patches = []
    for patch_table in table.tables("patches"):
        rel = patch_table.string("path", required=True)
        path = _repo_path(patch_table, "path", rel, root, inside="patches/")
        when = patch_table.table("when")
        arches = _arch_list(when, "arch") if when.has("arch") else tuple(Arch)
        when.finish()
        strip = patch_table.integer("strip", 1)
        if strip not in (0, 1):
            patch_table.fail("strip", f"{strip}: crosslane applies patches with -p0 or -p1")
        patches.append(PatchSpec(path=path, sha256=_sha256(patch_table, "sha256"), arches=arches, strip=strip))
        patch_table.finish()
    component = Component(
        name=name,
        sources=tuple(sources),
        arches=_arch_list(table, "arches"),
        depends=table.strings("depends"),
        recipe=recipe,
        source_subdir=table.string("source_subdir", ""),
        cmake_args=table.strings("cmake_args"),
        arch_cmake_args=_per_arch_strings(table, "arch_cmake_args"),
        toolchain=MappingProxyType(toolchain),
        smoke=smoke,
        patches=tuple(patches),
        options=_options(table),
        rust=table.boolean("rust", False),
        rust_options=table.strings("rust_options"),
        host_tools=table.strings("host_tools"),
        distribution=table.optional_string("distribution"),
        fetchcontent=_fetchcontent(table, root),
        links=_links(table),
        provenance=_provenance(table),
    )
    table.finish()
    return component


def _provenance(table: Table) -> Mapping[str, str]:
    sub = table.table("provenance")
    depends = table.strings("depends")
    result = {}
    for key in list(sub.keys()):
        dependency = sub.string(key)
        if dependency not in depends:
            sub.fail(key, f"'{dependency}' is not one of this component's depends ({', '.join(depends) or 'none'})")
        result[key] = dependency
    sub.finish()
    return MappingProxyType(result)


def _options(table: Table) -> Mapping[str, str]:
    sub = table.table("options")
    result = {}
    for key in list(sub.keys()):
        if key not in OPTIONS:
            sub.fail(key, OPTIONS.unknown(key))
        value = sub.string(key)
        if value not in OPTION_VALUES:
            sub.fail(key, f"'{value}' is not one of {', '.join(OPTION_VALUES)}")
        result[key] = value
    sub.finish()
    return MappingProxyType(result)



def _arch_config(arch: Arch, table: Table) -> ArchConfig:
    profiles_table = table.table("profiles", required=True)
    profiles = tuple(Profile(name, profiles_table.string(name)) for name in list(profiles_table.keys()))
    for profile in profiles:
        _path_name(profiles_table, profile.name, profile.name, "profile")
    profiles_table.finish()
    if not profiles:
        table.fail("profiles", "no qemu CPU profile; add at least one, e.g. default = \"max\"")
    for profile in profiles:
        where = f"profiles.{profile.name}"
        if profile.vector_enabled(arch) and "vlen" not in profile.properties:
            table.fail(where, f"'{profile.cpu}' enables the vector unit without vlen=N; state the VLEN "
                       "(qemu versions disagree on the default)")
        vlen = profile.properties.get("vlen", "64")
        if not vlen.isdigit() or int(vlen) < 64 or int(vlen) & (int(vlen) - 1):
            table.fail(where, f"vlen={vlen} in '{profile.cpu}' is not a power of two >= 64")
    default = table.string("default_profile", profiles[0].name)
    if default not in {p.name for p in profiles}:
        table.fail("default_profile", f"unknown profile '{default}' (known: {', '.join(p.name for p in profiles)})")
    result = ArchConfig(arch=arch, toolchain=table.string("toolchain", required=True),
                        components=table.strings("components"), profiles=profiles, default_profile=default)
    table.finish()
    return result


def _toolchain(name: str, table: Table) -> Toolchain:
    _path_name(table, None, name, "toolchain")
    family = table.string("family", required=True)
    if family not in TOOLCHAIN_FAMILIES:
        table.fail("family", f"unknown toolchain family '{family}' (known: {', '.join(TOOLCHAIN_FAMILIES)})")
    version = table.integer("version", 0) or None
    result = Toolchain(name=name, family=family, version=version, packages=_per_arch_strings(table, "packages"))
    table.finish()
    return result


def _check_references(cfg_table: Table, toolchains: Mapping[str, Toolchain], arches: Mapping[Arch, ArchConfig],
                      components: Mapping[str, Component]) -> None:
    for arch, arch_cfg in arches.items():
        where = Table({}, cfg_table.file, f"arches.{arch}")
        if arch_cfg.toolchain not in toolchains:
            where.fail("toolchain", f"unknown toolchain '{arch_cfg.toolchain}' (known: {', '.join(toolchains)})")
        for index, name in enumerate(arch_cfg.components):
            if name not in components:
                Table({}, cfg_table.file, f"arches.{arch}.components").fail(
                    index, f"unknown component '{name}' (known: {', '.join(components)})")
            if arch not in components[name].arches:
                Table({}, cfg_table.file, f"arches.{arch}.components").fail(
                    index, f"component '{name}' is not built for {arch}; add it to components.{name}.arches")
    for name, component in components.items():
        deps = Table({}, cfg_table.file, f"components.{name}.depends")
        for index, dep in enumerate(component.depends):
            if dep not in components:
                deps.fail(index, f"unknown dependency '{dep}'{suggestion(dep, list(components))}")
        for arch, toolchain in component.toolchain.items():
            if toolchain not in toolchains:
                Table({}, cfg_table.file, f"components.{name}.toolchain").fail(
                    arch.value, f"unknown toolchain '{toolchain}' (known: {', '.join(toolchains)})")
    _check_cycles(cfg_table.file, components)


def _check_cycles(file: str, components: Mapping[str, Component]) -> None:
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = [*trail[trail.index(name):], name]
            raise ConfigError(f"{file}: components.{cycle[0]}.depends: dependency cycle "
                              f"{' -> '.join(cycle)}; remove one of these dependencies")
        state[name] = 1
        for dep in components[name].depends:
            visit(dep, [*trail, name])
        state[name] = 2

    for name in components:
        visit(name, [])


def _lanes(table: Table, components: Mapping[str, Component]) -> Mapping[tuple[str, Arch], Lane]:
    lanes: dict[tuple[str, Arch], Lane] = {}
    for component, per_arch in table.subtables():
        if component not in components:
            table.fail(component, f"unknown component '{component}' (known: {', '.join(components)})")
        for arch_name, lane in per_arch.subtables():
            arch = _arch(per_arch, arch_name, arch_name)
            lanes[(component, arch)] = Lane(component, arch, enabled=lane.boolean("enabled", True),
                                            experimental=lane.boolean("experimental", False),
                                            reason=lane.string("reason", ""))
            lane.finish()
    return MappingProxyType(lanes)


def _model(name: str, table: Table) -> ModelSpec:
    _path_name(table, None, name, "model")
    converter = table.string("converter", required=True)
    if converter not in CONVERTERS:
        table.fail("converter", f"unknown converter '{converter}' (known: {', '.join(CONVERTERS)})")
    precision = table.string("precision", "fp32")
    if precision not in PRECISIONS:
        table.fail("precision", f"'{precision}' is not one of {', '.join(PRECISIONS)}")
    member = table.string("member", required=True)
    if PurePosixPath(member).is_absolute() or ".." in PurePosixPath(member).parts:
        table.fail("member", f"'{member}' must be a relative path inside the wheel")
    new_tokens = table.integer("new_tokens", 16)
    if not 1 <= new_tokens <= 256:
        table.fail("new_tokens", f"{new_tokens} is outside 1..256")
    requirements = table.strings("requirements")
    for index, requirement in enumerate(requirements):
        if "==" not in requirement:
            Table({}, table.file, f"{table.path}.requirements").fail(
                index, f"'{requirement}' is not pinned; write name==version so the conversion is reproducible")
    spec = ModelSpec(name=name, distribution=table.string("distribution", required=True),
                     version=table.string("version", required=True), member=member,
                     sha256=_sha256(table, "sha256"), converter=converter, precision=precision,
                     requirements=requirements, prompt=table.string("prompt", required=True),
                     new_tokens=new_tokens)
    table.finish()
    return spec


def parse(text: str, path: Path, root: Path | None = None, registries: Registries | None = None) -> Config:
    registries = registries or Registries()
    file = path.name
    root = (root or path.parent).resolve()
    try:
        data = tomlcompat.loads(text)
    except tomlcompat.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: invalid TOML: {exc}; fix the syntax") from exc
    except RecursionError:
        raise ConfigError(f"{file}: arrays or tables nested too deeply to read; fix the syntax") from None
    top = Table(data, file)
    schema = top.integer("schema", 0)
    if schema != SCHEMA_VERSION:
        top.fail("schema", f"unsupported schema {schema}; this crosslane reads schema = {SCHEMA_VERSION}")
    tools_table = top.table("tools", required=True)
    tools = Tools(cmake=tools_table.string("cmake", required=True), ninja=tools_table.string("ninja", required=True))
    tools_table.finish()
    host = top.table("host")
    host_packages = host.strings("packages")
    host.finish()
    sys_table = top.table("sysroot", required=True)
    sysroot = SysrootSpec(
        suite=sys_table.string("suite", "trixie"),
        mirror=sys_table.string("mirror", "http://deb.debian.org/debian"),
        keyring=sys_table.string("keyring", "/usr/share/keyrings/debian-archive-keyring.gpg"),
        packages=sys_table.strings("packages"),
        arch_packages=_per_arch_strings(sys_table, "arch_packages"),
    )
    sys_table.finish()
    toolchains = MappingProxyType({name: _toolchain(name, t) for name, t in top.table("toolchains").subtables()})
    arches_table = top.table("arches", required=True)
    arches = MappingProxyType({_arch(arches_table, name, name): _arch_config(Arch(name), t)
                               for name, t in arches_table.subtables()})
    components = MappingProxyType({name: _component(name, t, root, registries)
                                   for name, t in top.table("components").subtables()})
    _check_references(top, toolchains, arches, components)
    for name, component in components.items():
        for index, arch in enumerate(component.arches):
            if arch not in arches:
                Table({}, file, f"components.{name}.arches").fail(
                    index, f"arch '{arch}' has no [arches.{arch}] table; add one")
    models = MappingProxyType({name: _model(name, t) for name, t in top.table("models").subtables()})
    for name, component in components.items():
        if component.smoke and component.smoke.model and component.smoke.model not in models:
            Table({}, file, f"components.{name}.smoke").fail(
                "model", f"unknown model '{component.smoke.model}' (known: {', '.join(models) or 'none'}); "
                         "add a [models.<name>] table")
    lanes = _lanes(top.table("lanes"), components)
    parity = top.table("parity")
    exemptions_table = parity.table("exemptions")
    exemptions = {key: exemptions_table.string(key) for key in list(exemptions_table.keys())}
    for key in exemptions:
        arch_name, sep, dist = key.partition(":")
        if not sep or not dist:
            exemptions_table.fail(key, "expected \"arch:distribution\" = \"reason\"")
        _arch(exemptions_table, key, arch_name)
    parity.finish()
    floors_table = top.table("floors")
    floors = {_arch(floors_table, key, key): floors_table.integer(key, 0) for key in list(floors_table.keys())}
    for arch, floor in floors.items():
        if floor < 0:
            floors_table.fail(arch.value, f"{floor} is negative; a floor counts components, 0 or more")
    floors_table.finish()
    top.finish()
    return Config(path=path, root=root, tools=tools, host_packages=host_packages, sysroot=sysroot,
                  toolchains=toolchains, arches=arches, components=components, lanes=lanes,
                  parity_exemptions=MappingProxyType(exemptions), floors=MappingProxyType(floors),
                  models=models, registries=registries)


def load(path: Path | None = None, registries: Registries | None = None) -> Config:
    path = path or find_config()
    try:
        if path.exists() and not path.is_file():  # a FIFO or a device would block or never end
            raise ConfigError(f"{path}: not a regular file", fix="pass the path of a versions.toml with --config")
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror}); run from the repository root or pass --config") \
            from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES // 1024} KiB; is this versions.toml?")
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
