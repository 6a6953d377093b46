"""[components.*] read into Component: sources (with mirrors and FetchContent pins), patches, smoke,
options, links and provenance."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from crosslane.archs import Arch
from crosslane.config import keys, shorthand
from crosslane.config.component_model import (
    ArchiveSource,
    Component,
    Constrained,
    DebianSource,
    GitSource,
    PatchSpec,
    PinnedSource,
    Ref,
    SmokeSpec,
    SourceSpec,
    SuiteSpec,
    SysrootPackage,
    TreeSource,
    WheelSpec,
)
from crosslane.config.declare import Reader, read_into
from crosslane.config.fields import (
    DEBIAN_VERSION_RE,
    GIT_REF_RE,
    NAME_RE,
    PINNED_KINDS,
    arch_list,
    package_name,
    path_name,
    read_arch,
    repo_path,
    sha256,
    url,
)
from crosslane.config.model import Registries
from crosslane.config.reader import Table
from crosslane.registry import DEFAULT_RECIPE, Option, suggestion


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






def _makes_wheels(table: Table, registries: Registries) -> bool:
    entry = registries.recipes.entries.get(table.optional_string("recipe") or "")
    return entry is not None and entry.wheels


def _wheel(table: Table, registries: Registries) -> WheelSpec:
    sub = table.table("wheel")
    spec = read_into(WheelSpec, sub, None, {})
    sub.finish()
    if sub.data and not _makes_wheels(table, registries):
        wheeled = [name for name, entry in registries.recipes.entries.items() if entry.wheels]
        table.fail("wheel", f"a [wheel] table is read by the {' or '.join(wheeled)} recipe only; "
                            f"set recipe = \"{wheeled[0]}\"")
    return spec




def _tests(table: Table, reading: _Reading) -> SuiteSpec | None:
    # `tests = false`: a variant (extends) that does not run the suite its parent declares.
    if table.has("tests") and table.data["tests"] is False:
        table.boolean("tests", False)
        return None
    if not table.has("tests"):
        return None
    sub = table.table("tests")
    spec = read_into(SuiteSpec, sub, reading, {}, _SUITE_READERS)
    # Every kind's options are known keys (another kind's refused as such), read or not.
    sub.finish(tuple(sub.section.keys) if sub.section is not None else None)
    return spec


def _suite_kind(table: Table, key: str, reading: _Reading, _read: Mapping[str, object]) -> str:
    kind = table.string(key, required=True)
    if kind not in reading.registries.suites:
        table.fail(key, reading.registries.suites.unknown(kind))
    return kind


def _suite_requirements(table: Table, key: str, reading: _Reading, _read: Mapping[str, object]) -> tuple[str, ...]:
    return shorthand.pinned_requirements(table.strings(key), reading.pins, Table({}, table.file, table.where(key)))


def _suite_options(table: Table, _key: str, reading: _Reading, read: Mapping[str, object]) -> Mapping[str, object]:
    """A suite kind's options that no SuiteSpec field reads (a plug-in's), each read as a smoke kind's option is."""
    kind = read["kind"]
    assert isinstance(kind, str)
    fields = {f.name for f in dataclasses.fields(SuiteSpec)}
    found: dict[str, object] = {}
    for name, option in reading.registries.suites.entries[kind].options.items():
        if name in fields:
            continue
        if option.required and not table.has(name):
            table.fail(None, f"missing required key '{name}'")
        if not table.has(name):
            continue
        found[name] = value = smoke_option(table, name, option)
        if option.nonempty and not value:
            table.fail(name, option.nonempty)
        if option.placeholders and isinstance(value, str):
            _evidence_pattern(table, name, option, value)
    return MappingProxyType(found)


# The suite's fields that need the registries, the pins or the sources' readers (declare.read_into).
_SUITE_READERS: Mapping[str, Reader] = MappingProxyType({
    "kind": _suite_kind,
    "options": _suite_options,
    "requirements": _suite_requirements,
    "fetchcontent": lambda table, _key, reading, _read: _test_fetchcontent(table, reading.root),
})


def _test_fetchcontent(sub: Table, root: Path) -> Mapping[str, tuple[PinnedSource, ...]]:
    deps, patched = _fetchcontent(sub, root)
    if patched:
        sub.fail("fetchcontent", "a test build's dependencies are used as pinned, without patches")
    return deps




@dataclass(frozen=True)
class _Reading:
    """What reading a component needs beyond its table."""

    root: Path
    registries: Registries
    pins: Mapping[str, str]


def _sources(table: Table, _key: str, reading: _Reading, read: Mapping[str, object]) -> Mapping[str, object]:
    """Where the component's source comes from: its own (with mirrors), or another's (source_of)."""
    source_of = table.string("source_of")
    if source_of and table.has("source"):
        table.fail("source_of", "source_of and source exclude each other; keep one")
    if not source_of and not table.has("source"):
        table.fail(None, "missing required key 'source'; add source = { kind = \"tree\", path = \"components/"
                   f"{read['name']}\" }} or a pinned git/archive/debian source")
    # source_of: the other component's sources are filled in by load.py once every component is read.
    return {"sources": () if source_of else _source_with_mirrors(table, reading.root), "source_of": source_of}


def _recipe(table: Table, key: str, reading: _Reading, read: Mapping[str, object]) -> str:
    sources = read["sources"]
    assert isinstance(sources, tuple)
    kind = sources[0].kind if sources else None
    recipes = reading.registries.recipes
    # A recipe made exactly for some source kinds (registry.Entry.sources) is the default for them, and theirs only.
    claimed = {each: name for name, entry in recipes.entries.items() for each in entry.sources}
    recipe = table.string(key, claimed.get(kind or "", DEFAULT_RECIPE))
    if recipe not in recipes:
        table.fail(key, recipes.unknown(recipe))
    owner = recipe if recipes.entries[recipe].sources else claimed.get(kind or "")
    if owner is not None and not recipe == owner == claimed.get(kind or ""):
        table.fail(key, f"recipe '{recipe}' and source kind '{kind or read['source_of']}' do not go together: "
                   f"the '{owner}' recipe is exactly for {' or '.join(recipes.entries[owner].sources)} sources")
    return recipe


def _providers(table: Table, key: str, _reading: _Reading,
               read: Mapping[str, object]) -> Mapping[Arch, Mapping[str, str]]:
    sub = table.table(key)
    depends = read["depends"]
    assert isinstance(depends, tuple)
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


def _fetchcontent_of(table: Table, _key: str, reading: _Reading, _read: Mapping[str, object]) -> Mapping[str, object]:
    deps, patched = _fetchcontent(table, reading.root)
    return {"fetchcontent": deps, "fetchcontent_patches": patched}


# The component's fields that need more than the config package's own readers (declare.read_into).
_READERS: Mapping[str, Reader] = MappingProxyType({
    "sources": _sources,
    "recipe": _recipe,
    "providers": _providers,
    "smoke": lambda table, key, reading, _read: _smoke(table, reading.registries) if table.has(key) else None,
    "patches": lambda table, _key, reading, _read: _patches(table, reading.root),
    "fetchcontent": _fetchcontent_of,
    "wheel": lambda table, _key, reading, _read: _wheel(table, reading.registries),
    "tests": lambda table, _key, reading, _read: _tests(table, reading),
})


def read_component(name: str, table: Table, root: Path, registries: Registries,
                   pins: Mapping[str, str] | None = None) -> Component:
    path_name(table, None, name, "component")
    component = read_into(Component, table, _Reading(root, registries, pins or {}), {"name": name}, _READERS)
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











