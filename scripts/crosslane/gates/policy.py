"""auditwheel's manylinux policies, applied to the ELF facts the wheel gate has already read.

The rules are auditwheel's (wheel_abi.analyze_wheel_abi, pinned version) and so is the data: its
manylinux-policy.json, read as a file (importing auditwheel costs more than the check). For each ELF of the wheel:
a library it needs is inside the wheel (found through its RPATH/RUNPATH), on the policy's whitelist, or external
(the policy is not met); every symbol version it needs (but the dynamic loader's) must be one the policy lists;
a blacklisted symbol it takes from a whitelisted library fails the policy; an x86-64 file that needs an ISA level
above the baseline (GNU_PROPERTY_X86_ISA_1_NEEDED) meets only plain linux; a CPython extension that takes PyFPE_jbuf
too. The most compatible policy all of this allows is the wheel's.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from crosslane.errors import MissingPrerequisite
from crosslane.gates.elf import ElfInfo

LOADERS = ("ld64.so.2", "ld64.so.1")
PYFPE = frozenset({"PyFPE_jbuf", "PyFPE_dummy", "PyFPE_counter"})
X86_ISA_BASELINE = 1


@dataclass(frozen=True)
class Policy:
    name: str  # manylinux_2_17_x86_64
    aliases: tuple[str, ...]  # manylinux2014_x86_64
    priority: int  # higher: more compatible (linux: 0)
    symbol_versions: Mapping[str, frozenset[str]]  # "GLIBC" → {"GLIBC_2.17", …}
    whitelist: frozenset[str]
    blacklist: Mapping[str, frozenset[str]]


def _is_loader(library: str) -> bool:
    return "ld-linux" in library or library in LOADERS


@functools.cache
def _policy_file() -> Path:
    spec = importlib.util.find_spec("auditwheel")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        found = Path(location) / "policy" / "manylinux-policy.json"
        if found.is_file():
            return found
    raise MissingPrerequisite("auditwheel's manylinux-policy.json was not found", fix="pip install -e . "
                              "(auditwheel is a dependency of crosslane)")


@functools.cache
def policies(arch: str) -> tuple[Policy, ...]:
    """The manylinux policies for a wheel architecture (x86_64, aarch64, riscv64), least compatible first."""
    found = []
    for entry in json.loads(_policy_file().read_text()):
        linux = entry["name"] == "linux"
        if not linux and arch not in entry["symbol_versions"]:
            continue
        versions = {} if linux else {family: frozenset(f"{family}_{v}" for v in values)
                                     for family, values in entry["symbol_versions"][arch].items()}
        found.append(Policy(name=f"{entry['name']}_{arch}", aliases=tuple(f"{a}_{arch}" for a in entry["aliases"]),
                            priority=int(entry["priority"]), symbol_versions=versions,
                            whitelist=frozenset(entry["lib_whitelist"]),
                            blacklist={lib: frozenset(names) for lib, names in entry["blacklist"].items()}))
    return tuple(sorted(found, key=lambda p: p.priority))


def by_name(arch: str, name: str) -> Policy | None:
    return next((p for p in policies(arch) if name == p.name or name in p.aliases), None)


@dataclass(frozen=True)
class Member:
    """One ELF file of the wheel: where it lies in the unpacked tree, and its facts."""

    path: PurePosixPath
    info: ElfInfo


@dataclass(frozen=True, kw_only=True)
class Analysis:
    arch: str
    overall: Policy
    versions: Mapping[str, frozenset[str]]  # every needed symbol version, by family
    libraries: Mapping[str, tuple[str, ...]]  # a needed symbol version → the libraries it is needed from
    external: Mapping[str, tuple[str, ...]]  # policy name → libraries it would have to take from outside
    blacklisted: Mapping[str, tuple[str, ...]]  # policy name → "symbol of library" it forbids
    isa: tuple[str, ...]  # files that need an x86-64 ISA level above the baseline
    pyfpe: tuple[str, ...]
    members: int = 0  # ELF files analyzed (none: not a platform wheel at all)

    def why_not(self, policy: Policy) -> str:
        """What keeps the wheel from *policy*, in the words of the manylinux gate."""
        parts = []
        if self.external.get(policy.name):
            parts.append(f"needs {', '.join(self.external[policy.name])} (outside the policy's libraries; bundle "
                         "it: auditwheel repair)")
        newer = sorted(f"{v} of {lib}" for family, wanted in self.versions.items() if family in policy.symbol_versions
                       for v in wanted - policy.symbol_versions[family] for lib in self.libraries.get(v, ()))
        if newer:
            parts.append(f"needs {', '.join(newer[:4])}{' …' if len(newer) > 4 else ''} (newer than the policy "
                         "allows)")
        if self.blacklisted.get(policy.name):
            parts.append(f"uses symbols the policy forbids: {', '.join(self.blacklisted[policy.name])}")
        if policy.priority and self.isa:
            parts.append(f"needs an x86-64 ISA level above the baseline: {', '.join(self.isa)}")
        if policy.priority and self.pyfpe:
            parts.append(f"takes PyFPE_jbuf: {', '.join(self.pyfpe)}")
        return "; ".join(parts) or "the policy is met"


def _inside(member: Member, library: str, files: frozenset[PurePosixPath]) -> bool:
    """Does the loader find *library* inside the wheel, through the member's RPATH/RUNPATH ($ORIGIN-relative)?"""
    origin = member.path.parent
    for entry in (*member.info.rpath, *member.info.runpath):
        if not entry.startswith(("$ORIGIN", "${ORIGIN}")):
            continue
        folder = posixpath.normpath(posixpath.join(str(origin), entry.replace("${ORIGIN}", ".").replace(
            "$ORIGIN", ".", 1)))
        if PurePosixPath(folder) / library in files:
            return True
    return False


def _versions(members: Iterable[Member]) -> tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]]]:
    """Every symbol version the members need (but the dynamic loader's), by family, and whom each is needed from."""
    by_family: dict[str, set[str]] = {}
    libraries: dict[str, set[str]] = {}
    for member in members:
        for library, versions in member.info.version_needs_by_library:
            if _is_loader(library):
                continue
            for version in versions:
                by_family.setdefault(version.partition("_")[0], set()).add(version)
                libraries.setdefault(version, set()).add(library)
    return ({family: frozenset(v) for family, v in by_family.items()},
            {version: tuple(sorted(libs)) for version, libs in libraries.items()})


def _versions_allow(policy: Policy, versions: Mapping[str, frozenset[str]]) -> bool:
    return all(wanted <= policy.symbol_versions[family] for family, wanted in versions.items()
               if family in policy.symbol_versions) if policy.priority else True


def analyze(arch: str, members: Sequence[Member], files: Iterable[PurePosixPath]) -> Analysis:
    """The most compatible policy *members* (the wheel's ELF files; *files*: every file the wheel holds) meet."""
    every = policies(arch)
    tree = frozenset(files)
    versions, libraries = _versions(members)
    external: dict[str, tuple[str, ...]] = {}
    blacklisted: dict[str, tuple[str, ...]] = {}
    for policy in every[1:]:
        outside = sorted({lib for m in members for lib in m.info.needed if not _is_loader(lib)
                          and lib not in policy.whitelist and not _inside(m, lib, tree)})
        forbidden = sorted({f"{name} of {lib}" for m in members for lib in m.info.needed if lib in policy.blacklist
                            for name in policy.blacklist[lib] & (m.info.undefined | {"*"})})
        if outside:
            external[policy.name] = tuple(outside)
        if forbidden:
            blacklisted[policy.name] = tuple(forbidden)
    isa = tuple(sorted(str(m.path) for m in members if m.info.x86_isa_needed & ~X86_ISA_BASELINE))
    pyfpe = tuple(sorted(str(m.path) for m in members if m.info.is_extension_module and m.info.undefined & PYFPE))
    allowed = [p for p in every if not p.priority or (
        _versions_allow(p, versions) and p.name not in external and p.name not in blacklisted and not isa
        and not pyfpe)]
    # auditwheel takes each rule's best policy and then the least of them; the whitelists and version sets grow
    # with the priority (PEP 600, auditwheel validates its file for it), so that is the best policy meeting all.
    return Analysis(arch=arch, overall=max(allowed, key=lambda p: p.priority), versions=versions, libraries=libraries,
                    external=external,
                    blacklisted=blacklisted, isa=isa, pyfpe=pyfpe, members=len(members))
