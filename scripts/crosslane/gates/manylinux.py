"""The manylinux gate: a wheel's platform tag is what auditwheel's policies allow for its contents.

A wheel named manylinux_2_X promises that it loads on every glibc >= 2.X distribution with only the policy's
libraries present. gates/policy.py applies auditwheel's rules and policy file to the ELF facts the wheel gate
read (auditwheel's own analysis would parse every file again); a name that claims more than the most compatible
policy the contents meet is a FAIL naming what breaks the promise: a library outside the policy's whitelist that
the wheel does not bundle, a symbol version newer than the policy has, or a blacklisted symbol. A linux_* wheel
claims nothing and is only reported. A failed repair is explained by auditwheel's own analysis (blockers()),
with libraries looked up in the target sysroot, never the host.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from crosslane.archs import Arch, info
from crosslane.gates import elf, policy, row
from crosslane.gates import wheel as wheel_gate
from crosslane.report import Row, Verdict

CHECK = "manylinux"


def ldpaths(sysroot: Path | None, arch: Arch, prefixes: Sequence[Path] = ()) -> str:
    """Where auditwheel looks a wheel's DT_NEEDED up: the dependencies' lib folders, then the target sysroot's
    (never the host's)."""
    multiarch = info(arch).multiarch
    folders = [*(p / "lib" for p in prefixes)]
    if sysroot is not None:
        folders += [sysroot / "usr/lib" / multiarch, sysroot / "usr/lib"]
    return ":".join(str(f) for f in folders if f.is_dir())


def claimed(wheel: Path) -> list[str]:
    try:
        _, _, _, tags = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename:
        return []
    return sorted({t.platform for t in tags if t.platform.startswith("manylinux")})


def _analyze(wheel: Path, search: str):  # type: ignore[no-untyped-def]  # auditwheel has no type hints
    from auditwheel.error import AuditwheelError
    from auditwheel.wheel_abi import analyze_wheel_abi
    from auditwheel.wheeltools import get_wheel_architecture, get_wheel_libc

    logging.getLogger("auditwheel").setLevel(logging.WARNING)
    try:  # as `auditwheel show` does: a name without a libc (linux_*) leaves it to the analysis
        libc = get_wheel_libc(wheel.name)
    except AuditwheelError:
        libc = None
    try:
        return analyze_wheel_abi(libc, get_wheel_architecture(wheel.name), wheel, frozenset(),
                                 disable_isa_ext_check=False, allow_graft=False, args_ldpaths=search or None)
    except AuditwheelError as exc:
        return str(getattr(exc, "message", exc))


def _too_new(info, policy) -> list[str]:  # type: ignore[no-untyped-def]
    found = []
    for library, symbols in sorted(info.versioned_symbols.items()):
        for symbol in sorted(symbols):
            family, _, version = symbol.partition("_")
            allowed = policy.symbol_versions.get(family)
            if allowed is not None and version not in allowed:
                found.append(f"{symbol} of {library}")
    return found


def why_not(info, name: str) -> str:  # type: ignore[no-untyped-def]
    """What keeps the wheel's contents from policy *name*: libraries, symbol versions, blacklisted symbols."""
    policy = info.policies.get_policy_by_name(name)
    reference = info.external_refs.get(policy.name)
    parts = []
    if reference is not None and reference.libs:
        parts.append(f"needs {', '.join(sorted(reference.libs))} (outside the policy's libraries; bundle it: "
                     "auditwheel repair)")
    newer = _too_new(info, policy)
    if newer:
        parts.append(f"needs {', '.join(newer[:4])}{' …' if len(newer) > 4 else ''} (newer than the policy allows)")
    if reference is not None and reference.blacklist:
        parts.append("uses symbols the policy forbids: " + ", ".join(
            f"{sym} of {lib}" for lib, syms in sorted(reference.blacklist.items()) for sym in sorted(syms)))
    return "; ".join(parts) or "auditwheel's policy is not satisfied"


def blockers(wheel: Path, search: str) -> str:
    """What keeps *wheel* from the most compatible manylinux policy (for a repair that failed)."""
    info = _analyze(wheel, search)
    if isinstance(info, str):
        return info
    return f"{info.policies.lowest.name}: {why_not(info, info.policies.lowest.name)}"


def members(root: Path, found: Sequence[elf.ElfInfo]) -> tuple[list[policy.Member], list[PurePosixPath]]:
    """The ELF files of a wheel unpacked at *root* as policy members, and every file it holds."""
    files = [PurePosixPath(p.relative_to(root).as_posix()) for p in root.rglob("*") if not p.is_dir()]
    return [policy.Member(PurePosixPath(f.path.relative_to(root).as_posix()), f) for f in found], files


def judge(name: str, arch: Arch, analysis: policy.Analysis) -> Row | None:
    """PASS when every manylinux tag in *name* is one the analysis allows; None for a name that claims none."""
    tags = claimed(Path(name))
    if not tags:
        return None
    if not analysis.members:
        return row(name, arch, CHECK, Verdict.FAIL, f"its name claims {', '.join(tags)} but it holds no ELF file for "
                                                    f"this arch (auditwheel: not a platform wheel)")
    overall = analysis.overall
    lies = []
    for tag in tags:
        wanted = policy.by_name(analysis.arch, tag)
        if wanted is None:
            lies.append(f"{tag} is no policy auditwheel knows for this arch")
        elif wanted.priority > overall.priority:
            lies.append(f"{tag}: {analysis.why_not(wanted)}")
    if lies:
        return row(name, arch, CHECK, Verdict.FAIL,
                   f"its name claims more than its contents allow (auditwheel's policies: {overall.name}): "
                   f"{'; '.join(lies)}")
    return row(name, arch, CHECK, Verdict.PASS, f"{', '.join(tags)}: auditwheel's policies allow {overall.name}")


def wheel_arch(arch: Arch) -> str:
    return info(arch).wheel_platform.removeprefix("linux_")


def analyze_wheel(wheel: Path, arch: Arch) -> policy.Analysis | str:
    """The policy analysis of a wheel on its own (unpacked safely by the wheel gate), or why it has none."""
    found: list[policy.Analysis] = []

    def analyze(root: Path, elfs: list[elf.ElfInfo]) -> list[Row]:
        own = [e for e in elfs if e.arch is not None and e.arch.arch is arch]
        found.append(policy.analyze(wheel_arch(arch), *members(root, own)))
        return []

    rows = wheel_gate.verify_wheel(wheel, arch, extra=analyze)
    if found:
        return found[0]
    failed = [r.reason for r in rows if r.verdict is Verdict.FAIL]
    return failed[0] if failed else "the wheel gate did not unpack it"


def tag_row(wheel: Path, arch: Arch) -> Row | None:
    """judge() for a wheel on its own."""
    if not claimed(wheel):
        return None
    analysis = analyze_wheel(wheel, arch)
    if isinstance(analysis, str):
        return row(wheel.name, arch, CHECK, Verdict.FAIL, f"cannot analyze it: {analysis}")
    return judge(wheel.name, arch, analysis)
