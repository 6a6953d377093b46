"""The data model of a [components.*] table: its sources, patches, smoke, test suite and wheels, and the checks
that sit beside the fields they check."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import ClassVar

from crosslane.archs import Arch, info
from crosslane.config import keys
from crosslane.config.declare import Kinds, derived, key, section_of, using
from crosslane.config.fields import (
    NAME_RE,
    arch_list,
    check_package_lists,
    package_names,
    path_name,
    read_arch,
    relative_paths,
)
from crosslane.config.keys import Key, Section
from crosslane.config.reader import Table
from crosslane.registry import OPTIONS, Option


@dataclass(frozen=True, kw_only=True)
class TreeSource:
    """A folder in this repository (built as it is; its content digest is the pin)."""
    kind: ClassVar[str] = "tree"
    path: Path


@dataclass(frozen=True, kw_only=True)
class GitSource:
    """A source pinned to a git commit (its tag only a name checked against the commit)."""

    kind: ClassVar[str] = "git"
    url: str
    commit: str  # the pin: a full 40-hex commit; a tag is only a name checked against it
    tag: str | None = None
    # Paths a partial mirror may lack (globs; test data the build never reads), reported when absent.
    absent_ok: tuple[str, ...] = ()
    # Submodule paths to populate, each at the commit the superproject's gitlink pins (from .gitmodules' URL,
    # through the same mirror rules); nested ones are listed by their full path.
    submodules: tuple[str, ...] = ()
    # (path, commit, reason) used instead of the gitlink's commit when the pinned one cannot be had (not in any
    # mirror); the reason is part of the pin and of the report.
    substitutes: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True, kw_only=True)
class ArchiveSource:
    """A source pinned to an archive's sha256."""

    kind: ClassVar[str] = "archive"
    url: str
    sha256: str


@dataclass(frozen=True, kw_only=True)
class DebianSource:
    """A Debian source package (.dsc verified against the suite's signed Sources index)."""
    kind: ClassVar[str] = "debian"
    package: str
    version: str
    mirror: str | None = None
    suite: str | None = None


@dataclass(frozen=True, kw_only=True)
class SysrootPackage:
    """Nothing to build: the component is what the sysroot's Debian package installs."""
    kind: ClassVar[str] = "sysroot-package"
    package: str


# One dataclass per kind, so a fetcher gets exactly its fields and `match` over the union is checked for
# exhaustiveness by mypy.
SourceSpec = TreeSource | GitSource | ArchiveSource | DebianSource | SysrootPackage
PinnedSource = GitSource | ArchiveSource | DebianSource


def version_of(spec: SourceSpec) -> str | None:
    """The version a source names, if any: a git tag or a Debian version (commits and digests name none)."""
    match spec:
        case GitSource():
            return spec.tag
        case DebianSource():
            return spec.version
        case _:
            return None


@dataclass(frozen=True)
class PatchSpec:
    """One patch of a component's series: its file, pinned sha256, the arches it applies on."""

    path: Path
    sha256: str
    arches: tuple[Arch, ...]
    strip: int = 1  # patch -pN: 1 for a/ b/ prefixed diffs (git, quilt), 0 for plain paths


@dataclass(frozen=True)
class Constrained:
    """Constrained generation (the genai smoke's tier 5): the guidance kind genai takes (regex, json_schema,
    lark_grammar), its text, the prompt, and at most how many new tokens."""

    kind: str
    data: str
    prompt: str
    new_tokens: int = 32


@dataclass(frozen=True, kw_only=True)
class Ref:
    """An option's value that names an entry of a top-level table: smoke.model = "smollm2" is [models.smollm2]."""

    key: str  # the option
    table: str  # "models", "cases" (registry.REFERABLE)
    name: str


@dataclass(frozen=True)
class SmokeSpec:
    """A component's smoke: its kind, timeout and profiles, and the options its kind declares, as read. What one
    kind reads (a command's argv, genai's model, executorch's case matrix) is in *options*, never a field here."""

    kind: str
    timeout: float
    # Only these CPU profiles (a runner variant made for some of them); empty: every profile the smoke gets.
    profiles: tuple[str, ...] = ()
    # The options its kind declares (registry.Entry.options), as read: a command smoke's argv, sentinel, compare…
    options: Mapping[str, object] = field(default_factory=dict)
    # The top-level entries its options name (registry.Option.refers).
    refs: tuple[Ref, ...] = ()

    def referred(self, table: str) -> str | None:
        """The entry of the top-level *table* ("models", "cases") an option names, if one does."""
        return next((ref.name for ref in self.refs if ref.table == table), None)

    def text(self, key: str) -> str | None:
        """A string option as read, or None when it is not set."""
        value = self.options.get(key)
        return value if isinstance(value, str) else None


def _kind_options(table: Table) -> Mapping[str, Mapping[str, Option]]:
    """Each suite kind's options (registry.Entry.options), as the tests table's section (suite_section) carries them."""
    return table.section.kind_options if table.section is not None else {}


def _other_kind(table: Table, written: str, kind: str) -> None:
    """*written* refused when it is another suite kind's option and not *kind*'s."""
    readers = [name for name, options in _kind_options(table).items() if written in options]
    if table.has(written) and readers and kind not in readers:
        named = " or ".join(f'kind = "{name}"' for name in readers)
        table.fail(written, f"'{written}' is read by {named} only")


# regex and paths are refused for the other kind once their value is read (a mistyped value is named first).
_CHECKED_AFTER_READING = ("regex", "paths")


def _suite_keys(table: Table, _name: str, kind: str, _read: Mapping[str, object]) -> None:
    for written in dict.fromkeys(name for options in _kind_options(table).values() for name in options):
        if written not in _CHECKED_AFTER_READING:
            _other_kind(table, written, kind)


def _suite_regex(table: Table, name: str, _regex: str, read: Mapping[str, object]) -> None:
    kind = read["kind"]
    assert isinstance(kind, str)
    _other_kind(table, name, kind)


def suite_option(table: Table, kind: str, name: str) -> Option | None:
    """The option *kind*'s entry declares under *name*, if it does."""
    return _kind_options(table).get(kind, {}).get(name)


TEST_FILE = r"^[A-Za-z0-9_][A-Za-z0-9_./-]*\.py$"


def _test_files(table: Table, name: str, paths: tuple[str, ...], read: Mapping[str, object]) -> None:
    for index, path in enumerate(paths):
        if not _matches(TEST_FILE, path) or ".." in PurePosixPath(path).parts:
            Table({}, table.file, table.where(name)).fail(index, f"'{path}' is not a test file inside the source "
                                                                 "(a relative path ending in .py)")
    _suite_regex(table, name, "", read)
    kind = read["kind"]
    assert isinstance(kind, str)
    option = suite_option(table, kind, name)
    if option is not None and option.nonempty and not paths:
        table.fail(name, option.nonempty)


TEST_ID = r"^[^\s\x00-\x1f]{1,400}$"


def _exemptions(table: Table, name: str, _context: object,
                _read: Mapping[str, object]) -> Mapping[Arch, Mapping[str, str]]:
    exempt_table = table.table(name)
    exempt: dict[Arch, Mapping[str, str]] = {}
    for arch_name in list(exempt_table.keys()):
        arch = read_arch(exempt_table, arch_name, arch_name)
        per_arch = exempt_table.table(arch_name)
        found = {test: per_arch.string(test) for test in list(per_arch.keys())}
        for test, reason in found.items():
            if not _matches(TEST_ID, test) or len(reason.strip()) < 10:
                per_arch.fail(test, f"'{test}': an exemption is a test id (or pattern) and the measured reason it "
                                    "fails today, in words")
        per_arch.finish()
        exempt[arch] = MappingProxyType(found)
    exempt_table.finish()
    return MappingProxyType(exempt)


@dataclass(frozen=True, kw_only=True)
class SuiteSpec:
    """Upstream's own test suite (components.<c>.tests), run for the target on every CPU profile it lists.

    kind "ctest": the component configured again with *cmake_args* added (its own build stays as it is), the
    *targets* built (empty: all), ctest choosing cases by *regex*/*label*, each program under the profile's qemu.
    kind "pytest": *paths* of the source's tests run by the target's own python (the lane's wheel pip-installed
    into a venv of a clean root holding *packages*, pure-Python *requirements* from PyPI) with *args*.
    """

    kind: str = key(lambda kinds: keys.string("the suite kind (registry: ctest, pytest, plug-ins)", keys.REQUIRED,
                                              choices=kinds.suites.names(), what=kinds.suites.kind), check=_suite_keys)
    # One test's limit on the default profile, in seconds (scaled per profile as the smokes').
    timeout: float = key(Key(
        "number", "seconds per test, scaled like a smoke's for the emulated CPU (x2 on a foreign ISA, x(1 + VLEN/256) "
        "on a vector profile): ctest's --timeout, pytest-timeout's --timeout when the suite requires "
        "pytest-timeout; a whole ctest run stops at 50 times the scaled value (at least 3600 s), a whole pytest run "
        "at 7200 s", 300.0, minimum=0, maximum=keys.MAX_TIMEOUT, above=True,
        bounds=f"a number of seconds above 0 and at most {keys.MAX_TIMEOUT}"))
    cmake_args: tuple[str, ...] = key(keys.array("ctest: configure options of the test build", ()))
    targets: tuple[str, ...] = key(keys.array("ctest: the targets to build", ()))
    regex: str = key(Key("string", "ctest: the tests to run (-R)", "", format="regex",
                         refusal="'{value}' is not a regular expression ({error})"), check=_suite_regex)
    label: str = key(keys.string("ctest: the label to run (-L)", ""))
    paths: tuple[str, ...] = key(keys.array("pytest: the test files, inside the source", ()), check=_test_files)
    args: tuple[str, ...] = key(keys.array("pytest: extra arguments", ()))
    requirements: tuple[str, ...] = key(keys.array(
        "pytest: what the target venv installs (bare names pinned in [pins])", ()))
    packages: tuple[str, ...] = key(keys.packages("pytest: Debian packages the board needs"), read=using(package_names))
    arch_packages: Mapping[Arch, tuple[str, ...]] = key(keys.per_arch("pytest: per-arch Debian packages",
                                                                      keys.PACKAGES), check=check_package_lists)
    # Only these profiles (a variant built for some of them); empty: every profile of the arch.
    profiles: tuple[str, ...] = key(keys.array("the profiles it runs on (default: the arch's)", ()))
    # Per arch: test id (or fnmatch pattern) -> why it fails there today: a deletion candidate, reported when the
    # test passes again.
    exempt: Mapping[Arch, Mapping[str, str]] = key(keys.per_arch("arch -> known failures", keys.EXEMPT),
                                                   read=_exemptions)
    # Run on the amd64 control too, for the parity table (tests passing there but failing on the target).
    control: bool = key(Key("boolean", "run on the amd64 control too (the parity table)", True))
    # FetchContent-style pinned dependencies only the test build reads (googletest), {fetchcontent[name]} there;
    # the component's own build neither fetches nor sees them.
    fetchcontent: Mapping[str, tuple[PinnedSource, ...]] = derived(fetchcontent=keys.FETCHCONTENT, default_factory=dict)
    # The options a plug-in kind declares beyond the fields above (registry.Entry.options), as read.
    options: Mapping[str, object] = derived(default_factory=dict)


def suite_section(kinds: Kinds) -> Section:
    """components.<c>.tests: SuiteSpec's keys, then the options of the suite kinds in use that no field reads (a
    plug-in's), each kind's options refused for another kind."""
    section = section_of(SuiteSpec, kinds, doc="the project's own test suite, built and run under qemu per profile")
    extra: dict[str, Key] = {}
    for kind, entry in kinds.suites.entries.items():
        for name, option in entry.options.items():
            if name not in section.keys:
                declared = keys.option_key(kind, option, required=False, what="suite kind")
                extra[name] = declared if name not in extra else keys.either(extra[name], declared)
    return dataclasses.replace(section, keys=MappingProxyType({**section.keys, **extra}), kind_options=MappingProxyType(
        {kind: entry.options for kind, entry in kinds.suites.entries.items()}))


def _matches(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern.removeprefix("^").removesuffix("$"), value) is not None


def _cpythons(table: Table, name: str, pythons: tuple[str, ...], _read: Mapping[str, object]) -> None:
    for index, version in enumerate(pythons):
        if not _matches(keys.PYTHON, version):
            table.fail(name, f"entry {index}: '{version}' is not a CPython version such as \"3.14\"")
    if len(set(pythons)) != len(pythons):
        table.fail(name, "a CPython is listed twice")


def _libraries(table: Table, name: str, bundle: Mapping[Arch, tuple[str, ...]], _read: Mapping[str, object]) -> None:
    for arch, files in bundle.items():
        for file in files:
            if not _matches(keys.LIBRARY, file):
                table.fail(name, f"{arch}: '{file}' is not a shared library file name (lib<name>.so[.N…])")


def _bundled(table: Table, name: str, drop: Mapping[Arch, tuple[str, ...]], read: Mapping[str, object]) -> None:
    bundle = read["bundle"]
    assert isinstance(bundle, Mapping)
    for arch in drop:
        if not bundle.get(arch):
            table.fail(name, f"{arch}: a requirement is dropped only for a library the wheel bundles; set "
                             f"bundle.{arch}")


SYMVER = r"^[A-Za-z_][A-Za-z0-9_]*@[A-Z]+_[0-9]+(?:\.[0-9]+)*$"


def _symbol_versions(table: Table, name: str, symbols: Mapping[Arch, tuple[str, ...]],
                     _read: Mapping[str, object]) -> None:
    for arch, pins in symbols.items():
        for pin in pins:
            if not _matches(SYMVER, pin):
                table.fail(name, f"{arch}: '{pin}' is not symbol@VERSION (log10f@GLIBC_2.2.5)")


SUITE_NAME = r"^[a-z][a-z0-9-]{1,30}$"


def _install_suites(table: Table, name: str, suites: Mapping[str, str], read: Mapping[str, object]) -> None:
    pythons = read["pythons"]
    assert isinstance(pythons, tuple)
    for version, suite in suites.items():
        if version not in pythons or not _matches(SUITE_NAME, suite):
            Table({}, table.file, table.where(name)).fail(
                version, f"'{version}' = '{suite}': a CPython of pythons and the Debian suite whose system Python "
                         "it is")


@dataclass(frozen=True, kw_only=True)
class WheelSpec:
    """How a cmake-wheel component's wheels are built, repaired and install-tested (components.<c>.wheel)."""

    # CPython versions ("3.13", …): one build identifier each (cp313-linux_riscv64). () = the sysroot's newest.
    pythons: tuple[str, ...] = key(keys.array("the CPythons a wheel is built for (\"3.14\")", (),
                                              keys.string("", pattern=keys.PYTHON)), check=_cpythons)
    # Per arch: libraries of the dependencies' install folders (by file name) put beside the package's own before
    # repair, with the Requires-Dist entries they replace: the wheel then ships the library it was built on.
    bundle: Mapping[Arch, tuple[str, ...]] = key(keys.per_arch(
        "shared libraries grafted into the wheel", keys.array("", (), keys.string("", pattern=keys.LIBRARY))),
        check=_libraries)
    drop_requires: Mapping[Arch, tuple[str, ...]] = key(keys.per_arch(
        "requirements dropped because the wheel bundles the library", keys.STRINGS), check=_bundled)
    # Per arch: "symbol@VERSION" bindings the build makes (a .symver header every C/C++ file includes), for a
    # symbol the target's glibc gave a version newer than any manylinux policy.
    symbol_versions: Mapping[Arch, tuple[str, ...]] = key(keys.per_arch("symbol@VERSION the policy allows",
                                                                        keys.STRINGS), check=_symbol_versions)
    # auditwheel repair against the sysroot's libraries, to the lowest manylinux tag the symbols allow.
    repair: bool = key(Key("boolean", "repair the wheel (graft, rename to manylinux)", True))
    # The install test's root per CPython: the suite whose system Python it is (default: the sysroot's suite),
    # and the distribution packages that satisfy requirements no index has a wheel of for the arch.
    install_packages: tuple[str, ...] = key(keys.packages("Debian packages the install test's target root gets"),
                                            read=using(package_names))
    install_suites: Mapping[str, str] = key(keys.named("CPython -> the Debian suite whose root installs it",
                                                       keys.suite("")), check=_install_suites)

    def identifiers(self, arch: Arch, default: str) -> tuple[str, ...]:
        """cibuildwheel's build identifiers for *arch*: cp313-linux_riscv64, … (*default*: the sysroot's CPython)."""
        return tuple(f"cp{v.replace('.', '')}-{info(arch).wheel_platform}" for v in (self.pythons or (default,)))


def _inside_source(table: Table, name: str, value: str, _read: Mapping[str, object]) -> None:
    pure = PurePosixPath(value)
    if value and (pure.is_absolute() or ".." in pure.parts):
        table.fail(name, f"'{value}' must stay inside the source tree (no leading / and no ..)")


def _folder_name(table: Table, name: str, value: str, _read: Mapping[str, object]) -> None:
    if value:
        path_name(table, name, value, "source folder")


def _cpu_extensions(table: Table, name: str, found: Mapping[Arch, tuple[str, ...]],
                    _read: Mapping[str, object]) -> None:
    """Per arch, ISA extensions as the ISA string writes them, each once; on an arch whose qemu takes them as
    properties, and never its vector unit (the profiles are what vary it)."""
    where = Table({}, table.file, table.where(name))
    for arch, names in found.items():
        facts = info(arch)
        if names and not facts.isa_extension_properties:
            where.fail(arch.value, f"qemu's {arch} CPUs take no ISA extensions as properties; name a CPU model with "
                                   f"them in a profile of [arches.{arch}.profiles]")
        for index, extension in enumerate(names):
            if not _matches(keys.ISA_EXTENSION, extension):
                where.fail(arch.value, f"{extension!r} is not an ISA extension as the ISA string writes it (zfh, zvfh)",
                           index=index)
            if extension == facts.vector_cpu_property:
                where.fail(arch.value, f"'{extension}' is what the profiles vary (novector, rvv128, …); choose the "
                                       "profiles with smoke.profiles / tests.profiles instead", index=index)
            if extension in names[:index]:
                where.fail(arch.value, f"'{extension}' is named twice", index=index)


def _feature_options(table: Table, name: str, _context: object, _read: Mapping[str, object]) -> Mapping[str, str]:
    """Each option's name is checked before its value is read (an unknown name is the mistake to name first)."""
    sub = table.table(name)
    found = {}
    for option in list(sub.keys()):
        if option not in OPTIONS:
            sub.fail(option, OPTIONS.unknown(option))
        found[option] = sub.string(option)
    sub.finish()
    return MappingProxyType(found)


def _symbols(table: Table, name: str, found: Mapping[str, str], _read: Mapping[str, object]) -> None:
    for feature, symbol in found.items():
        if not NAME_RE.fullmatch(feature) or not NAME_RE.fullmatch(symbol):
            Table({}, table.file, table.where(name)).fail(
                feature, f"'{feature}' = '{symbol}': a feature name and the C symbol that proves it (letters, digits, "
                         "_)")


CRATE = r"^[A-Za-z0-9_-]+-[0-9][A-Za-z0-9.+-]*$"


def _crates(table: Table, name: str, found: Mapping[str, str], read: Mapping[str, object]) -> None:
    where = Table({}, table.file, table.where(name))
    for crate, digest in found.items():
        if not _matches(keys.SHA256, digest):
            where.fail(crate, f"'{digest}' is not a sha256 (64 lowercase hex digits)")
    for crate in found:
        if not _matches(CRATE, crate):
            where.fail(crate, f"'{crate}' is not a crate as Cargo.lock names it (<name>-<version>)")
    if found and not read["toolroot"]:
        table.fail(name, "crates are pinned in the tool root a component takes its Rust from; set toolroot")


def _links(table: Table, name: str, found: Mapping[str, str], _read: Mapping[str, object]) -> None:
    for link, target in found.items():
        if not NAME_RE.fullmatch(link) or PurePosixPath(target).is_absolute() or ".." in PurePosixPath(target).parts:
            Table({}, table.file, table.where(name)).fail(
                link, f"'{link}' = '{target}': a link is a plain name pointing to a relative path in the sysroot")


def _dependencies(table: Table, name: str, found: Mapping[str, str], read: Mapping[str, object]) -> None:
    depends = read["depends"]
    assert isinstance(depends, tuple)
    for variable, dependency in found.items():
        if dependency not in depends:
            Table({}, table.file, table.where(name)).fail(
                variable, f"'{dependency}' is not one of this component's depends ({', '.join(depends) or 'none'})")


@dataclass(frozen=True, kw_only=True)
class Component:
    """A [components.*] table, resolved: sources, arches, dependencies, recipe and its settings. Each field read
    from versions.toml declares its key (declare.key): the fields' order is the schema's."""

    name: str
    # The source and its mirrors, or another component's (source_of: its pins, its cache entry; variants of one
    # project), read together: one of source and source_of is written.
    sources: tuple[SourceSpec, ...] = derived(
        source=keys.table("the component's source", keys.SOURCE),
        source_of=keys.string("take another component's source instead", ""),
        mirrors=keys.MIRRORS, fills=("source_of",))
    source_of: str = ""
    arches: tuple[Arch, ...] = key(keys.array("the arches whose job builds it", (), keys.ARCH_NAME),
                                   read=using(arch_list))
    # In its arches' jobs (nox -s build-<arch>); false: built when named (nox -s build-<arch>-<component>).
    job: bool = key(Key("boolean", "in its arches' jobs; false: built only when named", True))
    depends: tuple[str, ...] = key(keys.array("components built first (install prefixes on CMAKE_PREFIX_PATH)", ()))
    # Per arch: a dependency (as `depends` names it) → the component built in its place there. The name stays the
    # role ({deps[onnxruntime]}, provenance), the install folder is the provider's.
    providers: Mapping[Arch, Mapping[str, str]] = key(keys.per_arch(
        "arch -> {dependency: the component that stands in for it there}",
        keys.table("", Section(names=keys.string("")))))
    recipe: str = key(lambda kinds: keys.string(
        "how it is built (registry: cmake, cmake-wheel, provided, …; default cmake)", choices=kinds.recipes.names(),
        what=kinds.recipes.kind))
    source_subdir: str = key(keys.string("the CMake project's folder inside the source", ""), check=_inside_source)
    # The folder name the copy must have (ExecuTorch's CMake refuses any but "executorch").
    source_dirname: str = key(keys.string("the folder name the source copy must have", ""), check=_folder_name)
    # Built in a per-arch copy even without patches: the project writes into its source tree.
    writable_source: bool = key(Key("boolean", "build in a per-arch copy (the project writes into its tree)", False))
    cmake_args: tuple[str, ...] = key(keys.array(
        "configure options ({source}, {hostenv[x]}, {fetchcontent[x]}, @group)", ()))
    arch_cmake_args: Mapping[Arch, tuple[str, ...]] = key(keys.per_arch("per-arch configure options", keys.STRINGS),
                                                          per_arch=True)
    toolchain: Mapping[Arch, str] = key(keys.per_arch("arch -> a [toolchains] name (default: the arch's)",
                                                      keys.string("")), per_arch=True)
    # Per arch: ISA extensions its code needs beyond the profiles' (zfh), added to every profile it runs on as qemu
    # properties spelled for the emulator (guest/qemu.with_extensions).
    cpu_extensions: Mapping[Arch, tuple[str, ...]] = key(keys.per_arch(
        "arch -> ISA extensions its code needs beyond the profiles' (zfh): each added to every CPU profile it runs "
        "on as a qemu property, spelled for the emulator that runs it (qemu 7.2: Zfh=true; 11: zfh=true)",
        keys.array("", (), keys.string("", pattern=keys.ISA_EXTENSION,
                                       shape="an ISA extension as the ISA string writes it (zfh)"))),
        check=_cpu_extensions, per_arch=True)
    smoke: SmokeSpec | None = key(lambda kinds: keys.table("how it is smoked", keys.smoke_section(kinds.smokes)))
    patches: tuple[PatchSpec, ...] = key(keys.PATCHES)
    # Feature options ("auto" | "on" | "off"); preflight decides what "auto" becomes (rules.py).
    options: Mapping[str, str] = key(keys.table("feature options decided by rules", Section(
        names=keys.string("auto, on or off", choices=keys.OPTION_VALUES))), read=_feature_options)
    # Builds Rust through Corrosion: gets Rust_CARGO_TARGET and the cross linker (crosswire.py).
    rust: bool = key(Key("boolean", "the build compiles Rust (Corrosion)", False))
    # Configure arguments that need the Rust target's std; dropped only on positive evidence (rules.py).
    rust_options: tuple[str, ...] = key(keys.array("options that need Rust (rustup target detection)", ()))
    # Host tools the build compiles for the build machine (flatc, protoc, cargo build scripts).
    host_tools: tuple[str, ...] = key(keys.array("host programs the build runs", ()))
    # The Python distribution it installs ("onnxruntime-genai"); None: no Python package (ARCH-PARITY).
    distribution: str | None = key(keys.string("the Python distribution it installs, for the parity check"))
    # Dependencies its CMake would download with FetchContent, by FetchContent name: each a pinned source
    # (with mirrors) that crosslane fetches and hands over as FETCHCONTENT_SOURCE_DIR_<NAME>; and the patches of
    # such a dependency (by its name), applied to a per-arch copy of its pinned tree.
    fetchcontent: Mapping[str, tuple[PinnedSource, ...]] = derived(
        fetchcontent=keys.FETCHCONTENT, fills=("fetchcontent_patches",), default_factory=dict)
    fetchcontent_patches: Mapping[str, tuple[PatchSpec, ...]] = field(default_factory=dict)
    # The [toolroots.*] whose rustc and cargo build its Rust (Corrosion gets wrappers that run them inside it).
    toolroot: str = key(keys.string("the [toolroots] name its Rust comes from", ""))
    # Features the lane is specified with, each proven by a dynamic symbol its libraries export
    # (gates/compiled.py): {"guidance": "llg_new_tokenizer"}.
    compiled: Mapping[str, str] = key(keys.named("feature -> a C symbol that proves it was compiled in",
                                                 keys.string("")), check=_symbols)
    # Source paths (fnmatch, relative to the source tree) whose objects alone may hold RISC-V vector instructions:
    # the rest of the library must run on a CPU without V (gates/vector_sources.py).
    vector_sources: tuple[str, ...] = key(keys.array(
        "source paths (fnmatch) whose objects alone may hold RISC-V vector code", ()))
    # Per arch: Debian packages its build compiles against (headers, libraries, CMake packages), in that arch's
    # sysroot whenever versions.toml declares the component.
    sysroot_packages: Mapping[Arch, tuple[str, ...]] = key(keys.per_arch(
        "Debian packages its build compiles against, added to that arch's sysroot", keys.PACKAGES),
        check=check_package_lists)
    # The crates its Rust builds from, as the tool root's registry holds them: "<name>-<version>" (as Cargo.lock
    # names them) → sha256 of the crate's folder (stamps.tree_digest). Debian records no checksum for most of them.
    crates: Mapping[str, str] = key(keys.named("crate-version -> sha256 of its folder in the tool root",
                                               keys.string("", pattern=keys.SHA256)), check=_crates)
    # provided recipe: links made in the install folder to sysroot paths ({multiarch} filled per arch), so a
    # dependent build finds a prefix such as ORT_HOME (include/, lib/) inside the chain's own sysroot.
    links: Mapping[str, str] = key(keys.named("name -> a relative path in the sysroot", keys.string("")),
                                   check=_links)
    # Build provenance: CMake cache variable → the dependency whose install folder it must point into
    # (ORT_HOME → onnxruntime: genai is built on the chain's ORT, never a downloaded one; gates/provenance.py).
    provenance: Mapping[str, str] = key(keys.named("CMake variable -> the dependency it points at", keys.string("")),
                                        check=_dependencies)
    # Files the build leaves in its build folder that the install step does not copy, put in install/bin.
    collect: tuple[str, ...] = key(keys.array("files the build leaves that install does not copy", ()),
                                   read=using(relative_paths))
    # Host venvs (by [hostenvs.<name>]) the build needs, e.g. a Python with torch for code generation.
    hostenvs: tuple[str, ...] = key(keys.array("[hostenvs] its build runs", ()))
    # cmake-wheel: which CPythons, what is bundled, how the wheel is repaired and install-tested.
    wheel: WheelSpec = key(keys.table("its wheels", section_of(WheelSpec, doc="the cmake-wheel recipe's wheels")),
                           default_factory=WheelSpec)
    # Upstream's own tests (crosslane/suites/): None when the component declares none.
    tests: SuiteSpec | None = key(lambda kinds: Key(
        "table", "its own test suite (false: a variant that does not run its parent's)",
        section=suite_section(kinds),
        also=(Key("boolean", ""),)), default=None)

    def cmake_args_for(self, arch: Arch) -> tuple[str, ...]:
        return self.cmake_args + self.arch_cmake_args.get(arch, ())

    def provider(self, dependency: str, arch: Arch | None) -> str:
        """The component built for *dependency* on *arch* (itself unless `providers` names another)."""
        return self.providers.get(arch, {}).get(dependency, dependency) if arch is not None else dependency

    def dependencies(self, arch: Arch | None) -> tuple[str, ...]:
        """The components built before this one on *arch*; with no arch, those of every arch."""
        if arch is not None:
            return tuple(self.provider(dep, arch) for dep in self.depends)
        every = [*self.depends, *(name for chosen in self.providers.values() for name in chosen.values())]
        return tuple(dict.fromkeys(every))
