"""The manylinux gate: a wheel's platform tag is what auditwheel's policies allow for its contents.

A wheel named manylinux_2_X promises that it loads on every glibc >= 2.X distribution with only the policy's
libraries present. gates/policy.py applies auditwheel's rules and policy file to the ELF facts the wheel gate
read (auditwheel's own analysis would parse every file again); a name that claims more than the most compatible
policy the contents meet is a FAIL naming what breaks the promise: a library outside the policy's whitelist that
the wheel does not bundle, a symbol version newer than the policy has, or a blacklisted symbol. A linux_* wheel
claims nothing and is only reported. A failed repair is explained the same way (blockers()). ldpaths() is where
auditwheel's repair looks libraries up: the target sysroot, never the host.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from crosslane.archs import ARCHS, Arch, info
from crosslane.gates import check_elf_arch, elf, policy, row
from crosslane.gates import wheel as wheel_gate
from crosslane.report import Row, Verdict

CHECK = "manylinux"
# linux_x86_64, manylinux2014_x86_64, manylinux_2_39_riscv64 → the architecture part
PLATFORM_ARCH = re.compile(r"(?:linux|manylinux\d+|(?:many|musl)linux_\d+_\d+)_(.+)")


def ldpaths(sysroot: Path | None, arch: Arch, prefixes: Sequence[Path] = ()) -> str:
    """Where auditwheel looks a wheel's DT_NEEDED up: the dependencies' lib folders, then the target sysroot's
    (never the host's)."""
    multiarch = info(arch).multiarch
    folders = [*(p / "lib" for p in prefixes)]
    if sysroot is not None:
        folders += [sysroot / "usr/lib" / multiarch, sysroot / "usr/lib"]
    return ":".join(str(f) for f in folders if f.is_dir())


def claimed(wheel: Path) -> list[str]:
    return [t for t in platform_tags(wheel) if t.startswith("manylinux")]


def blockers(wheel: Path) -> str:
    """What keeps *wheel* from the least demanding manylinux policy of its arch (for a repair that failed)."""
    platforms = {found.group(1) for t in platform_tags(wheel) if (found := PLATFORM_ARCH.fullmatch(t))}
    arch = next((a.arch for a in ARCHS.values() if wheel_arch(a.arch) in platforms), None)
    if arch is None:
        return f"{wheel.name}: no arch of crosslane's has its platform tag"
    analysis = analyze_wheel(wheel, arch)
    if isinstance(analysis, str):
        return analysis
    lowest = policy.policies(analysis.arch)[1]
    return f"{lowest.name}: {analysis.why_not(lowest)}"


def platform_tags(wheel: Path) -> list[str]:
    try:
        _, _, _, tags = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename:
        return []
    return sorted({t.platform for t in tags})


def analysis(root: Path, found: Sequence[elf.ElfInfo], arch: Arch) -> policy.Analysis:
    """auditwheel's policies applied to a wheel unpacked at *root*: *found* are its ELF files of *arch*."""
    files = [PurePosixPath(p.relative_to(root).as_posix()) for p in root.rglob("*") if not p.is_dir()]
    own = [policy.Member(PurePosixPath(f.path.relative_to(root).as_posix()), f) for f in found]
    return policy.analyze(wheel_arch(arch), own, files)


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
        found.append(analysis(root, [e for e in elfs if check_elf_arch(e, "", arch).verdict is Verdict.PASS], arch))
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
