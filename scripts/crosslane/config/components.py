"""[components.*] read into Component: sources (with mirrors and FetchContent pins), patches, smoke,
options, links and provenance."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from crosslane.archs import Arch, info
from crosslane.config import keys, shorthand
from crosslane.config.fields import (
    DEBIAN_VERSION_RE,
    GIT_REF_RE,
    NAME_RE,
    PINNED_KINDS,
    arch_list,
    package_name,
    package_names,
    path_name,
    per_arch_strings,
    read_arch,
    relative_paths,
    repo_path,
    sha256,
    url,
)
from crosslane.config.model import (
    ArchiveSource,
    Component,
    Constrained,
    DebianSource,
    GitSource,
    PatchSpec,
    PinnedSource,
    Ref,
    Registries,
    SmokeSpec,
    SourceSpec,
    SuiteSpec,
    SysrootPackage,
    TreeSource,
    WheelSpec,
)
from crosslane.config.reader import Table
from crosslane.registry import DEFAULT_RECIPE, OPTIONS, Option, suggestion


def _source(table: Table, root: Path) -> SourceSpec:
    kind = table.string("kind")
    spec: SourceSpec
    match kind:
        case "tree":
            path = repo_path(table, "path", table.string("path", required=True), root)
            if not path.is_dir():
                table.fail("path", f"'{path.relative_to(root.resolve())}' is not a folder; create it or fix the path")
            spec = TreeSource(path=path)
        case "git":
            commit = table.string("commit", required=True)  # 40 hex digits: its declaration (keys.COMMIT)
            submodules = table.strings("submodules")
            for index, sub in enumerate(submodules):
                pure = PurePosixPath(sub)
                if not sub or pure.is_absolute() or ".." in pure.parts:
                    Table({}, table.file, f"{table.path}.submodules").fail(
                        index, f"'{sub}' is not a relative path inside the tree")
            substitutes: list[tuple[str, str, str]] = []
            subs_table = table.table("substitutes")
            for sub_path, entry in subs_table.subtables():
                if sub_path not in submodules:
                    subs_table.fail(sub_path, "substitutes only a submodule listed in submodules")
                sub_commit = entry.string("commit", required=True)  # keys.COMMIT
                substitutes.append((sub_path, sub_commit, entry.string("reason", required=True)))
                entry.finish()
            tag = table.optional_string("tag")
            if tag is not None and (not GIT_REF_RE.fullmatch(tag) or ".." in tag or tag.endswith((".lock", "/"))):
                table.fail("tag", f"'{tag}' is not a git tag name")
            spec = GitSource(url=url(table, "url"), tag=tag, commit=commit,
                             absent_ok=table.strings("absent_ok"), submodules=submodules,
                             substitutes=tuple(substitutes))
        case "archive":
            if not table.has("sha256"):
                table.fail(None, f"archive '{table.data.get('url')}' has no sha256; add sha256 = \"…\" (no checksum, "
                                 "no fetch)")
            spec = ArchiveSource(url=url(table, "url"), sha256=sha256(table, "sha256"))
        case "sysroot-package":
            spec = SysrootPackage(package=package_name(table, "package"))
        case _:
            version = table.string("version", required=True)
            if not DEBIAN_VERSION_RE.fullmatch(version):
                table.fail("version", f"'{version}' is not a Debian version")
            spec = DebianSource(package=package_name(table, "package"), version=version,
                                mirror=url(table, "mirror") if table.has("mirror") else None,
                                suite=table.optional_string("suite"))
    table.finish()
    return spec


def _source_with_mirrors(table: Table, root: Path) -> tuple[SourceSpec, ...]:
    sources = [_source(table.table("source"), root)]
    for mirror_table in table.tables("mirrors"):
        mirror = _source(mirror_table, root)
        if mirror.kind not in PINNED_KINDS:
            mirror_table.fail("kind", f"a mirror must be pinned content ({', '.join(PINNED_KINDS)}), not "
                              f"'{mirror.kind}'")
        sources.append(mirror)
    return tuple(sources)


def _patches(table: Table, root: Path) -> tuple[PatchSpec, ...]:
    """A `patches` list (a component's, or a FetchContent dependency's): files under patches/, pinned by sha256."""
    patches = []
    for patch_table in table.tables("patches"):
        rel = patch_table.string("path", required=True)
        path = repo_path(patch_table, "path", rel, root, inside="patches/")
        when = patch_table.table("when")
        arches = arch_list(when, "arch") if when.has("arch") else tuple(Arch)
        when.finish()
        strip = patch_table.integer("strip")
        if strip not in (0, 1):
            patch_table.fail("strip", f"{strip}: crosslane applies patches with -p0 or -p1")
        patches.append(PatchSpec(path=path, sha256=sha256(patch_table, "sha256"), arches=arches, strip=strip))
        patch_table.finish()
    return tuple(patches)


def _fetchcontent(table: Table, root: Path) -> tuple[Mapping[str, tuple[PinnedSource, ...]],
                                                     Mapping[str, tuple[PatchSpec, ...]]]:
    """Each FetchContent dependency's pinned sources, and the patches applied to a per-arch copy of it."""
    deps, patched = {}, {}
    for name, dep in table.table("fetchcontent").subtables():
        if not NAME_RE.fullmatch(name):
            table.fail(f"fetchcontent.{name}", "a FetchContent name is letters, digits and _ (as CMake declares it)")
        if not dep.has("source"):
            dep.fail(None, "missing required key 'source'; add the pinned source CMake would have downloaded")
        sources = _source_with_mirrors(dep, root)
        pinned = tuple(s for s in sources if isinstance(s, PinnedSource))
        if len(pinned) != len(sources):
            dep.fail("source", f"a FetchContent dependency must be pinned ({', '.join(PINNED_KINDS)}), not "
                     f"'{sources[0].kind}'")
        specs = _patches(dep, root)
        if specs:
            patched[name] = specs
        dep.finish()
        deps[name] = pinned
    return MappingProxyType(deps), MappingProxyType(patched)


GUIDANCE_KINDS = ("regex", "json_schema", "lark_grammar")  # what genai's set_guidance takes


def _constrained(smoke: Table, key: str) -> Constrained:
    sub = smoke.table(key)
    kind = sub.string("kind", required=True)
    if kind == "regex":
        try:
            re.compile(sub.string("data", required=True))
        except re.error as exc:
            sub.fail("data", f"not a regular expression: {exc}")
    new_tokens = sub.integer("new_tokens")
    found = Constrained(kind=kind, data=sub.string("data", required=True), prompt=sub.string("prompt", required=True),
                        new_tokens=new_tokens)
    sub.finish()
    return found


CRATE_RE = re.compile(r"[A-Za-z0-9_-]+-[0-9][A-Za-z0-9.+-]*")


def _crates(table: Table) -> Mapping[str, str]:
    sub = table.table("crates")
    found = {key: sha256(sub, key) for key in list(sub.keys())}
    for key in found:
        if not CRATE_RE.fullmatch(key):
            sub.fail(key, f"'{key}' is not a crate as Cargo.lock names it (<name>-<version>)")
    sub.finish()
    if found and not table.string("toolroot"):
        table.fail("crates", "crates are pinned in the tool root a component takes its Rust from; set toolroot")
    return MappingProxyType(found)


def _compiled(table: Table) -> Mapping[str, str]:
    sub = table.table("compiled")
    found = {key: sub.string(key) for key in list(sub.keys())}
    for key, symbol in found.items():
        if not NAME_RE.fullmatch(key) or not NAME_RE.fullmatch(symbol):
            sub.fail(key, f"'{key}' = '{symbol}': a feature name and the C symbol that proves it (letters, digits, _)")
    sub.finish()
    return MappingProxyType(found)


PYTHON_RE = re.compile(keys.PYTHON.removeprefix("^").removesuffix("$"))
SUITE_RE = re.compile(r"[a-z][a-z0-9-]{1,30}")
SYMVER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*@[A-Z]+_[0-9]+(?:\.[0-9]+)*")
LIBRARY_RE = re.compile(keys.LIBRARY.removeprefix("^").removesuffix("$"))


def _makes_wheels(table: Table, registries: Registries) -> bool:
    entry = registries.recipes.entries.get(table.optional_string("recipe") or "")
    return entry is not None and entry.wheels


def _wheel(table: Table, registries: Registries) -> WheelSpec:
    sub = table.table("wheel")
    pythons = sub.strings("pythons")
    for index, version in enumerate(pythons):
        if not PYTHON_RE.fullmatch(version):
            sub.fail("pythons", f"entry {index}: '{version}' is not a CPython version such as \"3.14\"")
    if len(set(pythons)) != len(pythons):
        sub.fail("pythons", "a CPython is listed twice")
    bundle = per_arch_strings(sub, "bundle")
    for arch, names in bundle.items():
        for name in names:
            if not LIBRARY_RE.fullmatch(name):
                sub.fail("bundle", f"{arch}: '{name}' is not a shared library file name (lib<name>.so[.N…])")
    drop = per_arch_strings(sub, "drop_requires")
    for arch in drop:
        if not bundle.get(arch):
            sub.fail("drop_requires", f"{arch}: a requirement is dropped only for a library the wheel bundles; set "
                                      f"bundle.{arch}")
    symbols = per_arch_strings(sub, "symbol_versions")
    for arch, pins in symbols.items():
        for pin in pins:
            if not SYMVER_RE.fullmatch(pin):
                sub.fail("symbol_versions", f"{arch}: '{pin}' is not symbol@VERSION (log10f@GLIBC_2.2.5)")
    suites_table = sub.table("install_suites")
    suites = {key: suites_table.string(key) for key in list(suites_table.keys())}
    for version, suite in suites.items():
        if version not in pythons or not SUITE_RE.fullmatch(suite):
            suites_table.fail(version, f"'{version}' = '{suite}': a CPython of pythons and the Debian suite whose "
                                       "system Python it is")
    suites_table.finish()
    spec = WheelSpec(pythons=pythons, bundle=bundle, drop_requires=drop, repair=sub.boolean("repair"),
                     symbol_versions=symbols,
                     install_suites=MappingProxyType(suites), install_packages=package_names(sub, "install_packages"))
    sub.finish()
    if sub.data and not _makes_wheels(table, registries):
        wheeled = [name for name, entry in registries.recipes.entries.items() if entry.wheels]
        table.fail("wheel", f"a [wheel] table is read by the {' or '.join(wheeled)} recipe only; "
                            f"set recipe = \"{wheeled[0]}\"")
    return spec


TEST_ID_RE = re.compile(r"[^\s\x00-\x1f]{1,400}")
TEST_FILE_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*\.py")


def _tests(table: Table, root: Path, pins: Mapping[str, str], registries: Registries) -> SuiteSpec | None:
    # `tests = false`: a variant (extends) that does not run the suite its parent declares.
    if table.has("tests") and table.data["tests"] is False:
        table.boolean("tests", False)
        return None
    if not table.has("tests"):
        return None
    sub = table.table("tests")
    kind = sub.string("kind", required=True)
    if kind not in registries.suites:
        sub.fail("kind", registries.suites.unknown(kind))
    timeout = sub.number("timeout")
    regex = sub.string("regex")  # a regular expression: its declaration
    paths = sub.strings("paths")
    for index, path in enumerate(paths):
        if not TEST_FILE_RE.fullmatch(path) or ".." in PurePosixPath(path).parts:
            Table({}, sub.file, sub.where("paths")).fail(index, f"'{path}' is not a test file inside the source "
                                                                "(a relative path ending in .py)")
    exempt_table = sub.table("exempt")
    exempt: dict[Arch, Mapping[str, str]] = {}
    for arch_name in list(exempt_table.keys()):
        arch = read_arch(exempt_table, arch_name, arch_name)
        per_arch = exempt_table.table(arch_name)
        found = {key: per_arch.string(key) for key in list(per_arch.keys())}
        for key, reason in found.items():
            if not TEST_ID_RE.fullmatch(key) or len(reason.strip()) < 10:
                per_arch.fail(key, f"'{key}': an exemption is a test id (or pattern) and the measured reason it "
                                   "fails today, in words")
        per_arch.finish()
        exempt[arch] = MappingProxyType(found)
    exempt_table.finish()
    ctest, pytest = kind == "ctest", kind == "pytest"
    for key, allowed in (("cmake_args", ctest), ("targets", ctest), ("regex", ctest), ("label", ctest),
                         ("paths", pytest), ("args", pytest), ("requirements", pytest), ("packages", pytest),
                         ("arch_packages", pytest)):
        if sub.has(key) and not allowed:
            sub.fail(key, f"'{key}' is read by kind = \"{'pytest' if ctest else 'ctest'}\" only")
    if pytest and not paths:
        sub.fail("paths", "a pytest suite names its test files (paths = [\"test/python/test_x.py\"])")
    spec = SuiteSpec(kind=kind, timeout=timeout, cmake_args=sub.strings("cmake_args"), targets=sub.strings("targets"),
                     regex=regex, label=sub.string("label"), paths=paths, args=sub.strings("args"),
                     requirements=shorthand.pinned_requirements(sub.strings("requirements"), pins,
                                                                Table({}, sub.file, sub.where("requirements"))),
                     packages=package_names(sub, "packages"),
                     arch_packages=per_arch_strings(sub, "arch_packages", package_names),
                     profiles=sub.strings("profiles"), exempt=MappingProxyType(exempt),
                     control=sub.boolean("control"), fetchcontent=_test_fetchcontent(sub, root))
    sub.finish()
    return spec


def _test_fetchcontent(sub: Table, root: Path) -> Mapping[str, tuple[PinnedSource, ...]]:
    deps, patched = _fetchcontent(sub, root)
    if patched:
        sub.fail("fetchcontent", "a test build's dependencies are used as pinned, without patches")
    return deps


def _links(table: Table) -> Mapping[str, str]:
    sub = table.table("links")
    links = {key: sub.string(key) for key in list(sub.keys())}
    for key, value in links.items():
        if not NAME_RE.fullmatch(key) or PurePosixPath(value).is_absolute() or ".." in PurePosixPath(value).parts:
            sub.fail(key, f"'{key}' = '{value}': a link is a plain name pointing to a relative path in the sysroot")
    sub.finish()
    return MappingProxyType(links)


def _source_and_recipe(name: str, table: Table, root: Path,
                       registries: Registries) -> tuple[str, tuple[SourceSpec, ...], str]:
    """Where the component's source comes from (its own, or another's: source_of) and the recipe that builds it."""
    source_of = table.string("source_of")
    if source_of and table.has("source"):
        table.fail("source_of", "source_of and source exclude each other; keep one")
    if not source_of and not table.has("source"):
        table.fail(None, "missing required key 'source'; add source = { kind = \"tree\", path = \"components/"
                   f"{name}\" }} or a pinned git/archive/debian source")
    # source_of: the other component's sources are filled in by load.py once every component is read.
    sources = () if source_of else _source_with_mirrors(table, root)
    kind = sources[0].kind if sources else None
    # A recipe made exactly for some source kinds (registry.Entry.sources) is the default for them, and theirs only.
    claimed = {each: name for name, entry in registries.recipes.entries.items() for each in entry.sources}
    recipe = table.string("recipe", claimed.get(kind or "", DEFAULT_RECIPE))
    if recipe not in registries.recipes:
        table.fail("recipe", registries.recipes.unknown(recipe))
    owner = recipe if registries.recipes.entries[recipe].sources else claimed.get(kind or "")
    if owner is not None and not recipe == owner == claimed.get(kind or ""):
        table.fail("recipe", f"recipe '{recipe}' and source kind '{kind or source_of}' do not go together: "
                   f"the '{owner}' recipe is exactly for {' or '.join(registries.recipes.entries[owner].sources)} "
                   "sources")
    return source_of, sources, recipe


def _toolchains(table: Table) -> Mapping[Arch, str]:
    toolchain_table = table.table("toolchain")
    toolchain = {read_arch(toolchain_table, key, key): toolchain_table.string(key)
                 for key in list(toolchain_table.keys())}
    toolchain_table.finish()
    return MappingProxyType(toolchain)


def read_component(name: str, table: Table, root: Path, registries: Registries,
                   pins: Mapping[str, str] | None = None) -> Component:
    path_name(table, None, name, "component")
    source_of, sources, recipe = _source_and_recipe(name, table, root, registries)
    toolchain = _toolchains(table)
    smoke = _smoke(table, registries) if table.has("smoke") else None
    fetchcontent, fetchcontent_patches = _fetchcontent(table, root)
    component = Component(
        name=name,
        sources=tuple(sources),
        arches=arch_list(table, "arches"),
        depends=table.strings("depends"),
        recipe=recipe,
        source_subdir=_subdir(table),
        cmake_args=table.strings("cmake_args"),
        arch_cmake_args=per_arch_strings(table, "arch_cmake_args"),
        toolchain=toolchain,
        smoke=smoke,
        patches=_patches(table, root),
        options=_options(table),
        rust=table.boolean("rust"),
        rust_options=table.strings("rust_options"),
        host_tools=table.strings("host_tools"),
        distribution=table.optional_string("distribution"),
        fetchcontent=fetchcontent,
        fetchcontent_patches=fetchcontent_patches,
        toolroot=table.string("toolroot"),
        compiled=_compiled(table),
        vector_sources=table.strings("vector_sources"),
        sysroot_packages=per_arch_strings(table, "sysroot_packages", package_names),
        crates=_crates(table),
        links=_links(table),
        providers=_providers(table),
        provenance=_provenance(table),
        source_of=source_of,
        writable_source=table.boolean("writable_source"),
        job=table.boolean("job"),
        source_dirname=_dirname(table),
        collect=relative_paths(table, "collect"),
        hostenvs=table.strings("hostenvs"),
        wheel=_wheel(table, registries),
        cpu_extensions=_cpu_extensions(table),
        tests=_tests(table, root, pins or {}, registries),
    )
    table.finish()
    return component


def _smoke(table: Table, registries: Registries) -> SmokeSpec:
    """components.<c>.smoke: its kind, timeout and profiles, and the options its kind declares (registry.Entry)."""
    smoke_table = table.table("smoke")
    kind = smoke_table.string("kind", required=True)
    if kind not in registries.smokes:
        smoke_table.fail("kind", registries.smokes.unknown(kind))
    declared = registries.smokes.entries[kind].options
    timeout = smoke_table.number("timeout")
    for key in list(smoke_table.keys()):
        if key not in keys.COMMON_SMOKE and key not in declared:
            smoke_table.fail(key, f"unknown key for smoke kind '{kind}'"
                                  f"{suggestion(key, [*keys.COMMON_SMOKE, *declared])}")
    options: dict[str, object] = {}
    refs: list[Ref] = []
    for key, option in declared.items():
        if smoke_table.has(key) or option.required:
            options[key] = value = smoke_option(smoke_table, key, option)
            if option.refers and isinstance(value, str):
                refs.append(Ref(key=key, table=option.refers, name=value))
        if option.placeholders and isinstance(options.get(key), str):
            _evidence_pattern(smoke_table, key, option, str(options[key]))
    spec = SmokeSpec(kind=kind, timeout=timeout, profiles=smoke_table.strings("profiles"),
                     options=MappingProxyType(options), refs=tuple(refs))
    smoke_table.finish()
    section = smoke_table.section
    evidence, why = section.variant_any.get(kind, ((), "")) if section is not None else ((), "")
    if evidence and not set(evidence) & set(options):
        smoke_table.fail(None, why)
    return spec


def _evidence_pattern(table: Table, key: str, option: Option, pattern: str) -> None:
    """A pattern filled per run compiles with its placeholders filled, and, as evidence, needs some output to match
    (its declaration, keys.py, refuses the rest: an empty sentinel, an environment's names a process cannot have)."""
    filled = re.sub(r"\{(" + "|".join(map(re.escape, option.placeholders)) + r")\}", "x", pattern)
    try:
        compiled = re.compile(filled, re.MULTILINE)
    except re.error as exc:
        table.fail(key, f"/{pattern}/ is no regular expression with its placeholders filled ({exc})")
    if option.evidence and compiled.search(""):
        table.fail(key, f"/{pattern}/ matches an empty output, so it is no evidence; match what the program prints "
                        "when it passed")



def smoke_option(table: Table, key: str, option: Option) -> object:
    """One declared option of a smoke kind, read as its type (registry.OPTION_TYPES) says."""
    if option.type == "strings":
        return table.strings(key)  # a required one is not empty: its declaration (keys.option_key)
    if option.type == "number":
        return table.number(key, 0.0)
    if option.type == "guidance":
        return _constrained(table, key)
    if option.type in ("table", "tolerance", "signals", "environment"):
        sub = table.table(key)
        found: dict[str, object] = {}
        for name in list(sub.keys()):
            if option.type == "tolerance":
                if name not in ("rel", "abs"):
                    sub.fail(name, "a tolerance has rel and abs")
                value: object = sub.number(name, 0.0)
                if not isinstance(value, float) or value < 0:
                    sub.fail(name, "a tolerance is a number >= 0")
            else:
                value = sub.string(name)  # a signal's name: its declaration (keys.SIGNALS)
            found[name] = value
        sub.finish()
        return MappingProxyType(found)
    value = table.string(key, required=option.required)
    if option.choices and value not in option.choices:
        table.fail(key, f"'{value}' is not one of {', '.join(option.choices)}")
    return value  # a regex compiles: its declaration (keys.option_key)


def _subdir(table: Table) -> str:
    """source_subdir: a relative path that stays inside the source tree ("" is the tree itself)."""
    value = table.string("source_subdir")
    pure = PurePosixPath(value)
    if value and (pure.is_absolute() or ".." in pure.parts):
        table.fail("source_subdir", f"'{value}' must stay inside the source tree (no leading / and no ..)")
    return value


def _dirname(table: Table) -> str:
    value = table.string("source_dirname")
    if value:
        path_name(table, "source_dirname", value, "source folder")
    return value


def _providers(table: Table) -> Mapping[Arch, Mapping[str, str]]:
    sub = table.table("providers")
    depends = table.strings("depends")
    result: dict[Arch, Mapping[str, str]] = {}
    for arch_name in list(sub.keys()):
        arch = read_arch(sub, arch_name, arch_name)
        chosen = sub.table(arch_name)
        found = {}
        for dependency in list(chosen.keys()):
            if dependency not in depends:
                chosen.fail(dependency, f"'{dependency}' is not one of this component's depends "
                                        f"({', '.join(depends) or 'none'})")
            found[dependency] = chosen.string(dependency, required=True)
        chosen.finish()
        result[arch] = MappingProxyType(found)
    sub.finish()
    return MappingProxyType(result)


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
        result[key] = value
    sub.finish()
    return MappingProxyType(result)


def _cpu_extensions(table: Table) -> Mapping[Arch, tuple[str, ...]]:
    """components.<c>.cpu_extensions: per arch, ISA extensions as the ISA string writes them, each once; on an arch
    whose qemu takes them as properties, and never its vector unit (the profiles are what vary it)."""
    found = per_arch_strings(table, "cpu_extensions")
    where = Table({}, table.file, table.where("cpu_extensions"))
    for arch, names in found.items():
        facts = info(arch)
        if names and not facts.isa_extension_properties:
            where.fail(arch.value, f"qemu's {arch} CPUs take no ISA extensions as properties; name a CPU model with "
                                   f"them in a profile of [arches.{arch}.profiles]")
        for index, name in enumerate(names):
            if not re.fullmatch(keys.ISA_EXTENSION.removeprefix("^").removesuffix("$"), name):
                where.fail(arch.value, f"{name!r} is not an ISA extension as the ISA string writes it (zfh, zvfh)",
                           index=index)
            if name == facts.vector_cpu_property:
                where.fail(arch.value, f"'{name}' is what the profiles vary (novector, rvv128, …); choose the "
                                       "profiles with smoke.profiles / tests.profiles instead", index=index)
            if name in names[:index]:
                where.fail(arch.value, f"'{name}' is named twice", index=index)
    return found
