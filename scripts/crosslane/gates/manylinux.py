"""The manylinux gate: a wheel's platform tag is what auditwheel's analysis of its contents allows.

A wheel named manylinux_2_X promises that it loads on every glibc >= 2.X distribution with only the policy's
libraries present. auditwheel's own analysis (in-process, the pinned version; libraries looked up in the
target sysroot, never the host) gives the most compatible tag the contents satisfy. A name that claims more
than that is a FAIL naming what breaks the promise: a library outside the policy's whitelist that the wheel
does not bundle, a symbol version newer than the policy has, or a blacklisted symbol. A linux_* wheel claims
nothing and is only reported.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from crosslane.archs import Arch, info
from crosslane.gates import row
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


def tag_row(wheel: Path, arch: Arch, search: str) -> Row | None:
    """PASS when every manylinux tag in the name is one auditwheel allows; None for a name that claims none."""
    tags = claimed(wheel)
    if not tags:
        return None
    info = _analyze(wheel, search)
    if isinstance(info, str):
        return row(wheel.name, arch, CHECK, Verdict.FAIL, f"auditwheel cannot analyze it: {info}")
    overall = info.overall_policy
    lies = []
    for tag in tags:
        try:
            policy = info.policies.get_policy_by_name(tag)
        except LookupError:
            lies.append(f"{tag} is no policy auditwheel knows for this arch")
            continue
        if policy.priority > overall.priority:
            lies.append(f"{tag}: {why_not(info, policy.name)}")
    if lies:
        return row(wheel.name, arch, CHECK, Verdict.FAIL,
                   f"its name claims more than its contents allow (auditwheel: {overall.name}): {'; '.join(lies)}")
    return row(wheel.name, arch, CHECK, Verdict.PASS, f"{', '.join(tags)}: auditwheel's analysis allows "
                                                      f"{overall.name}")
