"""Host tools: the pinned cmake and ninja, the compilers per arch (and whether a gcc links C++ against the
sysroot), qemu-user."""

from __future__ import annotations

from crosslane.errors import MissingPrerequisite
from crosslane.features.probes import Probes, Tool
from crosslane.gates.portability import dotted, target_glibc
from crosslane.guest.sysroot import find as find_sysroot
from crosslane.host import buildtools
from crosslane.preflight.checks.base import Outcome, Subject, setup_fix
from crosslane.report import Verdict

# Minimum host tool versions, and why: onnxruntime-genai needs cmake >= 3.26; ninja 1.10 is the first
# with the restat/dyndep features CMake's Ninja generator relies on; qemu 7.2 is the first with RVV 1.0.
# Compared as numeric release tuples, stdlib only: packaging's specifiers would be imports a no-op build pays for,
# and a tool's version here is a release number (a suffix such as "-14" or "rc1" does not change the verdict).
MINIMUMS = {"cmake": (3, 26), "ninja": (1, 10), "qemu": (7, 2)}


def release(version: str | None) -> tuple[int, ...] | None:
    """The leading numeric release of *version* ("3.31.6-1" -> (3, 31, 6)); None when it does not start with one."""
    parts = []
    for part in (version or "").split("."):
        digits = len(part) - len(part.lstrip("0123456789"))
        if digits == 0:
            break
        parts.append(int(part[:digits]))
        if digits < len(part):
            break
    return tuple(parts) or None


def at_least(version: str | None, minimum: tuple[int, ...]) -> bool:
    found = release(version)
    return found is not None and found >= minimum


def same_series(version: str | None, series: str | int) -> bool:
    """*version* is in the *series* (19 holds 19.1.7; "12.2" holds 12.2.0), as a PEP 440 `==series.*` says."""
    found, wanted = release(version), release(str(series))
    return found is not None and wanted is not None and found[:len(wanted)] == wanted


def _spec_text(minimum: tuple[int, ...]) -> str:
    return ">=" + ".".join(map(str, minimum))


def _versioned(tool: Tool, kind: str, pinned: str | None, minimum: tuple[int, ...], fix: str) -> Outcome:
    if tool.path is None or tool.version is None:
        return Outcome(status=Verdict.FAIL, message=tool.problem or f"{tool.name}: no version", fix=tool.fix or fix)
    if pinned is not None and tool.version != pinned:
        return Outcome(status=Verdict.FAIL,
                       message=f"{tool.path} reports {kind} {tool.version}, versions.toml pins {pinned}", fix=fix)
    if not at_least(tool.version, minimum):
        return Outcome(status=Verdict.FAIL, message=f"{kind} {tool.version} found; requires {_spec_text(minimum)}",
                       fix=f"raise tools.{kind} in versions.toml" if pinned else fix)
    return Outcome(status=Verdict.PASS, message=f"{kind} {tool.version} ({tool.path})")


def cmake(probes: Probes, subject: Subject) -> Outcome:
    return _buildtool(probes, subject, "cmake")


def ninja(probes: Probes, subject: Subject) -> Outcome:
    return _buildtool(probes, subject, "ninja")


def _buildtool(probes: Probes, subject: Subject, kind: str) -> Outcome:
    tools = probes.config.tools
    pinned = tools.cmake if kind == "cmake" else tools.ninja
    fix = setup_fix(subject.arch)
    found = probes.buildtools()
    if found is None:
        return Outcome(status=Verdict.FAIL, message=f"{kind} {pinned} not installed in {buildtools.tools_dir(tools)}",
                       fix=fix)
    path = found.cmake if kind == "cmake" else found.ninja
    return _versioned(probes.pinned(kind, path, fix), kind, pinned, MINIMUMS[kind], fix)


def compiler(probes: Probes, subject: Subject) -> Outcome:
    assert subject.component is not None
    found = probes.compiler(subject.component, subject.arch)
    chain = probes.config.toolchain_for(subject.component, subject.arch)
    if isinstance(found, MissingPrerequisite):
        return Outcome(status=Verdict.FAIL, message=found.message, fix=found.fix or setup_fix(subject.arch))
    if chain.version is not None and not same_series(found.version, chain.version):
        return Outcome(status=Verdict.FAIL,
                       message=f"{found.cc[0]} is {found.family} {found.version}; toolchains.{chain.name} "
                               f"wants version {chain.version}", fix=setup_fix(subject.arch))
    return Outcome(status=Verdict.PASS,
                   message=f"toolchain {chain.name}: {found.family} {found.version} ({found.cc[0]})")


def sysroot_link_applies(probes: Probes, subject: Subject) -> str | None:
    assert subject.component is not None
    found = probes.compiler(subject.component, subject.arch)
    if isinstance(found, MissingPrerequisite):
        return "no compiler (see the compiler check)"
    if found.family != "gcc":
        return f"{found.family} links the sysroot's own C library (--sysroot); gcc may link its own"
    if find_sysroot(probes.config.sysroot, subject.arch) is None:
        return f"needs the {subject.arch} sysroot (see the sysroot check)"
    return None


def sysroot_link(probes: Probes, subject: Subject) -> Outcome:
    """A gcc with the sysroot's headers but its own older glibc cannot link C++ (undefined __isoc23_strtol): the
    build would fail at its first link, after its compiles, as "compile failed"."""
    assert subject.component is not None
    arch, component = subject.arch, subject.component
    found = probes.compiler(component, arch)
    root = find_sysroot(probes.config.sysroot, arch)
    assert not isinstance(found, MissingPrerequisite) and root is not None
    target = dotted(target_glibc(root.path))
    link = probes.sysroot_link(found, root.path)
    who = f"{found.cxx[0]} ({found.family} {found.version})"
    if link.linked:
        own = "" if link.own in (None, target) else f", with its own glibc {link.own}"
        return Outcome(status=Verdict.PASS, message=f"{who} links C++ against the {arch} sysroot (glibc {target}){own}")
    how = f": it compiles with glibc {link.headers} headers and links its own glibc {link.own}" \
        if link.headers and link.own and link.headers != link.own else ""
    clang = next((name for name, chain in probes.config.toolchains.items() if chain.family == "clang"), "clang")
    return Outcome(status=Verdict.FAIL,
                   message=f"{who} cannot link C++ against the {arch} sysroot (glibc {target}){how} "
                           f"({link.detail})",
                   fix=f'use clang: toolchain = {{ {arch} = "{clang}" }} in [components.{component}] (or toolchain = '
                       f'"{clang}" in [arches.{arch}]); clang links the sysroot\'s own glibc')


def qemu(probes: Probes, subject: Subject) -> Outcome:
    return _versioned(probes.qemu(subject.arch), "qemu", None, MINIMUMS["qemu"], setup_fix(subject.arch))
